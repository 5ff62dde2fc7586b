"""Figures of bench/reliability.py about the service's OpenAI-compatible and MCP faces
(issue 40): a bounded loopback load test of the per-client rate limit and of the answer
slots (429s with Retry-After, no request lost or hung), and forbidden options through both
faces (refused with 4xx, no model call). The service is the real one (``searchain.server``,
under uvicorn with its lifespan, so /mcp runs), its LLM searchain.net.faults's endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import Any

from bench.kit import Figure, part_of
from bench.reliability_service import FAST
from searchain.llm.openai_backend import OpenAILLM
from searchain.net.faults import LLMFaultServer
from searchain.net.serving import running
from searchain.retrieval.demo import default_index
from searchain.server import Engine, Settings, create_app

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

TOKEN = "faces-bench-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHAT = {"messages": [{"role": "user", "content": "Who wrote Hamlet?"}]}


@contextlib.contextmanager
def live(engine: Engine, **kw: Any) -> Iterator[str]:
    """The app on a free loopback port with its lifespan on (the MCP session manager runs in
    it), by the service's own threaded start."""
    app = create_app(engine, Settings(token=TOKEN, runs_dir=None, **kw))
    with running(app, lifespan="on") as url:
        yield url


def burst(url: str, body: dict[str, Any], n: int, timeout: float) -> list[int]:
    """``n`` requests at once; the status of each (0: lost or hung past ``timeout``)."""

    async def one(c: httpx.AsyncClient) -> int:
        try:
            return (await c.post(f"{url}/v1/chat/completions", json=body)).status_code
        except httpx.HTTPError:
            return 0

    async def run() -> list[int]:
        async with httpx.AsyncClient(headers=AUTH, timeout=timeout) as c:
            return list(await asyncio.gather(*(one(c) for _ in range(n))))

    return asyncio.run(run())


def load() -> list[Figure]:
    """Rate limit 10/min, then 2 slots under 8 slow answers at once."""
    with LLMFaultServer("ok", latency=0.5) as llm_srv:
        engine = Engine(
            OpenAILLM("m", base_url=llm_srv.url, retry=FAST), default_index(), max_concurrent=2
        )
        with live(engine, rate_limit="10/min") as url:
            t0 = time.monotonic()
            rated = burst(url, {**CHAT, "model": "no-such-method"}, 30, 30)
            rated_s = time.monotonic() - t0
        with live(engine, rate_limit="off") as url:
            t0 = time.monotonic()
            slots = burst(url, {**CHAT, "model": "direct-prompting"}, 8, 60)
            slots_s = time.monotonic() - t0
            busy = httpx.get(f"{url}/healthz").json()["busy"]
    ok_rate = rated.count(404) == 10 and rated.count(429) == 20
    ok_slots = 1 <= slots.count(200) <= 8 and slots.count(200) + slots.count(429) == 8
    return [
        Figure(
            "rate limit 10/min, 30 requests at once",
            f"{rated.count(404)} passed, {rated.count(429)} × 429 in {rated_s:.1f} s",
            "10 passed, 20 × 429",
            ok_rate,
        ),
        Figure(
            "2 answer slots, 8 answers at once",
            f"{slots.count(200)} answered, "
            f"{slots.count(429)} × 429 in {slots_s:.1f} s, {busy} busy after",
            "every request answered (200 or 429)",
            ok_slots and 429 in slots and busy == 0,
        ),
        Figure(
            "requests lost or hung (both bursts)",
            str((rated + slots).count(0)),
            "0",
            0 not in rated + slots,
        ),
    ]


def forbidden() -> list[Figure]:
    """Options a client may not set, through the chat face and through MCP."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    bad_options = [
        {"index": "/etc"},
        {"reward_model": "openai:x@http://127.0.0.1:9/v1"},
        {"tools": "/etc/passwd"},
        {"nli": "x"},
        {"base_url": "http://127.0.0.1:9"},
    ]
    with LLMFaultServer("ok") as llm_srv:
        engine = Engine(OpenAILLM("m", base_url=llm_srv.url, retry=FAST), default_index())
        with live(engine) as url:
            chat = [
                httpx.post(
                    f"{url}/v1/chat/completions",
                    headers=AUTH,
                    timeout=30,
                    json={**CHAT, "model": "thinkcite", "options": o},
                ).status_code
                for o in bad_options
            ]

            async def tools() -> list[bool]:
                async with (
                    httpx.AsyncClient(headers=AUTH, timeout=30) as http,
                    streamable_http_client(f"{url}/mcp", http_client=http) as (r, w),
                    ClientSession(r, w) as session,
                ):
                    await session.initialize()
                    calls = [{"question": "q", "options": o} for o in bad_options]
                    calls.append({"question": "q", "model_path": "/etc/passwd"})
                    return [(await session.call_tool("ask", c)).is_error for c in calls]

            mcp = asyncio.run(tools())
        model_calls = len(llm_srv.requests)
    accepted = sum(not 400 <= s < 500 for s in chat) + sum(not e for e in mcp)
    value = f"{accepted} of {len(chat) + len(mcp)} accepted, {model_calls} model calls"
    return [
        Figure(
            "forbidden options via chat and MCP",
            value,
            "0 accepted, 0 model calls",
            accepted == 0 and model_calls == 0,
        )
    ]


def faces() -> list[Figure]:
    return load() + forbidden()


if __name__ == "__main__":
    part_of(__doc__, "python -m bench.reliability --only faces")
