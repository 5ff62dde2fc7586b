"""The options every answering command shares (``ask``, ``eval``, ``serve``, ``mcp``),
declared once: the model, its endpoint and prompt form, the call cache, threads, ``-k``,
abstention and the costly confidence checks; and the groups a command lists
(``option_groups.py``), each of which says what it fills of the assembly
:class:`~searchain.methods.assembly.Spec`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from searchain.cli.common import DenseIndexOpt, IndexOpt, RetrieverOpt
from searchain.cli.option_groups import OptionGroup
from searchain.cli.serve_options import (
    BackendOpt,
    ServeDenseIndexOpt,
    ServeIndexOpt,
    ServeRetrieverOpt,
)
from searchain.llm.models import ANSWER_MODEL_HELP, API_HELP, MODEL_PATH_HELP
from searchain.methods.assembly import model_string
from searchain.retrieval.factory import DEFAULT_RETRIEVER

LlmOpt = Annotated[
    str,
    typer.Option(
        "--llm",
        help="[bold]local[/] (embedded GGUF model) or [bold]openai[/] (any OpenAI-compatible "
        "endpoint). --model openai:NAME@URL says both in one string.",
    ),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        help=ANSWER_MODEL_HELP + " Or one string: local:NAME, local:PATH.gguf, "
        "openai:NAME@BASE_URL."
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        help="Endpoint for --llm openai, e.g. http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL)."
    ),
]
ApiOpt = Annotated[str, typer.Option(help=API_HELP)]
ModelPathOpt = Annotated[Path | None, typer.Option(help=MODEL_PATH_HELP)]
CacheOpt = Annotated[bool, typer.Option(help="Use the on-disk LLM call cache.")]
ThreadsOpt = Annotated[
    int | None,
    typer.Option(help="CPU threads for --llm local (default: $SEARCHAIN_THREADS or all cores)."),
]
KOpt = Annotated[
    int | None,
    typer.Option(
        "-k",
        help="Passages per search, for every method that searches (default: each method's "
        "own: 1 for SearChain, as in the paper; 5 for retrieve-read). Retrieval Recall@10 of "
        "direct-retrieval needs -k 10.",
    ),
]
ConfidenceCheckOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--confidence-check",
        metavar="CHECK",
        help="A confidence signal that costs model calls, run after the answer (its cost is "
        "in the confidence): [bold]nli[/] asks the model whether the cited passages state "
        "the answer (two scoring calls); [bold]consistency[/] has it answer again from them, "
        "5 samples, and counts how many agree (one call of 5 samples); [bold]likelihood[/] "
        "scores the answer as the model's reply to the question alone (one scoring call). "
        "Repeat for several.",
        show_default=False,
    ),
]


AbstainOpt = Annotated[
    float | None,
    typer.Option(
        help="Withhold an answer whose confidence is below P (0-1): it is said plainly, with the "
        "best unverified guess; the guess stays in the trace.",
        min=0.0,
        max=1.0,
        show_default=False,
    ),
]
MaxRiskOpt = Annotated[
    float | None,
    typer.Option(
        help="Withhold answers below the threshold certified to keep the error rate among "
        "answered questions at most R (probability 1 - δ, under exchangeability with the "
        "calibrator's certification items). Needs a calibrated confidence for the exact "
        "configuration; where none is certified, every answer is withheld, and says why.",
        min=0.0,
        max=1.0,
        show_default=False,
    ),
]
RiskDeltaOpt = Annotated[
    float,
    typer.Option(
        "--risk-delta",
        help="δ of --max-risk: the guarantee holds with probability at least 1 - δ.",
        min=0.001,
        max=0.5,
    ),
]


@dataclass(frozen=True)
class RetrievalOptions(OptionGroup):
    """The retriever and its indexes."""

    index: IndexOpt = None
    retriever: RetrieverOpt = DEFAULT_RETRIEVER
    dense_index: DenseIndexOpt = None

    def spec_fields(self) -> dict[str, Any]:
        return {
            "retriever": self.retriever,
            "index": str(self.index) if self.index else None,
            "dense_index": str(self.dense_index) if self.dense_index else None,
        }


@dataclass(frozen=True)
class EvalRetrieval(RetrievalOptions):
    """``eval``'s: plain BM25 by default, as the recorded runs were made."""

    retriever: RetrieverOpt = "bm25"


@dataclass(frozen=True)
class ServedRetrieval(RetrievalOptions):
    """``serve``'s and ``mcp``'s, described for an operator."""

    index: ServeIndexOpt = None
    retriever: ServeRetrieverOpt = DEFAULT_RETRIEVER
    dense_index: ServeDenseIndexOpt = None


@dataclass(frozen=True)
class ModelOptions(OptionGroup):
    """The model: its backend, name or file, endpoint and prompt form."""

    llm: LlmOpt = "local"
    model: ModelOpt = None
    base_url: BaseUrlOpt = None
    api: ApiOpt = "auto"
    model_path: ModelPathOpt = None

    def spec_fields(self) -> dict[str, Any]:
        return {
            "model": model_string(self.llm, self.model, self.base_url, self.model_path),
            "api": self.api,
        }


@dataclass(frozen=True)
class ServedModel(ModelOptions):
    """``serve``'s and ``mcp``'s (``--llm`` also spelled ``--backend``)."""

    llm: BackendOpt = "local"


@dataclass(frozen=True)
class RuntimeOptions(OptionGroup):
    """How the model runs here: the call cache and the CPU threads."""

    cache: CacheOpt = True
    threads: ThreadsOpt = None

    def spec_fields(self) -> dict[str, Any]:
        return {"cache": self.cache, "threads": self.threads}


@dataclass(frozen=True)
class AbstentionOptions(OptionGroup):
    """When an answer is withheld: below a confidence, or a certified risk bound."""

    abstain_below: AbstainOpt = None
    max_risk: MaxRiskOpt = None
    risk_delta: RiskDeltaOpt = 0.1

    def spec_fields(self) -> dict[str, Any]:
        return {
            "abstain_below": self.abstain_below,
            "max_risk": self.max_risk,
            "risk_delta": self.risk_delta,
        }


@dataclass(frozen=True)
class ConfidenceChecks(OptionGroup):
    """The confidence signals that cost model calls."""

    confidence_check: ConfidenceCheckOpt = None

    def spec_fields(self) -> dict[str, Any]:
        return {"confidence_checks": tuple(self.confidence_check or ())}
