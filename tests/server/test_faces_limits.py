"""The faces' limits on a real service (embedded model, demo index, uvicorn on 127.0.0.1
with its lifespan, so /mcp runs): the per-client rate limit and the answer slots (429 with
Retry-After, no request lost or hung), forbidden options refused before any model work,
OpenAI's error shape for the middleware's refusals, and Schemathesis on the new routes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import positive_data_acceptance

from searchain.net.serving import running
from searchain.server import Engine, Settings, create_app
from searchain.server.limits.rate import Rate, RateLimit
from serverkit import make_engine

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

TOKEN = "limits-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHAT = {"messages": [{"role": "user", "content": "Who directed Jaws?"}]}


@contextlib.contextmanager
def live(engine: Engine, **kw: Any) -> Iterator[str]:
    """The app on a free loopback port with its lifespan on (the MCP session manager runs in
    it), by the service's own threaded start."""
    app = create_app(engine, Settings(token=TOKEN, runs_dir=None, **kw))
    with running(app, lifespan="on") as url:
        yield url


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return make_engine(tmp_path_factory.mktemp("llm") / "calls.sqlite", max_concurrent=1)


def test_rate_parsing_and_the_bucket() -> None:
    assert Rate.parse("60/min") == Rate(60, 60.0) and Rate.parse("off") is None
    for bad in ("60", "x/min", "0/min", "5/week"):
        with pytest.raises(ValueError):
            Rate.parse(bad)
    now = [0.0]
    limit = RateLimit(None, Rate(2, 60.0), ("/x",), clock=lambda: now[0])  # type: ignore[arg-type]
    assert [limit.take("a"), limit.take("a")] == [0.0, 0.0]
    assert limit.take("a") == pytest.approx(30.0) and limit.take("b") == 0.0
    now[0] = 30.0
    assert limit.take("a") == 0.0 and limit.take("a") > 0


def test_the_limits_stand_in_their_one_order() -> None:
    """Outermost first: OpenAI's error shape, Host, token (/v1/, then /mcp), rate, body; a
    limit that is off is left out, and create_app puts exactly this stack on the app."""
    from searchain.llm.openai_backend import OpenAILLM
    from searchain.net.serving import BodyLimit
    from searchain.server.limits import HostAllowList, OpenAIErrorShape, TokenAuth, middleware

    every = Settings(token=TOKEN, runs_dir=None)
    assert [(m.cls, m.kwargs.get("prefix")) for m in middleware(every)] == [
        (OpenAIErrorShape, None),
        (HostAllowList, None),
        (TokenAuth, "/v1/"),
        (TokenAuth, "/mcp"),
        (RateLimit, None),
        (BodyLimit, None),
    ]
    none = Settings(token=None, allowed_hosts=None, rate_limit="off", runs_dir=None)
    assert [m.cls for m in middleware(none)] == [OpenAIErrorShape, BodyLimit]
    with pytest.raises(ValueError, match="rate"):
        middleware(Settings(rate_limit="5/week"))
    app = create_app(Engine(OpenAILLM("m", base_url="http://127.0.0.1:9/v1"), None), every)
    assert [repr(m) for m in app.user_middleware] == [repr(m) for m in middleware(every)]


def test_the_rate_limit_answers_429_with_retry_after(engine: Engine) -> None:
    """12 requests at once from one client with 5/min: 5 reach the route (an unknown model:
    404, no model work), 7 get 429 with Retry-After; every request is answered."""
    with live(engine, rate_limit="5/min") as url:
        body = {**CHAT, "model": "no-such-method"}

        async def burst() -> list[httpx.Response]:
            async with httpx.AsyncClient(headers=AUTH, timeout=30) as c:
                return await asyncio.gather(
                    *(c.post(f"{url}/v1/chat/completions", json=body) for _ in range(12))
                )

        responses = asyncio.run(burst())
        mcp = httpx.post(f"{url}/mcp", json={}, headers=AUTH, timeout=30)
    codes = sorted(r.status_code for r in responses)
    assert codes == [404] * 5 + [429] * 7, codes
    limited = [r for r in responses if r.status_code == 429]
    assert all(int(r.headers["retry-after"]) >= 1 for r in limited)
    assert limited[0].json()["error"]["code"] == "rate_limit_exceeded"
    assert mcp.status_code == 429  # the same client's bucket covers /mcp


def test_ask_has_the_same_per_client_rate_while_slots_are_free(engine: Engine) -> None:
    """/v1/ask is behind the rate limit of every answering route: over 3/min, 429 with
    Retry-After and the service's own error body, though every answer slot is free (the
    requests name no method: 422 before any model work); /v1/ask/stream and the chat face
    draw from the same client's bucket."""
    with live(engine, rate_limit="3/min") as url:
        body = {"question": "Who directed Jaws?", "method": "no-such-method"}
        asked = [httpx.post(f"{url}/v1/ask", json=body, headers=AUTH, timeout=30) for _ in range(2)]
        streamed = httpx.post(f"{url}/v1/ask/stream", json=body, headers=AUTH, timeout=30)
        over = httpx.post(f"{url}/v1/ask", json=body, headers=AUTH, timeout=30)
        chat = httpx.post(f"{url}/v1/chat/completions", json=CHAT, headers=AUTH, timeout=30)
        busy = httpx.get(f"{url}/healthz").json()["busy"]
    assert [r.status_code for r in asked] == [422, 422] and streamed.status_code == 422
    assert over.status_code == 429 and int(over.headers["retry-after"]) >= 1
    assert "rate limit of 3/min per client" in over.json()["error"]
    assert chat.status_code == 429 and busy == 0


def test_answer_slots_bound_concurrent_answers(engine: Engine) -> None:
    """4 answers at once with one slot: one is answered, the others get 429 with
    Retry-After at once; none is lost or hangs; the slot is free afterwards."""
    with live(engine, rate_limit="off") as url:
        body = {**CHAT, "model": "direct-prompting"}

        async def burst() -> list[httpx.Response]:
            async with httpx.AsyncClient(headers=AUTH, timeout=120) as c:
                return await asyncio.gather(
                    *(c.post(f"{url}/v1/chat/completions", json=body) for _ in range(4))
                )

        t0 = time.monotonic()
        responses = asyncio.run(burst())
        took = time.monotonic() - t0
        busy = httpx.get(f"{url}/healthz").json()["busy"]
    codes = sorted(r.status_code for r in responses)
    assert codes[0] == 200 and set(codes[1:]) <= {200, 429} and 429 in codes, codes
    assert all(r.headers.get("retry-after") for r in responses if r.status_code == 429)
    assert len(responses) == 4 and took < 120 and busy == 0


def test_forbidden_options_never_reach_the_model(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    calls: list[str] = []
    monkeypatch.setattr(engine, "runner", lambda *a, **k: calls.append("runner"))
    monkeypatch.setattr(engine, "answer", lambda *a, **k: calls.append("answer"))
    with live(engine) as url:
        statuses = [
            httpx.post(f"{url}/v1/chat/completions", headers=AUTH, json=body).status_code
            for body in (
                {**CHAT, "model": "thinkcite", "options": {"reward_model": "openai:x@http://a"}},
                {**CHAT, "model": "rebel", "options": {"tools": "/etc/passwd"}},
                {**CHAT, "model": "searchain", "index": "/etc"},
            )
        ]

        async def mcp_calls() -> list[bool]:
            async with (
                httpx.AsyncClient(headers=AUTH, timeout=60) as http,
                streamable_http_client(f"{url}/mcp", http_client=http) as (r, w),
                ClientSession(r, w) as session,
            ):
                await session.initialize()
                bad = [
                    {"question": "q", "options": {"nli": "x"}},
                    {"question": "q", "retriever": "remote:http://a"},
                ]
                return [(await session.call_tool("ask", b)).is_error for b in bad]

        errors = asyncio.run(mcp_calls())
    assert all(400 <= s < 500 for s in statuses), statuses
    assert errors == [True, True] and calls == []


def test_middleware_refusals_come_in_openai_shape(engine: Engine) -> None:
    with live(engine, max_body_bytes=1000) as url:
        big = httpx.post(
            f"{url}/v1/chat/completions",
            headers=AUTH,
            json={**CHAT, "model": "cot", "user": "x" * 2000},
        )
        unauthenticated = httpx.get(f"{url}/v1/models")
    assert big.status_code == 413 and big.json()["error"]["type"] == "invalid_request_error"
    assert unauthenticated.status_code == 401
    assert unauthenticated.json()["error"]["type"] == "authentication_error"


def test_the_new_routes_match_their_schema(engine: Engine, tmp_path: Path) -> None:
    """Schemathesis on /v1/models and /v1/chat/completions: no 500, every response as the
    schema says (a slow answer is a documented 504, a busy service a documented 429)."""
    with live(engine, timeout=2.0, rate_limit="off") as url:
        schema = schemathesis.openapi.from_url(f"{url}/openapi.json", headers=AUTH)
        faces = schema.include(path_regex="^/v1/(models|chat/completions)$")
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=faces.as_strategy(generation_mode=mode))
            @settings(
                max_examples=25,
                deadline=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
            def run(case: schemathesis.Case) -> None:
                response = case.call(base_url=url, headers=AUTH, timeout=60)
                assert response.status_code < 500 or response.status_code in (502, 504)
                case.validate_response(
                    response, excluded_checks=[not_a_server_error, positive_data_acceptance]
                )

            run()
