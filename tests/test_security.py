"""The HTTP service as an attacker sees it (issue 20): per-request options cannot name a path,
URL, model or endpoint; errors echo no file or upstream body; secrets (API key, URL
user-info, the API token) appear in no response, log or run artifact; the Host header is
checked. Real servers on 127.0.0.1: the service, a listener that records what reaches it,
and an OpenAI-compatible endpoint that fails on cue (searchain.net.faults)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from searchain.llm import RetryPolicy
from searchain.llm.openai_backend import OpenAILLM
from searchain.net.faults import Listener, LLMFaultServer
from searchain.retrieval.demo import default_index
from searchain.server import Engine, Settings, create_app, running
from searchain.server.engine import CancellableLLM
from searchain.server.request_options import SERVER_SIDE_OPTIONS, AskOptions

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

KEY = "sk-canary-key-5f1e2d3c4b5a69788796a5b4"
TOKEN = "canary-token-0a9b8c7d6e5f"
FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02)


@pytest.fixture(scope="module")
def llm_server() -> Iterator[LLMFaultServer]:
    with LLMFaultServer("ok") as srv:
        yield srv


@pytest.fixture(scope="module")
def engine(llm_server: LLMFaultServer) -> Engine:
    llm = OpenAILLM("fault", base_url=llm_server.url, api_key=KEY, retry=FAST, timeout=2)
    return Engine(llm, default_index(), max_concurrent=2)


@pytest.fixture(scope="module")
def url(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    runs = tmp_path_factory.mktemp("runs")
    with running(create_app(engine, Settings(token=TOKEN, runs_dir=runs, timeout=10))) as u:
        yield u


AUTH = {"Authorization": f"Bearer {TOKEN}"}


def ask(url: str, method: str, options: dict[str, Any], **kw: Any) -> Any:
    body = {"question": "Who wrote Hamlet?", "method": method, "options": options}
    return httpx.post(f"{url}/v1/ask", json=body, headers=AUTH, timeout=30, **kw)


# -- per-request options --------------------------------------------------------------------


def naming_options() -> list[str]:
    """AskOptions fields whose values could name a path, URL, model or endpoint: any string
    that is not one of a closed set of values."""
    schema = AskOptions.model_json_schema()
    out = []
    for name, prop in schema["properties"].items():
        kinds = prop.get("anyOf", [prop])
        for kind in kinds:
            if kind.get("type") == "string" and "enum" not in kind and "const" not in kind:
                out.append(name)
    return out


def test_no_request_option_can_name_a_path_or_url() -> None:
    assert naming_options() == []
    schema = AskOptions.model_json_schema()
    assert schema["additionalProperties"] is False  # an allow-list, not a block-list
    for name, prop in schema["properties"].items():
        kinds = [k for k in prop.get("anyOf", [prop]) if k.get("type") != "null"]
        for kind in kinds:  # every number is bounded (an enumerated one by its values)
            if kind["type"] in ("integer", "number") and "enum" not in kind:
                assert "maximum" in kind and ("minimum" in kind or "exclusiveMinimum" in kind), name


@pytest.mark.parametrize("name", sorted(SERVER_SIDE_OPTIONS))
def test_options_naming_files_models_or_endpoints_are_refused_and_reach_nothing(
    url: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with Listener() as listener:
        # The reproduction of issue 20: the reference model pointed at an attacker's host.
        models = ("reward_model", "reward_reference")
        value = f"openai:x@{listener.url}/v1" if name in models else f"{listener.url}/v1"
        res = ask(url, "thinkcite", {name: value})
        paths = [ask(url, "rebel", {name: p}) for p in ("/etc/passwd", "/no/such/file")]
    assert res.status_code == 422, res.text
    assert "set on the server" in res.json()["error"]
    assert listener.connections == 0 and KEY.encode() not in listener.received
    # Whether a file exists does not show: the same answer for both paths.
    assert [p.status_code for p in paths] == [422, 422]
    assert paths[0].json()["error"].replace("/etc/passwd", "P") == paths[1].json()["error"].replace(
        "/no/such/file", "P"
    )
    assert "root:" not in paths[0].text


def test_unknown_and_non_scalar_options_are_refused(url: str) -> None:
    for options in ({"bogus": 1}, {"k": [1]}, {"family": "../../etc"}, {"k": 10**9}):
        res = ask(url, "searchain", options)
        assert res.status_code == 422, (options, res.text)


def test_operator_options_are_loaded_once_at_start(llm_server: LLMFaultServer) -> None:
    llm = OpenAILLM("fault", base_url=llm_server.url, api_key=KEY, retry=FAST)
    engine = Engine(
        llm,
        default_index(),
        method_options={
            "thinkcite": {
                "reward_reference": f"openai:ref@{llm_server.url}",
                "reward_model": "policy",
            }
        },
    )
    reference = engine.resources_for("thinkcite")["reward_reference"]
    assert isinstance(reference, CancellableLLM) and reference.inner.base_url == llm_server.url
    assert engine.resources_for("thinkcite")["reward_reference"] is reference  # not per request
    method = engine.runner("thinkcite", {"max_iterations": 2}).method
    assert method.reference is reference and method.config.mcts.max_iterations == 2
    assert engine.runner("thinkcite", {"max_iterations": 2}).method is method  # cached
    assert method.reward_model is engine.llm  # "policy": the policy scores its own sentences
    with pytest.raises(ValueError, match="unknown method"):
        Engine(llm, default_index(), method_options={"nope": {}})


# -- errors and secrets ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode", ["http_500", "html_200", "empty_json", "truncated_json", "no_choices"]
)
def test_llm_failures_are_502_without_upstream_bodies(
    url: str, llm_server: LLMFaultServer, mode: str
) -> None:
    llm_server.mode = mode
    try:
        res = ask(url, "retrieve-read", {})
    finally:
        llm_server.mode = "ok"
    assert res.status_code == 502, res.text
    error = res.json()["error"]
    assert error.startswith("the language model failed: ") and "after 2 attempts" in error
    assert "10.0.0.7" not in res.text and "<html" not in res.text  # the upstream body stays out
    assert llm_server.url not in error  # the endpoint is the operator's business


def test_answers_and_logs_carry_no_secret(
    url: str, llm_server: LLMFaultServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    ok = ask(url, "retrieve-read", {})
    assert ok.status_code == 200 and ok.json()["answer"]
    # The key went to the configured endpoint, as it must ...
    assert any(KEY in str(r["headers"]) for r in llm_server.requests)
    llm_server.mode = "http_500"
    try:
        failed = ask(url, "retrieve-read", {})
    finally:
        llm_server.mode = "ok"
    runs = httpx.get(f"{url}/v1/runs", headers=AUTH)
    # ... and nowhere else: not in answers, errors, listings or the log.
    for text in (ok.text, failed.text, runs.text, caplog.text):
        assert KEY not in text and TOKEN not in text


def test_host_header_must_name_an_allowed_host(url: str) -> None:
    port = url.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "[::1]"):
        assert httpx.get(f"{url}/healthz", headers={"Host": host}).status_code == 200, host
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", ""):
        res = httpx.get(f"{url}/v1/methods", headers={**AUTH, "Host": host})
        assert res.status_code == 400, host
        assert set(res.json()) == {"error"} and "evil" not in res.text


# -- outbound requests ------------------------------------------------------------------------


def test_redirects_drop_credentials_on_any_origin_change() -> None:
    from searchain.net import HttpPolicy, fetch
    from searchain.net.faults import HostileServer

    with HostileServer() as web, HostileServer() as other:
        policy = HttpPolicy(allow_private=(f"127.0.0.1:{web.port}", f"127.0.0.1:{other.port}"))
        secret = {"Authorization": f"Bearer {KEY}", "Cookie": "session=abc123"}
        same = fetch(web.url("redirect", to=web.url("echo-headers")), policy=policy, headers=secret)
        assert KEY in same.text and "abc123" in same.text  # same origin: kept
        # Another port of the same host is another origin: nothing of the caller's goes there.
        moved = fetch(web.url("redirect", to=other.url("echo-headers")), policy=policy,
                      headers=secret)  # fmt: skip
        assert moved.status == 200 and KEY not in moved.text and "abc123" not in moved.text
        assert not [r for r in other.requests if KEY in str(r["headers"])]


@pytest.mark.parametrize(
    ("charset", "expected"),
    [("ISO-8859-1", "café"), ("windows-1252", "café"), ("punycode", "caf\ufffd"),
     ("x-unknown", "caf\ufffd"), ("utf-7", "caf\ufffd"), ('"utf-8"', "caf\ufffd")],
)  # fmt: skip
def test_charsets_outside_the_allow_list_decode_as_utf8(charset: str, expected: str) -> None:
    from searchain.net.body import decode

    assert decode("café".encode("latin-1"), f"text/plain; charset={charset}") == expected


def test_cancelling_stops_a_call_in_the_middle_of_a_read() -> None:
    import threading
    import time

    from searchain.net.deadline import Cancelled, cancel_scope

    with LLMFaultServer("hang") as srv:
        llm = OpenAILLM("m", base_url=srv.url, timeout=120)  # 4 attempts x 120 s if not stopped
        event = threading.Event()
        threading.Timer(0.5, event.set).start()
        t0 = time.monotonic()
        with cancel_scope(event), pytest.raises(Cancelled):
            llm.complete("hi")
        assert time.monotonic() - t0 < 1.5
        assert len(srv.requests) == 1  # not retried


def test_reader_and_retrieval_failures_map_to_502_without_detail() -> None:
    from searchain.readers.llm_reader import NoLogprobsError
    from searchain.retrieval.remote import RetrievalError
    from searchain.server.pipeline import answer_error

    err = answer_error(NoLogprobsError("m at http://u:pw-1234567@h/v1 returned none"), 5)
    assert err.status == 502 and "pw-1234567" not in err.message
    err = answer_error(RetrievalError("http://h: HTTP 500: 'secret table dump'"), 5)
    assert err.status == 502 and "dump" not in err.message
    assert answer_error(TimeoutError(), 5).status == 504
    assert answer_error(KeyError("x"), 5).status == 500
