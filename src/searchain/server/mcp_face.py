"""The MCP face: searchain's search, answers and documents as tools for agents and IDEs,
built on the official ``mcp`` SDK (``MCPServer``).

Tools (typed input and output schemas):

* ``search(query, k)``: passages of the service's index, each with its locator;
* ``ask(question, method, options)``: the answer with its ``[n]`` marks, the cited passages
  and the method's confidence where it has one; progress notifications while it works;
* ``read(id | path and page, around)``: a passage of a document index with its neighbours.

``searchain mcp`` serves them over stdio; ``searchain serve`` at ``/mcp`` (streamable HTTP,
stateless), behind the same Host check, token, body limit and rate limit as ``/v1/*``, and
the same answer slots. A refusal or failure is a tool error (``isError``), never a dead
server; an argument a tool does not take is refused, not ignored.
"""

# No "from __future__ import annotations": the SDK reads the tools' signatures, whose
# Literal of methods and options model are built per server.

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from searchain.methods.searchain.route import route_words
from searchain.server.answer_view import confidence, describe, shown_answer, sources
from searchain.server.cited import page_link
from searchain.server.engine import Engine
from searchain.server.errors import FaceError, one_line
from searchain.server.pipeline import Answering, start_answer
from searchain.server.request_options import ask_options_model
from searchain.trace_extras import AnswerExtras
from searchain.types import Passage

log = logging.getLogger(__name__)


class Hit(BaseModel):
    id: str = Field(description="Pass it to `read` for the text around it.")
    locator: str = Field(description="Where a person finds it: `guide.pdf p. 12 · Heading`.")
    title: str = ""
    text: str
    score: float | None = None
    path: str | None = Field(None, description="The document, for a document index.")
    page: int | None = None


class SearchResult(BaseModel):
    passages: list[Hit]


class SourceHit(Hit):
    mark: int = Field(description="The `[n]` of the answer that cites this passage.")
    url: str | None = Field(
        None,
        description="The passage as a page a person can open (its text in context, a link "
        "to its file); served over HTTP only, none over stdio.",
    )


class AnswerResult(BaseModel):
    answer: str = Field(
        description="The answer with its [n] citation marks; when the server withholds a "
        "low-confidence answer, a 'Not answered: ...' notice comes first, then the guess."
    )
    short_answer: str = Field("", description="The short answer (the guess, if withheld).")
    short_answer_how: str | None = Field(
        None,
        description="How the short answer was had when the reply named none (read out of the "
        "reply by the reader, or the reply's sentence); null: the reply stated it.",
    )
    method: str
    route: str | None = Field(
        None,
        description="SearChain reading first: whether one read of the question's own passages "
        "answered, or why it planned a chain of queries (null: no route, it always chains).",
    )
    sources: list[SourceHit]
    confidence: dict[str, Any] | None = Field(
        None,
        description="headline (how far to trust it, in words: lead with it); calibrated; "
        "value (the probability that it is right, only when calibrated, else null); score "
        "(an uncalibrated score, not a probability, and note says why); lowered_by / "
        "raised_by (what moved it, in words); "
        "abstained; threshold (null: none asked, or none certified) and terms (the "
        "guarantee, or why there is none); calibrator (its provenance).",
    )


class ReadResult(BaseModel):
    passage: Hit
    before: list[Hit] = []
    after: list[Hit] = []


def hit(p: Passage) -> dict[str, Any]:
    src = p.source or {}
    return {
        "id": p.id,
        "locator": p.locator() or p.title or p.id,
        "title": p.title,
        "text": p.text,
        "score": p.score,
        "path": src.get("path"),
        "page": src.get("page"),
    }


class StrictMCPServer(MCPServer):
    """Refuses an argument a tool does not declare (the SDK would drop it unseen)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.declared: dict[str, frozenset[str]] = {}

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        unknown = sorted(set(arguments or {}) - self.declared.get(name, frozenset(arguments or {})))
        if unknown:
            takes = ", ".join(sorted(self.declared[name]))
            raise ToolError(
                f"{name} takes no argument {', '.join(map(repr, unknown))} (it takes: {takes})"
            )
        return await super().call_tool(name, arguments, context)

    def add_strict(self, fn: Any, description: str) -> None:
        self.add_tool(fn, description=description)
        names = [n for n, a in fn.__annotations__.items() if n != "return" and a is not Context]
        self.declared[fn.__name__] = frozenset(names)


def make_mcp_server(engine: Engine, settings: Any) -> StrictMCPServer:
    """The tools over ``engine``, with the service's limits (``settings``: the service's
    ``Settings``: default method, question limit, timeout)."""
    from searchain import __version__

    server = StrictMCPServer(
        "searchain", version=__version__, log_level="WARNING", instructions=INSTRUCTIONS
    )
    Question = Annotated[str, Field(min_length=1, max_length=settings.max_question_chars)]
    Methods = Literal[tuple(engine.methods)]  # type: ignore[valid-type]
    Options = ask_options_model()

    async def search(query: Question, k: Annotated[int, Field(ge=1, le=20)] = 5) -> SearchResult:
        if engine.retriever is None:
            raise ToolError("this server has no index to search")
        try:
            found = await asyncio.to_thread(engine.retriever.search, query, k)
        except Exception as e:
            log.warning("search failed", exc_info=e)
            raise ToolError("search failed; see the server log") from None
        return SearchResult(passages=[Hit(**hit(p)) for p in found])

    async def ask(
        question: Question,
        ctx: Context,
        method: Methods = settings.default_method,  # type: ignore[valid-type]
        options: Options | None = None,  # type: ignore[valid-type]
    ) -> AnswerResult:
        return await answer(engine, settings, ctx, question, method, options)

    async def read(
        id: Annotated[str | None, Field(max_length=2000)] = None,
        path: Annotated[str | None, Field(max_length=2000)] = None,
        page: Annotated[int | None, Field(ge=1)] = None,
        around: Annotated[int, Field(ge=0, le=5)] = 1,
    ) -> ReadResult:
        return await asyncio.to_thread(read_passage, engine, id, path, page, around)

    server.add_strict(search, "Search the index: the k best passages, each with its locator.")
    server.add_strict(ask, ASK_HELP)
    server.add_strict(
        read,
        "A passage of the user's documents (by id, or by path and page) "
        "with up to `around` passages before and after it in the same file.",
    )
    return server


INSTRUCTIONS = (
    "searchain answers questions with an LLM and a search engine and cites passages with [n] "
    "marks. Use `search` to find passages, `ask` for a cited answer, `read` for the text "
    "around a passage."
)
ASK_HELP = (
    "Answer a question with a method (see its settings in `options`): the answer with [n] "
    "marks, the cited passages with their locators, and the confidence when the method has "
    "one. Slow methods (searchain, thinkcite) take tens of seconds; progress is reported."
)


async def answer(
    engine: Engine, settings: Any, ctx: Context, question: str, method: str, options: Any
) -> AnswerResult:
    given = options.given() if options is not None else {}
    try:
        runner = await start_answer(engine, method, given, question)
    except FaceError as e:
        retry = f" (retry in {e.retry_after} s)" if e.retry_after else ""
        raise ToolError(e.message + retry) from None
    answering = Answering(engine, runner, question, settings.timeout)
    try:
        step = 0
        async for event in answering.events(settings.heartbeat):
            line = describe(event) if event is not None else None
            if line:
                step += 1
                with contextlib.suppress(Exception):  # a client without progress: no matter
                    await ctx.report_progress(step, None, line)
        trace = await answering.trace()
    except FaceError as e:
        raise ToolError(e.message) from None
    finally:
        answering.cancel()
    base = _base_url(ctx)  # None over stdio: no page to link to
    srcs = [
        SourceHit(
            mark=s.mark,
            url=page_link(base, s.passage.id, getattr(settings, "token", None)) if base else None,
            **hit(s.passage),
        )
        for s in sources(trace)
    ]
    return AnswerResult(
        answer=shown_answer(trace),
        short_answer=trace.answer,
        short_answer_how=AnswerExtras.of(trace).note(),
        method=trace.method,
        route=route_words(trace),
        sources=srcs,
        confidence=confidence(trace),
    )


def _base_url(ctx: Context) -> str | None:
    """The service's address as the client reached it (HTTP); None over stdio."""
    request = getattr(ctx.request_context, "request", None)
    base = getattr(request, "base_url", None)
    return str(base) if base is not None else None


def read_passage(
    engine: Engine, pid: str | None, path: str | None, page: int | None, around: int
) -> ReadResult:
    from searchain.retrieval.documents.context import passage_on_page

    if (pid is None) == (path is None) or (path is not None and page is None):
        raise ToolError("give either `id`, or `path` and `page`")
    index = engine.document_index()
    if index is None:
        raise ToolError("this server's index is not an index of documents")
    if pid is None:
        pid = passage_on_page(index, path or "", page or 0)
        if pid is None:
            raise ToolError(f"no passage of {one_line(path or '')!r} on page {page}")
    found = engine.document_context(pid, around)
    if found is None:
        raise ToolError("no document passage with that id in this server's index")
    return ReadResult(
        passage=Hit(**hit(found.passage)),
        before=[Hit(**hit(p)) for p in found.before],
        after=[Hit(**hit(p)) for p in found.after],
    )


# -- /mcp on `searchain serve` --------------------------------------------------------------


class _McpEndpoint:
    """The SDK's streamable-HTTP handler, answering 503 while its session manager is not
    running (an app served without its lifespan)."""

    def __init__(self, handler: Any) -> None:
        self.handler, self.running = handler, False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not self.running:
            from starlette.responses import JSONResponse

            response = JSONResponse(
                {
                    "error": "the MCP endpoint needs the server's lifespan "
                    "(run it with `searchain serve`)"
                },
                status_code=503,
            )
            await response(scope, receive, send)
            return
        await self.handler(scope, receive, send)


def mount_mcp(app: Any, server: MCPServer, max_body_bytes: int) -> None:
    """``/mcp`` on the FastAPI ``app``: stateless streamable HTTP, its session manager run in
    the app's lifespan. The SDK's own DNS-rebinding check is off: the service's Host
    allow-list (``server/limits/access.py``) does that job, for the names the operator allows."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.routing import Route

    server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        max_request_body_size=max_body_bytes,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    manager = server.session_manager
    endpoint = _McpEndpoint(StreamableHTTPASGIApp(manager))
    app.router.routes.append(Route("/mcp", endpoint=endpoint, include_in_schema=False))
    outer = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        async with outer(a) as state, manager.run():
            endpoint.running = True
            try:
                yield state
            finally:
                endpoint.running = False

    app.router.lifespan_context = lifespan
