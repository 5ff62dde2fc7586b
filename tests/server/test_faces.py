"""The OpenAI-compatible chat face and the MCP face, driven by their real clients — OpenAI's
Python SDK (``chat.completions.create``, streamed and not, parsed by the SDK) and the ``mcp``
SDK's own client over streamable HTTP and over stdio — against real ``searchain serve`` and
``searchain mcp`` processes with the embedded model and the demo index."""

from __future__ import annotations

import asyncio
import html
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import openai
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from searchain.methods import catalog
from servers import free_port

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "faces-token-0123456789"
QUESTION = "Who directed the film Kiss and Tell?"
# route=chain: these check the chain's own progress (the route tests ask for read-first)
FAST_SEARCHAIN = {"r_max": 2, "max_tokens": 64, "trace_max_tokens": 48, "route": "chain"}


def child_env(tmp: Path) -> dict[str, str]:
    """The children import this checkout's code, with a fresh LLM call cache."""
    env = {**os.environ, "SEARCHAIN_CACHE_DIR": str(tmp / "cache"), "SEARCHAIN_API_TOKEN": TOKEN}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("faces")
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "searchain.cli",
        "serve",
        "--port",
        str(port),
        "--runs-dir",
        str(tmp),
        "--max-concurrent",
        "1",
        "--rate-limit",
        "600/min",
    ]
    proc = subprocess.Popen(
        cmd, env=child_env(tmp), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 180
    try:
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stdout.read().decode()  # type: ignore[union-attr]
                assert time.monotonic() < deadline
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.fixture(scope="module")
def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key=TOKEN, max_retries=0, timeout=300)


def ask(client: openai.OpenAI, **kw: Any) -> Any:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}]
    return client.chat.completions.create(messages=messages, **kw)  # type: ignore[call-overload]


def check_citations(content: str, annotations: list[Any], extra: dict[str, Any]) -> None:
    """The [n] marks, the Sources list, the annotations and both citation lists agree."""
    sources = extra["searchain"]["sources"]
    assert "**Sources**" in content
    for s in sources:
        assert f"- [{s['mark']}] {s['locator']}" in content
        page = urlsplit(extra["citations"][s["mark"] - 1])
        assert unquote(page.path) == f"/passages/{s['id']}" and page.query.startswith("cite=")
    assert sources, content  # retrieve-read cites (post hoc when the model does not)
    marks = {s["mark"]: s for s in sources}
    for a in annotations:
        n = int(content[a.url_citation.start_index + 1 : a.url_citation.end_index - 1])
        assert content[a.url_citation.start_index] == "[" and n in marks
        assert a.url_citation.title == marks[n]["locator"]


def test_models_are_the_methods(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == list(catalog.method_names())


def test_a_completion_carries_the_answer_and_its_citations(client: openai.OpenAI) -> None:
    r = ask(client, model="retrieve-read")
    message = r.choices[0].message
    assert r.object == "chat.completion" and r.choices[0].finish_reason == "stop"
    check_citations(message.content or "", message.annotations or [], r.model_extra or {})
    assert r.usage is not None and r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
    # Every answer carries its confidence; without a calibrator for Gemma it is a score that
    # says so, in the response and in the chat window's footer.
    conf = (r.model_extra or {})["searchain"]["confidence"]
    # No bare number for a score that is not a probability (issue 61): the value is null,
    # the score is named as one, and the footer leads with what holds and fails.
    assert conf["calibrated"] is False and conf["value"] is None and 0 <= conf["score"] <= 1
    assert conf["headline"].startswith("not a probability (uncalibrated). What holds: ")
    content = message.content or ""
    assert "Confidence: not a probability (uncalibrated)" in content and "What fails: " in content
    assert "Confidence: 0" not in content and "Confidence: 1" not in content
    check_pages(message.annotations or [], (r.model_extra or {})["searchain"]["sources"])


def check_pages(annotations: list[Any], sources: list[dict[str, Any]]) -> None:
    """A citation's link opens, without the bearer token, as a page that shows the passage
    marked (escaped text); the same link unsigned or re-signed for another passage is 403."""
    assert annotations
    by_locator = {s["locator"]: s for s in sources}
    for a in annotations:
        url = a.url_citation.url
        page = httpx.get(url, timeout=30)  # no Authorization header: the signature opens it
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in page.headers["content-security-policy"]
        passage = by_locator[a.url_citation.title]
        assert f'<mark id="cited">{html.escape(passage["text"])}</mark>' in page.text
        assert httpx.get(url.partition("?")[0], timeout=30).status_code == 403
        forged = url.partition("?")[0] + "x?" + url.partition("?")[2]
        assert httpx.get(forged, timeout=30).status_code == 403


def test_a_stream_shows_the_chain_then_the_answer_with_usage(client: openai.OpenAI) -> None:
    stream = ask(
        client,
        model="searchain",
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"options": FAST_SEARCHAIN},
    )
    reasoning, content, annotations, usage, extra = [], [], [], None, {}
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        reasoning.append((delta.model_extra or {}).get("reasoning_content") or "")
        content.append(delta.content or "")
        annotations += (delta.model_extra or {}).get("annotations") or []
        if chunk.choices[0].finish_reason == "stop":
            extra = chunk.model_extra or {}
    progress, text = "".join(reasoning), "".join(content)
    assert "Round 1" in progress and "Chain of queries" in progress, progress
    assert text and "**Sources**" in text and extra["searchain"]["method"] == "searchain"
    assert usage is not None and usage.total_tokens > 0
    for a in annotations:
        assert text[a["url_citation"]["start_index"]] == "["


def test_the_chat_window_says_which_route_searchain_took(client: openai.OpenAI) -> None:
    """Reading first (route=read-first): the progress says whether one read answered or why a
    chain is planned, and the answer's footer says the route."""
    options = {**FAST_SEARCHAIN, "route": "read-first"}
    stream = ask(client, model="searchain", stream=True, extra_body={"options": options})
    reasoning, content = [], []
    for chunk in stream:
        if chunk.choices:
            delta = chunk.choices[0].delta
            reasoning.append((delta.model_extra or {}).get("reasoning_content") or "")
            content.append(delta.content or "")
    progress, text = "".join(reasoning), "".join(content)
    assert "One read answered" in progress or "Planning a chain: " in progress, progress
    assert "\nRoute: " in text, text
    assert ("Round 1" in progress) == ("Planning a chain" in progress)  # a chain only if planned


@pytest.mark.parametrize(
    ("kw", "error", "says"),
    [
        (
            {"model": "retrieve-read", "extra_body": {"options": {"index": "/etc"}}},
            openai.BadRequestError,
            "set on the server",
        ),
        (
            {"model": "retrieve-read", "extra_body": {"model_path": "/etc/passwd"}},
            openai.BadRequestError,
            "unsupported parameter 'model_path'",
        ),
        ({"model": "retrieve-read", "temperature": 0.2}, openai.BadRequestError, "temperature"),
        ({"model": "no-such-method"}, openai.NotFoundError, "no model"),
    ],
)
def test_refusals_are_openai_errors(
    client: openai.OpenAI, kw: dict, error: type, says: str
) -> None:
    with pytest.raises(error) as caught:
        ask(client, **kw)
    assert says in caught.value.message and caught.value.body["type"]  # type: ignore[index]


def test_the_token_is_required(base: str) -> None:
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{base}/v1", api_key="wrong", max_retries=0).models.list()
    assert httpx.post(f"{base}/mcp", json={}).status_code == 401


async def mcp_session_checks(session: ClientSession) -> list[dict[str, Any]]:
    """The tools' checks both transports share; the sources of the answer `ask` gave."""
    await session.initialize()
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == {"search", "ask", "read"}
    assert all(t.output_schema for t in tools.values())
    found = await session.call_tool("search", {"query": "Kiss and Tell film", "k": 3})
    assert not found.is_error and len(found.structured_content["passages"]) == 3  # type: ignore[index]
    assert all(p["locator"] for p in found.structured_content["passages"])  # type: ignore[index]
    answer = await session.call_tool("ask", {"question": QUESTION, "method": "retrieve-read"})
    assert not answer.is_error, answer.content
    out = answer.structured_content or {}
    assert out["answer"] and out["sources"] and out["method"] == "retrieve-read"
    conf = out["confidence"]  # an uncalibrated score is not given as a bare value
    assert conf["value"] is None and conf["headline"].startswith("not a probability")
    assert all(f"[{s['mark']}]" in out["answer"] for s in out["sources"])
    for bad in (
        {"question": QUESTION, "options": {"index": "/etc"}},
        {"question": QUESTION, "model_path": "/etc/passwd"},
    ):
        refused = await session.call_tool("ask", bad)
        assert refused.is_error, refused
    missing = await session.call_tool("read", {"id": "no such passage#0"})
    assert missing.is_error
    again = await session.call_tool("search", {"query": "Shirley Temple", "k": 1})
    assert not again.is_error  # the server lives on after tool errors
    return list(out["sources"])


def test_mcp_over_streamable_http(base: str) -> None:
    async def main() -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx.AsyncClient(headers=headers, timeout=300) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as (r, w),
            ClientSession(r, w) as session,
        ):
            sources = await mcp_session_checks(session)
            for source in sources:  # each opens as a page, signed, without the token
                assert source["url"].startswith(f"{base}/passages/"), source
                page = await http.get(source["url"], headers={"Authorization": ""})
                assert page.status_code == 200 and html.escape(source["text"]) in page.text
            options = {**FAST_SEARCHAIN, "route": "read-first"}
            routed = await session.call_tool(
                "ask", {"question": QUESTION, "method": "searchain", "options": options}
            )
            assert not routed.is_error, routed.content
            out = routed.structured_content or {}
            assert out["route"].startswith("Route: "), out
            how = out["short_answer_how"]  # null where the reply stated its short answer
            assert how is None or how.startswith("the reply named no short answer"), out
            plain = await session.call_tool(
                "ask", {"question": QUESTION, "method": "searchain", "options": FAST_SEARCHAIN}
            )
            assert (plain.structured_content or {})["route"] is None  # route=chain: no route

    asyncio.run(main())


def test_mcp_over_stdio(tmp_path: Path) -> None:
    env = child_env(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "searchain.cli", "mcp"], env=env, cwd=str(tmp_path)
    )

    async def main() -> None:
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                sources = await mcp_session_checks(s)
        assert all(source["url"] is None for source in sources)  # no HTTP service: no page

    asyncio.run(main())
