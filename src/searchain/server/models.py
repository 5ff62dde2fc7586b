"""The HTTP service's request and response shapes (pydantic), so the OpenAPI schema says
exactly what the service accepts and answers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    create_model,
    field_validator,
    model_validator,
)

# Options that name files, models or endpoints: the operator sets them when the service
# starts (``Engine(method_options=...)``), never a client. Named here only so the refusal
# says where they belong; any other name outside the allow-list below is refused too.
SERVER_SIDE_OPTIONS = frozenset({
    "template", "reader", "model", "model_path", "index", "dense_index", "retriever",
    "reference", "nli", "judge", "tools", "base_url", "api", "api_key", "embedder",
})  # fmt: skip

Tokens = Annotated[int, Field(ge=1, le=1024)]
Small = Annotated[int, Field(ge=0, le=20)]
Weight = Annotated[float, Field(ge=0, le=10)]


class AskOptions(BaseModel):
    """Per-request method options: an allow-list of plain values (numbers, booleans and
    enumerated strings), each bounded. Nothing here can name a path, URL, model or endpoint.
    A method refuses (422) an option of this list that it does not take."""

    model_config = ConfigDict(extra="forbid")

    # -- shared, and SearChain's
    k: int | None = Field(None, ge=1, le=20, description="Passages per query.")
    r_max: int | None = Field(None, ge=1, le=10, description="SearChain: maximum rounds.")
    max_tokens: Tokens | None = Field(None, description="Tokens per generation.")
    trace_max_tokens: Tokens | None = None
    task: Literal["multihop", "yesno", "factcheck", "longform"] | None = None
    theta: float | None = Field(None, ge=-100, le=100, description="Reader threshold θ.")
    alpha: float | None = Field(None, ge=0, le=1)
    dedup_threshold: float | None = Field(None, gt=0, le=1)
    dedup: Literal["auto", "exact", "embedding"] | None = None
    verification: bool | None = None
    completion: bool | None = None
    use_ir: bool | None = None
    post_cite: bool | None = None
    # -- REBEL (max_depth: Think&Cite's tree depth too)
    max_depth: int | None = Field(None, ge=0, le=10)
    max_llm_calls: int | None = Field(None, ge=1, le=200)
    max_tool_calls: int | None = Field(None, ge=0, le=50)
    max_subquestions: int | None = Field(None, ge=1, le=10)
    memory_check: Literal["llm", "never"] | None = None
    output_chars: int | None = Field(None, ge=100, le=100_000)
    context_chars: int | None = Field(None, ge=100, le=100_000)
    split_tokens: Tokens | None = None
    input_tokens: Tokens | None = None
    answer_tokens: Tokens | None = None
    chat_tokens: Tokens | None = None
    # -- Think&Cite
    family: Literal["asqa", "qampari", "eli5"] | None = None
    n_children: int | None = Field(None, ge=1, le=10)
    max_iterations: int | None = Field(None, ge=1, le=200)
    exploration: float | None = Field(None, ge=0, le=10)
    seed: int | None = Field(None, ge=0, le=2**31 - 1)
    max_failures: int | None = Field(None, ge=1, le=20)
    reflection: bool | None = None
    max_reflections: Small | None = None
    n_demos: int | None = Field(None, ge=0, le=8)
    demo_doc_words: int | None = Field(None, ge=1, le=1000)
    temperature: float | None = Field(None, ge=0, le=2)
    resamples: Small | None = None
    max_prompt_chars: int | None = Field(None, ge=1000, le=100_000)
    query_tokens: Tokens | None = None
    reflexion_tokens: Tokens | None = None
    output_tokens: Tokens | None = None
    max_citations: int | None = Field(None, ge=1, le=10)
    use_rg: bool | None = None
    use_ra: bool | None = None
    rg_weight: Weight | None = None
    ra_weight: Weight | None = None
    # -- the baselines (self-ask, ReAct)
    max_follow_ups: int | None = Field(None, ge=1, le=20)
    step_tokens: Tokens | None = None
    read_tokens: Tokens | None = None
    max_steps: int | None = Field(None, ge=1, le=20)
    observation_words: int | None = Field(None, ge=1, le=1000)

    @model_validator(mode="before")
    @classmethod
    def _server_side(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name in data:
                if name in SERVER_SIDE_OPTIONS:
                    raise ValueError(
                        f"option {name!r} is set on the server when it starts, not per request"
                    )
        return data

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
