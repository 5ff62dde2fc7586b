"""The native face's response shapes (pydantic), so the OpenAPI schema says exactly what the
service answers; what a request may ask for is ``server/request_options.py``'s."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class ErrorOut(BaseModel):
    error: str


class SourceOut(BaseModel):
    """Where a passage of a user's document lies (``searchain index FOLDER``)."""

    path: str
    page: int | None = None
    row: int | None = None
    heading: list[str] = []
    start: int | None = None
    end: int | None = None


class PassageOut(BaseModel):
    id: str
    text: str
    title: str = ""
    score: float | None = None
    source: SourceOut | None = None


class ContextOut(BaseModel):
    """A document passage and its neighbours in the same file (``GET /v1/passages/context``)."""

    passage: PassageOut
    before: list[PassageOut] = []
    after: list[PassageOut] = []


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


class ConfidenceOut(BaseModel):
    """How likely the answer is right: a probability only when ``calibrated``."""

    value: float
    calibrated: bool
    signals: dict[str, float] = {}
    calibrator: dict[str, Any] | None = None
    naive: float | None = None
    abstained: bool = False
    threshold: float | None = None
    note: str = ""
    cost: dict[str, float] = {}
    lowered_by: list[str] = []
    raised_by: list[str] = []
    terms: str = ""  # a risk bound's guarantee, or why no threshold was certified


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
    confidence: ConfidenceOut | None = None


class MethodOut(BaseModel):
    name: str
    description: str = ""
    settings: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Every setting of the method; those with remote=true a request may set.",
    )


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
    corrupt: int = Field(0, description="Lines of results.jsonl that are not records")


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
    corrupt: int = 0
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
