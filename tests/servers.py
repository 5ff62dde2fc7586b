"""Real local servers for tests: the llama.cpp OpenAI-compatible server, and a fault-injecting
HTTP server (500s, 429s, hangs) — the one place a stand-in is used, because a real model
server cannot be made to fail on cue."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from searchain.llm.local import default_model_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_server(
    n_ctx: int = 2048,
    alias: str = "gemma-3-270m",
    n_threads: int = 2,
    model: Path | None = None,
) -> Iterator[str]:
    """Start ``python -m llama_cpp.server`` on 127.0.0.1 with the embedded model (or the GGUF
    ``model``: chat models are served with their own chat template); yield the base URL
    (``http://127.0.0.1:PORT/v1``) and stop it afterwards."""
    port = free_port()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"llama-server-{port}.log"
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model or default_model_path()),
        "--model_alias", alias,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(n_threads),
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama_cpp.server did not come up in 120 s")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


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
