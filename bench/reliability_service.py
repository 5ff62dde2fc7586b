"""Figures of bench/reliability.py about the HTTP service: per-request options that can name a
path or URL, canary secrets in every artifact and outbound request, the answer slot after a
504, and 500s under Schemathesis. The service is the real one (``searchain.server``) with
the OpenAI client, against searchain.net.faults's endpoints."""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.kit import Figure, part_of
from bench.reliability_runs import items
from searchain.eval.runner import MANIFEST, RESULTS, prepare_run_dir, run, runtime_environment
from searchain.llm import RetryPolicy
from searchain.llm.openai_backend import OpenAILLM
from searchain.methods.base import traced
from searchain.methods.retrieve_read import RetrieveRead
from searchain.net.faults import HostileServer, Listener, LLMFaultServer
from searchain.net.safe_http import HttpPolicy, fetch
from searchain.retrieval.demo import default_index
from searchain.server import Engine, Settings, create_app, running
from searchain.server.request_options import SERVER_SIDE_OPTIONS, AskOptions
from searchain.tools.http import HttpTool

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

CANARIES = {
    "API key": "sk-canary-key-5f1e2d3c4b5a69788796a5b4",
    "URL password": "pw-canary-7d6c5b4a3f2e",
    "API token": "tok-canary-0a9b8c7d6e5f",
    "tool static param": "tool-canary-1b2c3d4e5f6a",
}
FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02)


def naming_options() -> list[str]:
    """AskOptions fields whose value is a free string (could name a path, URL or model)."""
    out = []
    for name, prop in AskOptions.model_json_schema()["properties"].items():
        for kind in prop.get("anyOf", [prop]):
            if kind.get("type") == "string" and "enum" not in kind and "const" not in kind:
                out.append(name)
    return out


def _post(url: str, token: str | None, method: str, options: dict[str, Any]) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"question": "Who wrote Hamlet?", "method": method, "options": options}
    return httpx.post(f"{url}/v1/ask", json=body, headers=headers, timeout=60)


def options() -> list[Figure]:
    free = naming_options()
    with LLMFaultServer("ok") as llm_srv, Listener() as attacker:
        engine = Engine(OpenAILLM("m", base_url=llm_srv.url, retry=FAST), default_index())
        with running(create_app(engine, Settings(runs_dir=None))) as url:
            accepted = [
                name for name in sorted(SERVER_SIDE_OPTIONS)
                if _post(url, None, "thinkcite", {name: f"openai:x@{attacker.url}/v1"}).status_code
                != 422
            ]  # fmt: skip
    value = f"{len(free)} in the schema {free or ''}; {len(accepted)} accepted live, "
    value += f"{attacker.connections} connects to the attacker"
    ok = not free and not accepted and attacker.connections == 0
    return [Figure("per-request options that can name a path or URL", value, "0", ok)]


@contextlib.contextmanager
def captured_logs() -> Iterator[list[str]]:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler, root = Keep(logging.DEBUG), logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(old)


def canaries() -> list[Figure]:
    """Every canary, counted in every artifact a run and the service leave, and in what
    reached servers other than the configured model endpoint."""
    key, password = CANARIES["API key"], CANARIES["URL password"]
    basic = base64.b64encode(f"user:{password}".encode()).decode()  # the password on the wire
    token, tool_key = CANARIES["API token"], CANARIES["tool static param"]
    artifacts: dict[str, str] = {}
    old_env = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = key
    try:
        with (
            tempfile.TemporaryDirectory() as tmp, captured_logs() as logs,
            LLMFaultServer("ok") as llm_srv, Listener() as attacker,
            HostileServer() as web, HostileServer() as other,
        ):  # fmt: skip
            base_url = llm_srv.url.replace("http://", f"http://user:{password}@")
            llm = OpenAILLM("fault", base_url=base_url, retry=FAST, timeout=5)
            runs = Path(tmp)
            # An evaluation: its manifest names the endpoint, one item fails on a 500 that
            # quotes the request's credentials.
            config = {"llm": "openai", "model": "fault", "base_url": base_url,
                      "options": {"thinkcite": {"api_key": key}}}  # fmt: skip
            out = prepare_run_dir(runs / "run", config, runtime_environment(llm))
            method = {"retrieve-read": traced(RetrieveRead(llm, default_index(), k=2), llm)}
            run(items(2), method, out, concurrency=1)
            llm_srv.mode = "echo_500"
            run(items(3), method, out, concurrency=1)
            # The service: an answer, a failure, the attack of issue 20, the run browser.
            engine = Engine(llm, default_index())
            bodies = []
            with running(create_app(engine, Settings(token=token, runs_dir=runs))) as url:
                bodies.append(_post(url, token, "retrieve-read", {}).text)
                llm_srv.mode = "ok"
                bodies.append(_post(url, token, "retrieve-read", {}).text)
                attack = {"reward_reference": f"openai:x@{attacker.url}/v1"}
                bodies.append(_post(url, token, "thinkcite", attack).text)
                auth = {"Authorization": f"Bearer {token}"}
                for path in ("/v1/runs", "/v1/runs/run", "/v1/runs/run/items/q0002", "/healthz"):
                    bodies.append(httpx.get(url + path, headers=auth).text)
            # A tool with a static key, against a server that echoes its query; a redirect
            # to another origin with the caller's Authorization header.
            policy = HttpPolicy(allow_private=(f"127.0.0.1:{web.port}", f"127.0.0.1:{other.port}"))
            params = {"type": "object", "properties": {"q": {"type": "string"}}}
            tool = HttpTool("echo", "Echo.", params, url=web.url("echo"),
                            static_params={"api_key": tool_key}, policy=policy)  # fmt: skip
            output = tool.invoke({"q": "x"})
            fetch(web.url("redirect", to=other.url("echo-headers")), policy=policy,
                  headers={"Authorization": f"Bearer {key}"})  # fmt: skip
            artifacts = {
                "manifest.json": (out / MANIFEST).read_text(),
                "results.jsonl": (out / RESULTS).read_text(),
                "HTTP bodies": "\n".join(bodies),
                "logs": "\n".join(logs),
                "tool output": output.text + str(output.meta),
                "outbound requests": attacker.received.decode("latin-1") + str(other.requests),
            }
            # httpx turns URL user-info into Basic auth, which then replaces the Bearer key.
            delivered = any(basic in str(r["headers"]) for r in llm_srv.requests)
    finally:
        if old_env is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = old_env
    figures = []
    forms = {**CANARIES, "URL password (Basic auth)": basic}
    for where, text in artifacts.items():
        found = {what: text.count(value) for what, value in forms.items() if value in text}
        figures.append(Figure(f"canary occurrences in {where}", str(sum(found.values()))
                              + (f" {found}" if found else ""), "0", not found))  # fmt: skip
    name = "credentials sent to the configured endpoint"
    figures.append(Figure(name, str(delivered), "True", delivered))
    return figures


def slot_release(timeout: float = 1.0) -> list[Figure]:
    """Issue 20's case: a model endpoint that accepts and never answers, the default retry
    policy (4 attempts x 120 s), two slots. Seconds from the second 504 until both are free."""
    with Listener() as endpoint:
        engine = Engine(OpenAILLM("m", base_url=f"{endpoint.url}/v1"), default_index(),
                        max_concurrent=2)  # fmt: skip
        with running(create_app(engine, Settings(runs_dir=None, timeout=timeout))) as url:
            statuses: list[int] = []
            threads = [threading.Thread(target=lambda: statuses.append(
                _post(url, None, "retrieve-read", {}).status_code)) for _ in range(2)]  # fmt: skip
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            t0 = time.monotonic()
            while httpx.get(f"{url}/healthz").json()["busy"] and time.monotonic() - t0 < 60:
                time.sleep(0.05)
            freed = time.monotonic() - t0
            after = _post(url, None, "retrieve-read", {}).status_code
    ok = statuses == [504, 504] and freed <= 5 and after != 429
    value = f"{freed:.2f} s (answers {statuses}, next request {after})"
    return [Figure("slot release after a 504", value, "≤ 5 s", ok)]


def schemathesis_500s(max_examples: int = 15) -> list[Figure]:
    """Fuzz every endpoint from the service's own OpenAPI schema; count the 500s."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode

    token = "fuzz-token-0123456789"
    auth = {"Authorization": f"Bearer {token}"}
    calls, errors = 0, []
    with tempfile.TemporaryDirectory() as tmp, LLMFaultServer("ok") as llm_srv:
        run(items(3), {"retrieve-read": traced(RetrieveRead(
            OpenAILLM("m", base_url=llm_srv.url, retry=FAST), default_index(), k=2))},
            Path(tmp) / "run", concurrency=1)  # fmt: skip
        engine = Engine(OpenAILLM("m", base_url=llm_srv.url, retry=FAST), default_index())
        app = create_app(engine, Settings(token=token, runs_dir=tmp, timeout=5))
        with running(app) as url:
            schema = schemathesis.openapi.from_url(f"{url}/openapi.json", headers=auth)
            operations = [result.ok() for result in schema.get_all_operations()]
            for op in operations:  # each endpoint on its own: none is left unvisited
                for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

                    @given(case=op.as_strategy(generation_mode=mode))
                    @settings(max_examples=max_examples, deadline=None, derandomize=True,
                              suppress_health_check=list(HealthCheck))  # fmt: skip
                    def one(case: Any) -> None:
                        nonlocal calls
                        response = case.call(base_url=url, headers=auth, timeout=60)
                        calls += 1
                        if response.status_code >= 500 and response.status_code not in (502, 504):
                            errors.append(f"{case.method} {case.path}: {response.status_code}")

                    # An endpoint without parameters has no invalid input to make.
                    with contextlib.suppress(Unsatisfiable):
                        one()
    value = f"{len(errors)} of {calls} requests to {len(operations)} endpoints"
    value += f" {errors[:3]}" if errors else ""
    return [Figure("500s under Schemathesis, every endpoint", value, "0", not errors)]


if __name__ == "__main__":
    part_of(__doc__, "python -m bench.reliability --only canaries,options,slot,schemathesis")
