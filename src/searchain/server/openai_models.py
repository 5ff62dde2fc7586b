"""The shapes of the OpenAI-compatible chat face (``server/openai_face.py``): what a chat
completion request may carry, and what the service answers, as OpenAI's SDK parses them.

A request is strict: OpenAI's sampling parameters (``temperature``, ``top_p``,
``max_tokens``...) are refused with a 400 naming them, because a method answers with its own
settings and accepting them would change nothing the client can see. Method settings a
client may choose go in ``options`` (the ``/v1/ask`` allow-list: plain, bounded values).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from searchain.server.request_options import ask_options_model


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = Field(description="Only `text` parts are read.")
    text: str | None = None


class ChatMessage(BaseModel):
    # Earlier turns may carry what other servers add (tool calls, names): they are history.
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[TextPart] | None = None

    def text(self) -> str | None:
        """The message's text; ``None`` when a part is not text (an image, a file)."""
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        if any(p.type != "text" for p in self.content):
            return None
        return "\n".join(p.text or "" for p in self.content)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    include_usage: bool = False


class ChatBase(BaseModel):
    model_config = ConfigDict(extra="forbid")


def chat_request_model(max_messages: int = 1000) -> type[ChatBase]:
    """The request model, with this server's option allow-list (``server/request_options.py``)."""
    options = ask_options_model()
    return create_model(  # type: ignore[call-overload,no-any-return]
        "ChatCompletionRequest",
        __base__=ChatBase,
        model=(str, Field(min_length=1, max_length=100, description="A method: GET /v1/models")),
        messages=(
            list[ChatMessage],
            Field(
                min_length=1,
                max_length=max_messages,
                description="The last user message is the question; earlier turns are "
                "not used for the answer (each question is answered on its own).",
            ),
        ),
        stream=(bool, False),
        stream_options=(StreamOptions | None, None),
        n=(Literal[1], Field(1, description="One answer per request.")),
        user=(str | None, Field(None, max_length=256, description="Accepted; not used.")),
        options=(options | None, Field(None, description="Method settings (GET /v1/methods).")),
    )


# -- responses ----------------------------------------------------------------------------


class OpenAIError(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class OpenAIErrorOut(BaseModel):
    error: OpenAIError


class ModelOut(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "searchain"
    description: str = ""


class ModelsOut(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]


class URLCitation(BaseModel):
    start_index: int
    end_index: int
    title: str
    url: str


class AnnotationOut(BaseModel):
    type: Literal["url_citation"] = "url_citation"
    url_citation: URLCitation


class MessageOut(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str
    refusal: str | None = None
    annotations: list[AnnotationOut] = []


class ChoiceOut(BaseModel):
    index: int = 0
    message: MessageOut
    finish_reason: Literal["stop"] = "stop"
    logprobs: None = None


class UsageOut(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class SourceOut(BaseModel):
    mark: int
    id: str
    locator: str
    title: str = ""
    text: str = ""
    source: dict[str, Any] | None = None


class SearchainOut(BaseModel):
    """What only searchain says: the method, the short answer, the cited passages and the
    answer's confidence (a probability only when calibrated)."""

    method: str
    answer: str
    sources: list[SourceOut]
    confidence: dict[str, Any] | None = None  # value, calibrated, lowered_by, abstained


class ChatCompletionOut(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChoiceOut]
    usage: UsageOut
    citations: list[str] = Field(
        description="One link per reference: citations[n-1] is the passage of mark [n] "
        "(Perplexity's convention, read by LiteLLM and LibreChat)."
    )
    searchain: SearchainOut


# One server-sent event of a streamed completion, as schema tools read a text/event-stream
# schema (per event): its JSON data (a chunk, an error, or the closing [DONE]).
STREAM_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["data"],
    "properties": {
        "data": {"type": "string"},
        "event": {"type": "string"},
        "id": {"type": "string"},
        "retry": {"type": "integer"},
    },
}
