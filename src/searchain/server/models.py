"""The HTTP service's request and response shapes (pydantic), so the OpenAPI schema says
exactly what the service accepts and answers."""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    create_model,
    field_validator,
    model_validator,
)

# Options that name files or models on the server: a client must never choose them (a
# ``template`` path would let anyone read a server file into a prompt).
SERVER_SIDE_OPTIONS = frozenset({"template", "reader", "model_path", "index", "dense_index"})
_OPTION_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
ExtraValue = StrictBool | StrictInt | StrictFloat | str | None


class AskOptions(BaseModel):
    """Per-request method options. The common ones are typed and bounded; other methods'
    options (any ``snake_case`` name with a scalar value) are passed on to the method, which
    rejects names it does not know."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, ExtraValue] = Field(init=False)  # type: ignore[assignment]

    k: int | None = Field(None, ge=1, le=20, description="Passages per query.")
    r_max: int | None = Field(None, ge=1, le=10, description="SearChain: maximum rounds.")
    max_tokens: int | None = Field(None, ge=1, le=1024, description="Tokens per generation.")
    trace_max_tokens: int | None = Field(None, ge=1, le=1024)
    task: Literal["multihop", "yesno", "factcheck", "longform"] | None = None
    theta: float | None = Field(None, ge=-100, le=100, description="Reader threshold θ.")
    alpha: float | None = Field(None, ge=0, le=1)
    dedup_threshold: float | None = Field(None, ge=0, le=1)
    dedup: Literal["auto", "exact", "embedding"] | None = None
    verification: bool | None = None
    completion: bool | None = None
    use_ir: bool | None = None
    post_cite: bool | None = None

    @model_validator(mode="after")
    def _check_extras(self) -> AskOptions:
        for name, value in (self.__pydantic_extra__ or {}).items():
            if name in SERVER_SIDE_OPTIONS:
                raise ValueError(f"option {name!r} is set on the server, not per request")
            if not _OPTION_NAME.match(name):
                raise ValueError(f"option name {name!r} is not snake_case")
            if isinstance(value, str) and len(value) > 200:
                raise ValueError(f"option {name!r} is longer than 200 characters")
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if number and (not math.isfinite(value) or abs(value) > 10_000):  # type: ignore[arg-type]
                raise ValueError(f"option {name!r} must be a finite number within ±10000")
        return self

    def given(self) -> dict[str, Any]:
        """The options the client set (``None`` means "the method's default")."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class AskBase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    options: AskOptions = Field(default_factory=AskOptions)

    @field_validator("question", check_fields=False)
    @classmethod
    def _not_blank(cls, q: str) -> str:
        if not q.strip():
            raise ValueError("question is empty")
        return q


def ask_model(methods: tuple[str, ...], default: str, max_chars: int) -> type[AskBase]:
    """The request model for this server: its methods and question limit are in the schema."""
    return create_model(  # type: ignore[call-overload,no-any-return]
        "AskRequest",
        __base__=AskBase,
        question=(str, Field(min_length=1, max_length=max_chars, description="The question.")),
        method=(Literal[methods], Field(default, description="See GET /v1/methods.")),  # type: ignore[valid-type]
    )


# -- responses ----------------------------------------------------------------------------


class ErrorOut(BaseModel):
    error: str


class PassageOut(BaseModel):
    id: str
    text: str
    title: str = ""
    score: float | None = None


class CitationOut(BaseModel):
    mark: int
    passage_id: str | None
    sentence: str = ""
    origin: str = "model"


class NodeOut(BaseModel):
    id: str
    query: str
    answer: str | None = None
    source: str = "llm"
    parent: str | None = None
    passages: list[PassageOut] = []
    meta: dict[str, Any] = {}


class UsageOut(BaseModel):
    llm_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0


class TraceOut(BaseModel):
    """A method's answer and how it was reached (``searchain.types.Trace``)."""

    question: str
    method: str
    answer: str = ""
    final_content: str = ""
    references: list[PassageOut] = []
    citations: list[CitationOut] = []
    nodes: list[NodeOut] = []
    rounds: int = 0
    usage: UsageOut = UsageOut()
    wall_seconds: float = 0.0
    errors: list[str] = []
    meta: dict[str, Any] = {}


class MethodOut(BaseModel):
    name: str
    description: str = ""


class MethodsOut(BaseModel):
    methods: list[MethodOut]
    default: str


class HealthOut(BaseModel):
    status: Literal["ok"]
    service: str
    methods: list[str]
    busy: int
    max_concurrent: int
    auth: bool
    llm: str
    retriever: str


class CellOut(BaseModel):
    mean: float
    lo: float
    hi: float


class MetricsRowOut(BaseModel):
    method: str
    items: int
    failed: int
    metrics: dict[str, CellOut]


class RunOut(BaseModel):
    name: str
    dataset: str | None = None
    methods: list[str] = []
    created: str | None = None
    records: int
    errors: int


class RunsOut(BaseModel):
    runs: list[RunOut]


class ItemSummaryOut(BaseModel):
    id: str
    method: str
    question: str
    status: str
    answer: str = ""
    metrics: dict[str, float] = {}
    seconds: float | None = None
    error: str | None = None
    failure: bool


class RunDetailOut(BaseModel):
    name: str
    manifest: dict[str, Any]
    metrics: list[MetricsRowOut]
    total: int
    offset: int
    limit: int
    items: list[ItemSummaryOut]


class RecordOut(BaseModel):
    id: str
    method: str
    question: str
    status: str
    metrics: dict[str, float] = {}
    seconds: float | None = None
    error: str | None = None
    trace: TraceOut | None = None


class ItemOut(BaseModel):
    run: str
    id: str
    records: list[RecordOut]
