"""The HTTP service against the real embedded model and the demo BM25 index: ask, stream,
the concurrency bound (429), the timeout (504, and the work really stops), auth, limits, and
browsing a run made by the real `searchain eval`."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from searchain.cli import app as cli_app
from searchain.eval import report
from searchain.eval.runner import read_results
from searchain.methods import catalog
from searchain.retrieval.demo import default_index
from searchain.server import Engine, check_bind
from searchain.trace_extras import AnswerExtras
from searchain.types import Trace
from serverkit import FAST_SEARCHAIN, QUESTION, make_engine, make_run, serving

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return make_engine(tmp_path_factory.mktemp("llm") / "calls.sqlite", max_concurrent=1)


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    make_run(runs)
    (runs / "not-a-run").mkdir()  # no results, no manifest: not listed
    outside = tmp_path_factory.mktemp("outside")
    make_run(outside, name="secret", limit=1)
    (runs / "evil").symlink_to(outside / "secret")  # a link leading out is refused
    return runs


@pytest.fixture(scope="module")
def url(engine: Engine, runs_dir: Path) -> Iterator[str]:
    with serving(engine, runs_dir=runs_dir) as u:
        yield u


def sse_events(response: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    event = "message"
    for line in response.iter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            yield event, json.loads(line[6:])


def hotpot_questions(data_dir: Path, n: int) -> list[str]:
    with (data_dir / "hotpotqa" / "dev_subsampled.jsonl").open() as f:
        return [json.loads(next(f))["question_text"] for _ in range(n)]


def llm_calls(engine: Engine) -> int:
    u = engine.llm.inner.usage
    return u.llm_calls + u.cached_calls


# -- answering ----------------------------------------------------------------------------


def test_ask_retrieve_read_returns_a_real_trace(url: str) -> None:
    res = httpx.post(
        f"{url}/v1/ask", json={"question": QUESTION, "method": "retrieve-read"}, timeout=120
    )
    assert res.status_code == 200, res.text
    body = res.json()
    trace = Trace.from_dict(body)
    assert trace.method == "retrieve-read" and trace.question == QUESTION
    expected = [p.id for p in default_index().search(QUESTION, 5)]
    assert [p.id for p in trace.references] == expected
    # one answering call, and the reader's where the reply named no short answer
    read_out = AnswerExtras.of(trace).short_answer_read
    calls = trace.usage.llm_calls + trace.usage.cached_calls
    assert trace.final_content and calls == 1 + bool(read_out)
    if read_out and read_out["used"]:
        assert trace.answer == read_out["span"]
    ids = {p.id for p in trace.references}
    assert all(c.passage_id in ids for c in trace.citations if c.passage_id)
    assert trace.to_dict() == body  # nothing lost or added on the way


def test_ask_runs_a_costly_confidence_check_when_asked(url: str) -> None:
    payload = {"question": QUESTION, "method": "retrieve-read", "confidence_checks": ["nli"]}
    res = httpx.post(f"{url}/v1/ask", json=payload, timeout=180)
    assert res.status_code == 200, res.text
    trace = Trace.from_dict(res.json())
    supported = trace.meta["confidence_checks"]["nli"]["answer_supported"]
    assert trace.confidence is not None and 0.0 <= supported <= 1.0
    assert trace.confidence.signals["answer_supported"] == supported
    assert trace.confidence.cost["llm_calls"] >= 1  # the judge's calls, said


@pytest.mark.slow
def test_stream_reports_progress_then_the_trace(url: str) -> None:
    payload = {"question": QUESTION, "method": "searchain", "options": FAST_SEARCHAIN}
    with httpx.stream("POST", f"{url}/v1/ask/stream", json=payload, timeout=180) as res:
        assert res.status_code == 200
        assert res.headers["content-type"].startswith("text/event-stream")
        events = list(sse_events(res))
    kinds = [k for k, _ in events]
    assert kinds[-1] == "trace" and set(kinds[:-1]) == {"progress"}
    progress = [d for k, d in events if k == "progress"]
    trace = events[-1][1]
    assert progress[0]["event"] == "start" and progress[0]["question"] == QUESTION
    assert progress[-1] == {**progress[-1], "event": "answer", "text": trace["answer"]}
    rounds = [e["n"] for e in progress if e["event"] == "round"]
    assert rounds == list(range(1, trace["rounds"] + 1))
    # Each "chain" event lists exactly the queries of that round's branch in the final trace.
    for e in (e for e in progress if e["event"] == "chain"):
        branch = [n["query"] for n in trace["nodes"] if n["meta"].get("round") == e["n"]]
        assert e["queries"] == branch
    # Each "node" event (feedback applied) matches the node's final source.
    by_id = {n["id"]: n for n in trace["nodes"]}
    for e in (e for e in progress if e["event"] == "node"):
        assert by_id[e["id"]]["source"] == e["source"]
    assert Trace.from_dict(trace).nodes[0].source == "question"


@pytest.mark.slow
def test_concurrency_bound_answers_429_while_full(url: str, engine: Engine, data_dir: Path) -> None:
    assert engine.max_concurrent == 1
    question = hotpot_questions(data_dir, 3)[2]  # not asked elsewhere: a real, slow call
    payload = {"question": question, "options": FAST_SEARCHAIN}
    got: list[tuple[str, dict[str, Any]]] = []
    started = threading.Event()

    def hold() -> None:
        with httpx.stream("POST", f"{url}/v1/ask/stream", json=payload, timeout=180) as res:
            for item in sse_events(res):
                got.append(item)
                started.set()

    t = threading.Thread(target=hold)
    t.start()
    assert started.wait(60)  # "start" arrived: the answer is under way, the slot is taken
    busy = httpx.post(f"{url}/v1/ask", json={"question": "Who?", "method": "retrieve-read"})
    assert busy.status_code == 429, busy.text
    assert "busy" in busy.json()["error"] and busy.headers["retry-after"] == "5"
    assert httpx.post(f"{url}/v1/ask/stream", json={"question": "Who?"}).status_code == 429
    assert httpx.get(f"{url}/healthz").json()["busy"] == 1
    t.join(180)
    assert got[-1][0] == "trace" and got[-1][1]["question"] == question
    # The slot is free again once the answer is done.
    again = httpx.post(f"{url}/v1/ask", json={"question": QUESTION, "method": "retrieve-read"})
    assert again.status_code == 200


@pytest.mark.slow
def test_timeout_answers_504_and_stops_the_work(engine: Engine, data_dir: Path) -> None:
    question = hotpot_questions(data_dir, 4)[3]
    with serving(engine, runs_dir=None, timeout=0.3) as u:
        before = llm_calls(engine)
        res = httpx.post(
            f"{u}/v1/ask", json={"question": question, "options": FAST_SEARCHAIN}, timeout=60
        )
        assert res.status_code == 504, res.text
        assert res.json() == {"error": "the answer took longer than 0.3 s and was stopped"}
        deadline = time.monotonic() + 60
        while httpx.get(f"{u}/healthz").json()["busy"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert httpx.get(f"{u}/healthz").json()["busy"] == 0
    # Cancelled before the reader's first call: only the chain generation in flight ran
    # (a full SearChain answer makes at least 3 calls: chain, reader, tracing).
    assert llm_calls(engine) - before <= 1


# -- auth and limits ----------------------------------------------------------------------


def test_token_is_required_when_set(engine: Engine) -> None:
    with serving(engine, runs_dir=None, token="s3cret") as u:
        res = httpx.get(f"{u}/v1/methods")
        assert res.status_code == 401 and res.headers["www-authenticate"] == "Bearer"
        assert res.json() == {"error": "missing or wrong bearer token"}
        wrong = {"Authorization": "Bearer nope"}
        assert httpx.get(f"{u}/v1/runs", headers=wrong).status_code == 401
        # Checked before the body is read: no validation error for an unauthenticated client.
        assert httpx.post(f"{u}/v1/ask", content=b"{oops").status_code == 401
        ok = httpx.get(f"{u}/v1/methods", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert [m["name"] for m in ok.json()["methods"]] == list(catalog.method_names())
        # Each method lists its settings, as `searchain settings --json` does (issue 28)
        listed = {m["name"]: m["settings"] for m in ok.json()["methods"]}
        rebel = {s["name"]: s for s in listed["rebel"]}
        assert rebel["max_depth"]["default"] == 3 and rebel["max_depth"]["remote"] is True
        assert rebel["tools"]["remote"] is False  # a file: the operator's, not a client's
        assert [s["name"] for s in listed["searchain-no-ir"]] == [
            s.name for s in catalog.method_settings("searchain")
        ]
        health = httpx.get(f"{u}/healthz").json()  # liveness needs no token
        assert health["auth"] is True and health["status"] == "ok"
        assert httpx.get(f"{u}/").status_code == 200  # the page loads, then asks for the token
        schema = httpx.get(f"{u}/openapi.json").json()
        assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_non_loopback_needs_a_token() -> None:
    with pytest.raises(ValueError, match="SEARCHAIN_API_TOKEN"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", "s3cret")
    check_bind("127.0.0.1", None)
    env = {k: v for k, v in os.environ.items() if k != "SEARCHAIN_API_TOKEN"}
    res = CliRunner().invoke(cli_app, ["serve", "--host", "0.0.0.0"], env=env)
    assert res.exit_code == 1 and "refusing to bind '0.0.0.0'" in res.output


LONG = "x" * 2001


@pytest.mark.parametrize(
    ("kwargs", "status", "error"),
    [
        ({"content": b"x" * 70_000}, 413, "request body over 65,536 bytes"),
        ({"content": iter([b"{" + b" " * 40_000] * 2)}, 413, "request body over"),  # chunked
        ({"content": b"{oops", "headers": {"content-type": "application/json"}}, 422, "JSON"),
        # Not UTF-8 at all (Schemathesis found it): still a 422, not an undocumented 400.
        (
            {"content": b".\xff\\\xfe", "headers": {"content-type": "application/json"}},
            422,
            "not valid JSON",
        ),
        ({"json": ["q"]}, 422, "invalid request"),
        ({"json": {"question": LONG}}, 422, "at most 2000 characters"),
        ({"json": {"question": "   "}}, 422, "question is empty"),
        ({"json": {"question": "q", "method": "nope"}}, 422, "body.method"),
        ({"json": {"question": "q", "extra": 1}}, 422, "body.extra"),
        ({"json": {"question": "q", "options": {"r_max": 0}}}, 422, "options.r_max"),
        ({"json": {"question": "q", "options": {"template": "/etc/passwd"}}}, 422, "server"),
        ({"json": {"question": "q", "options": {"x": [1]}}}, 422, "options.x"),
        ({"json": {"question": "q", "options": {"bogus": 1}}}, 422, "bogus"),
        ({"json": {"question": "東京 " * 600}}, 422, "tokens long"),
        ({"json": {"question": "q", "confidence_checks": ["entails"]}}, 422, "confidence_checks"),
    ],
)
def test_limits_and_validation(url: str, kwargs: dict[str, Any], status: int, error: str) -> None:
    res = httpx.post(f"{url}/v1/ask", **kwargs)
    assert res.status_code == status, res.text
    assert res.headers["content-type"] == "application/json"
    assert error in res.json()["error"] and set(res.json()) == {"error"}
    assert "Traceback" not in res.text


def test_unknown_paths_are_json_errors(url: str) -> None:
    res = httpx.get(f"{url}/v1/nowhere")
    assert res.status_code == 404 and res.json() == {"error": "Not Found"}
    assert httpx.delete(f"{url}/v1/ask").status_code == 405


# -- runs ---------------------------------------------------------------------------------


def test_runs_are_listed_with_their_metrics(url: str, runs_dir: Path) -> None:
    runs = httpx.get(f"{url}/v1/runs").json()["runs"]
    assert [r["name"] for r in runs] == ["hp"]  # not the empty dir, not the symlink
    assert runs[0] | {"created": None} == {
        "name": "hp", "dataset": "hotpotqa", "methods": ["retrieve-read"], "created": None,
        "records": 3, "errors": 0, "corrupt": 0,
    }  # fmt: skip
    detail = httpx.get(f"{url}/v1/runs/hp").json()
    records = read_results(runs_dir / "hp")
    assert [(i["id"], i["method"]) for i in detail["items"]] == [
        (r["id"], r["method"]) for r in records
    ]
    (row,) = report.summarize([runs_dir / "hp"])
    (got,) = detail["metrics"]
    assert (got["method"], got["items"], got["failed"]) == (row.method, row.items, row.failed)
    assert got["metrics"]["cover_em"]["mean"] == pytest.approx(row.metrics["cover_em"].mean)
    assert detail["manifest"]["config"]["dataset"] == "hotpotqa"
    # Failures: errors and answers scoring 0 on cover-EM, computed here independently.
    failed = [r["id"] for r in records if r["status"] != "ok" or not r["metrics"]["cover_em"]]
    only = httpx.get(f"{url}/v1/runs/hp", params={"failures": "true"}).json()
    assert [i["id"] for i in only["items"]] == failed and only["total"] == len(failed)
    assert all(i["failure"] == (i["id"] in failed) for i in detail["items"])
    page = httpx.get(f"{url}/v1/runs/hp", params={"offset": 1, "limit": 1}).json()
    assert [i["id"] for i in page["items"]] == [records[1]["id"]] and page["total"] == 3
    assert httpx.get(f"{url}/v1/runs/hp", params={"method": "nope"}).json()["total"] == 0


def test_run_items_carry_their_full_trace(url: str, runs_dir: Path) -> None:
    record = read_results(runs_dir / "hp")[0]
    res = httpx.get(f"{url}/v1/runs/hp/items/{record['id']}")
    assert res.status_code == 200
    (got,) = res.json()["records"]
    assert got["trace"] == record["trace"] and got["metrics"] == record["metrics"]
    missing = httpx.get(f"{url}/v1/runs/hp/items/no-such-id")
    assert missing.status_code == 404 and "no-such-id" in missing.json()["error"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/runs/evil",  # symlink out of the runs directory
        "/v1/runs/not-a-run",
        "/v1/runs/%2e%2e",
        "/v1/runs/..%2f..%2fetc",
        "/v1/runs/.hidden",
        "/v1/runs/evil/items/x",
        "/v1/runs/hp/items/..%2f..%2f..%2fetc%2fpasswd",
    ],
)
def test_no_path_traversal(url: str, path: str) -> None:
    res = httpx.get(url + path)
    assert res.status_code == 404, res.text
    assert set(res.json()) == {"error"} and "root:" not in res.text


def test_openapi_schema_describes_the_limits(url: str) -> None:
    schema = httpx.get(f"{url}/openapi.json").json()
    ask = schema["components"]["schemas"]["AskRequest"]["properties"]
    assert ask["question"]["maxLength"] == 2000
    assert ask["method"]["enum"] == list(catalog.method_names())
    responses = schema["paths"]["/v1/ask"]["post"]["responses"]
    assert {"200", "413", "422", "429", "502", "504"} <= set(responses)
    stream = schema["paths"]["/v1/ask/stream"]["post"]["responses"]["200"]["content"]
    assert list(stream) == ["text/event-stream"]


@pytest.mark.slow
def test_searchain_serve_command_serves_the_api_and_the_page(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "SEARCHAIN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("SEARCHAIN_API_TOKEN", None)
    cmd = [sys.executable, "-m", "searchain.cli", "serve", "--port", str(port),
           "--runs-dir", str(tmp_path), "--max-concurrent", "3"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 120
        while True:
            try:
                health = httpx.get(f"{base}/healthz").json()
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stdout.read().decode()  # type: ignore[union-attr]
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert health["max_concurrent"] == 3 and health["llm"].startswith("local:")
        page = httpx.get(f"{base}/")
        assert (
            page.status_code == 200 and '<script type="module" src="/static/app.js">' in page.text
        )
        assert "script-src 'self'" in page.headers["content-security-policy"]
        for asset in ("app.js", "trace.js", "tree.js", "app.css"):
            assert httpx.get(f"{base}/static/{asset}").status_code == 200, asset
        assert httpx.get(f"{base}/v1/runs").json() == {"runs": []}
    finally:
        proc.terminate()
        proc.wait(20)


def test_a_reward_model_not_installed_is_named_to_the_client_without_server_details(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Think&Cite on a service whose reward reference is not installed (fault injection:
    every embedded model is installed here, so opening it is made to fail the way a missing
    package does): the client gets a 422 saying which model is missing and what the operator
    can do — not the generic "cannot build", and not the server's paths."""
    from searchain.llm import LLMError
    from searchain.methods.thinkcite import reward_models

    def not_installed(backend: str, **kw: Any) -> Any:
        raise LLMError(f"model file not found: /srv/secret-models/{kw.get('model')}.gguf")

    monkeypatch.setattr(reward_models, "make_llm", not_installed)
    # The default pair, opened on the first Think&Cite request (a pair the operator names is
    # opened when the service starts, and a missing one stops it there).
    missing = Engine(engine.llm.inner, engine.retriever)
    with serving(missing) as u:
        r = httpx.post(f"{u}/v1/ask", json={"question": QUESTION, "method": "thinkcite"},
                       timeout=60)  # fmt: skip
    assert r.status_code == 422, r.text
    detail = json.dumps(r.json())
    assert "reward_model (qwen2.5-coder-1.5b) is not installed on this server" in detail
    assert "--reward-reference none" in detail
    assert "/srv/secret-models" not in detail
