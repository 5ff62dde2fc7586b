"""The OpenAI-compatible chat face of ``searchain serve``, for chat front ends (Open WebUI,
LibreChat) and anything built on OpenAI's SDKs.

GET  /v1/models             one model per method the server offers (its id is the method's name)
POST /v1/chat/completions   the last user message is the question; ``stream: true`` for
                            server-sent chunks: the method's progress as ``reasoning_content``
                            while it works, then the answer as ``content``, then ``usage``

The answer keeps its ``[n]`` marks and ends with a "Sources" list of locators
(``guide.pdf p. 12 · Installation``, or the title); the citations also come as OpenAI
``annotations`` on the message and as a top-level ``citations`` list (``citations[n-1]`` is
the passage of ``[n]``). Every refusal is OpenAI's error object, 4xx, before any model work.
"""

# No "from __future__ import annotations": FastAPI must see the local request model.

import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from searchain.methods.searchain.route import route_words
from searchain.server import openai_models as om
from searchain.server.answer_view import (
    Source,
    answer_text,
    confidence,
    describe,
    footer,
    shown_answer,
    sources,
)
from searchain.server.cited import page_link
from searchain.server.engine import Engine
from searchain.server.errors import FaceError
from searchain.server.limits import openai_error, token_dependencies
from searchain.server.pipeline import Answering, start_answer
from searchain.server.public import public
from searchain.server.streaming import KEEP_ALIVE, EventStream, sse
from searchain.types import Trace

_MARK = re.compile(r"\[(\d+)\]")
_UNSUPPORTED = (
    "a method answers with its own settings, so this parameter would change nothing; drop it "
    "(LibreChat: dropParams) or set method settings in `options` (GET /v1/methods)"
)


def error_response(e: FaceError) -> JSONResponse:
    return JSONResponse(openai_error(e.status, e.message, e.code), e.status, headers=e.headers())


def _invalid(errors: list[Any]) -> FaceError:
    """A validation failure as one line; unknown parameters named as such."""
    parts = []
    for err in errors:
        loc = [str(p) for p in err.get("loc", ()) if p != "body"]
        where = ".".join(loc) or "request"
        if err.get("type") == "extra_forbidden" and len(loc) == 1:
            parts.append(f"unsupported parameter {where!r}: {_UNSUPPORTED}")
        else:
            parts.append(f"{where}: {err.get('msg', '')}")
    return FaceError(400, "invalid request: " + "; ".join(parts)[:1000], "invalid_request")


class OpenAIRoute(APIRoute):
    """A route whose refusals (validation included) are OpenAI's error object."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as e:
                return error_response(_invalid(list(e.errors())))
            except FaceError as e:
                return error_response(e)
            except StarletteHTTPException as e:
                if e.status_code != 400:
                    raise
                body = "invalid request: the body is not valid JSON (UTF-8)"
                return error_response(FaceError(400, body, "invalid_json"))

        return route


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": om.OpenAIErrorOut, "description": text}
    for code, text in {
        400: "Invalid request, unsupported parameter or option",
        401: "Missing or wrong bearer token",
        404: "No such model",
        413: "Request body too large",
        429: "Rate limit reached, or every answer slot is busy (see Retry-After)",
        502: "The LLM or the retriever failed",
        504: "The answer took longer than the timeout",
    }.items()
}
CHAT_200 = {
    "description": "A chat completion, or with `stream: true` its chunks as server-sent events",
    "content": {"text/event-stream": {"schema": om.STREAM_EVENT}},
}


def register_openai_routes(app: FastAPI, engine: Engine, settings: Any) -> None:
    """Add ``/v1/models`` and ``/v1/chat/completions`` to ``app`` (``settings``: the
    service's ``Settings``: token, timeout, question limit, heartbeat)."""
    router = APIRouter(route_class=OpenAIRoute, tags=["openai"])
    ChatRequest = om.chat_request_model()
    auth = token_dependencies(settings.token)
    started = int(time.time())

    @router.get("/v1/models", response_model=om.ModelsOut, responses=ERRORS, dependencies=auth)
    async def list_models() -> Any:
        """One model per method; its id is the method's name."""
        from searchain.methods import catalog

        data = [
            {"id": name, "created": started, "description": catalog.description(name)}
            for name in engine.methods
        ]
        return {"object": "list", "data": data}

    @router.post(
        "/v1/chat/completions",
        response_model=om.ChatCompletionOut,
        response_model_exclude_unset=True,  # `confidence` only where the method has one
        responses={200: CHAT_200, **ERRORS},
        dependencies=auth,
    )
    async def chat_completions(req: ChatRequest, request: Request) -> Any:  # type: ignore[valid-type]
        """Answer the last user message with the method named by ``model``."""
        if req.model not in engine.methods:  # type: ignore[attr-defined]
            raise FaceError(
                404,
                f"no model {req.model!r} here; see GET /v1/models",  # type: ignore[attr-defined]
                "model_not_found",
            )
        question = question_of(req.messages, settings.max_question_chars)  # type: ignore[attr-defined]
        options = req.options.given() if req.options is not None else {}  # type: ignore[attr-defined]
        runner = await start_answer(engine, req.model, options, question)  # type: ignore[attr-defined]
        answering = Answering(engine, runner, question, settings.timeout)
        reply = Reply(req.model, str(request.base_url), settings.token)  # type: ignore[attr-defined]
        if req.stream:  # type: ignore[attr-defined]
            usage_chunk = req.stream_options is not None and req.stream_options.include_usage  # type: ignore[attr-defined]
            return EventStream(reply.chunks(answering, settings.heartbeat, usage_chunk))
        try:
            trace = await answering.trace()
        finally:
            answering.cancel()
        return public(reply.completion(trace))

    app.include_router(router)


def question_of(messages: list[om.ChatMessage], max_chars: int) -> str:
    """The last user message's text, within the service's question limit."""
    last = next((m for m in reversed(messages) if m.role == "user"), None)
    if last is None:
        raise FaceError(
            400, "no user message: the last user message is the question", "invalid_request"
        )
    text = last.text()
    if text is None:
        raise FaceError(
            400, "the question must be text (image and file parts are not read)", "invalid_request"
        )
    if not text.strip():
        raise FaceError(400, "the last user message is empty", "invalid_request")
    if len(text) > max_chars:
        raise FaceError(
            400,
            f"the question is {len(text)} characters long; this service "
            f"accepts at most {max_chars}",
            "question_too_long",
        )
    return text


class Reply:
    """One completion's identity (id, time, model) and how a trace becomes its body."""

    def __init__(self, model: str, base: str, token: str | None = None) -> None:
        self.model, self.base, self.token = model, base, token
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def head(self) -> dict[str, Any]:
        return {"id": self.id, "created": self.created, "model": self.model}

    def message(self, trace: Trace) -> tuple[dict[str, Any], list[Source]]:
        srcs = sources(trace)
        text, shown = answer_text(trace), shown_answer(trace)
        lead = len(shown) - len(text)  # a withheld answer's notice stands before the marks
        content = f"{shown}\n\n{footer(srcs, confidence(trace), route_words(trace))}"
        by_mark = {s.mark: s for s in srcs}
        annotations = [
            {
                "type": "url_citation",
                "url_citation": {
                    "start_index": lead + m.start(),
                    "end_index": lead + m.end(),
                    "title": by_mark[int(m[1])].locator,
                    "url": page_link(self.base, by_mark[int(m[1])].passage.id, self.token),
                },
            }
            for m in _MARK.finditer(text)
            if int(m[1]) in by_mark
        ]
        message = {
            "role": "assistant",
            "content": content,
            "refusal": None,
            "annotations": annotations,
        }
        return message, srcs

    def extras(self, trace: Trace, srcs: list[Source]) -> dict[str, Any]:
        """The top-level ``citations`` list and searchain's own block."""
        own: dict[str, Any] = {
            "method": trace.method,
            "answer": trace.answer,
            "sources": [s.to_dict() for s in srcs],
        }
        conf = confidence(trace)
        if conf is not None:
            own["confidence"] = conf
        citations = [page_link(self.base, p.id, self.token) for p in trace.references]
        return {"citations": citations, "searchain": own}

    @staticmethod
    def usage(trace: Trace) -> dict[str, int]:
        u = trace.usage
        return {
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.prompt_tokens + u.completion_tokens,
        }

    def completion(self, trace: Trace) -> dict[str, Any]:
        message, srcs = self.message(trace)
        return {
            **self.head(),
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
            ],
            "usage": self.usage(trace),
            **self.extras(trace, srcs),
        }

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**self.head(), "object": "chat.completion.chunk", "choices": [choice]}

    async def chunks(
        self, answering: Answering, heartbeat: float, usage_chunk: bool
    ) -> AsyncIterator[str]:
        """The stream: the role, progress lines as ``reasoning_content``, the answer, the
        closing chunk (citations; usage unless a usage chunk follows), ``[DONE]``."""
        try:
            yield sse(self.chunk({"role": "assistant", "content": ""}))
            async for event in answering.events(heartbeat):
                line = describe(event) if event is not None else None
                if event is None:
                    yield KEEP_ALIVE
                elif line:
                    yield sse(self.chunk({"reasoning_content": line + "\n"}))
            try:
                trace = await answering.trace()
            except FaceError as e:
                yield sse(openai_error(e.status, e.message, e.code))
                return
            message, srcs = self.message(trace)
            yield sse(
                self.chunk({"content": message["content"], "annotations": message["annotations"]})
            )
            last = {**self.chunk({}, "stop"), **self.extras(trace, srcs)}
            if not usage_chunk:
                last["usage"] = self.usage(trace)
            yield sse(last)
            if usage_chunk:
                yield sse(
                    {
                        **self.head(),
                        "object": "chat.completion.chunk",
                        "choices": [],
                        "usage": self.usage(trace),
                    }
                )
            yield "data: [DONE]\n\n"
        finally:
            answering.cancel()
