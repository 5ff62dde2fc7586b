"""Real local servers for tests: the llama.cpp OpenAI-compatible server (``llama_server``,
from :mod:`searchain.llm.llama_server`, which the benches start too), and a fault-injecting
HTTP server (500s, 429s, hangs) — the one place a stand-in is used, because a real model
server cannot be made to fail on cue."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from searchain.llm.llama_server import free_port, llama_server

__all__ = ["FaultServer", "chat_body", "completion_body", "free_port", "llama_server"]


def completion_body(text: str = "ok") -> dict:
    return {
        "id": "cmpl-test",
        "object": "text_completion",
        "created": 0,
        "model": "fault",
        "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }


def chat_body(text: str = "ok") -> dict:
    """A chat completion as an endpoint that returns no log-probabilities sends it."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fault",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }


class FaultServer:
    """Answers requests by a script: each entry is ``("ok", text)``, ``("chat", text)`` (a
    chat completion without log-probs), ``("status", code)``, ``("status", code, headers)``
    or ``("hang", seconds)``; the last entry repeats."""

    def __init__(self, script: list[tuple]) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(
                    {"path": self.path, "body": body, "headers": dict(self.headers)}
                )
                step = server.script[min(len(server.requests), len(server.script)) - 1]
                if step[0] == "hang":
                    time.sleep(step[1])
                    return
                if step[0] in ("ok", "chat"):
                    body = completion_body if step[0] == "ok" else chat_body
                    payload = json.dumps(body(step[1])).encode()
                    self.send_response(200)
                else:
                    payload = json.dumps({"error": {"message": f"injected {step[1]}"}}).encode()
                    self.send_response(step[1])
                    for k, v in (step[2] if len(step) > 2 else {}).items():
                        self.send_header(k, v)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
