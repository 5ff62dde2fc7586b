"""The options every answering command shares (``ask``, ``eval``, ``serve``), declared once:
the model, its endpoint and prompt form, the call cache, threads, ``-k``; and the one place
they become an assembly :class:`~searchain.methods.assembly.Spec`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from searchain.llm.models import ANSWER_MODEL_HELP, API_HELP, MODEL_PATH_HELP
from searchain.methods.assembly import Spec, model_string
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


# The options every answering command declares under these names (the aliases above):
# ``cli_spec(**shared(locals()))`` passes them on without listing them again.
SHARED = (
    "llm",
    "model",
    "base_url",
    "api",
    "model_path",
    "retriever",
    "index",
    "dense_index",
    "cache",
    "threads",
    "confidence_check",
    "abstain_below",
    "max_risk",
    "risk_delta",
)


def shared(command_options: Mapping[str, Any]) -> dict[str, Any]:
    """The shared model and retriever options among a command's own (its ``locals()`` at the
    top of its body)."""
    return {name: command_options[name] for name in SHARED if name in command_options}


def cli_spec(
    *,
    method: str = "searchain",
    llm: str = "local",
    model: str | None = None,
    base_url: str | None = None,
    api: str = "auto",
    model_path: Path | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    index: str | Path | None = None,
    dense_index: str | Path | None = None,
    options: dict[str, Any] | None = None,
    cache: bool = True,
    threads: int | None = None,
    abstain_below: float | None = None,
    max_risk: float | None = None,
    risk_delta: float = 0.1,
    confidence_check: list[str] | None = None,
) -> Spec:
    """The spec the command line's options describe (ValueError: they do not fit)."""
    return Spec(
        method=method,
        model=model_string(llm, model, base_url, model_path),
        api=api,
        retriever=retriever,
        index=str(index) if index else None,
        dense_index=str(dense_index) if dense_index else None,
        options=dict(options or {}),
        cache=cache,
        threads=threads,
        abstain_below=abstain_below,
        max_risk=max_risk,
        risk_delta=risk_delta,
        confidence_checks=tuple(confidence_check or ()),
    )
