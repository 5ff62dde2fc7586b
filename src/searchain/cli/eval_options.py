"""The options of ``searchain eval`` and ``report`` that no other command has, one each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DatasetOpt = Annotated[
    str,
    typer.Option(
        help="A dataset name (hotpotqa, musique, strategyqa, fever = SUPPORTS/REFUTES "
        "claims as in the paper, fever-nei, nq, webq, ...) or a file path."
    ),
]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Run directory (re-run to resume).")]
MethodsOpt = Annotated[str, typer.Option(help="Comma-separated methods.")]
LimitOpt = Annotated[int | None, typer.Option(help="Evaluate this many items.")]
SeedOpt = Annotated[int, typer.Option(help="Seed of the --limit subsample.")]
ConcurrencyOpt = Annotated[int, typer.Option(help="Items answered at once.")]
ExecutorOpt = Annotated[
    str,
    typer.Option(
        help="[bold]local[/] (threads in this process) or [bold]ray[/] (each item a Ray "
        "task; needs the ray extra). Results and resume are the same either way."
    ),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        help="Ray cluster to join for --executor ray (e.g. auto, ray://HOST:10001; "
        "default: start a local one). Workers need searchain installed."
    ),
]
QuestionDocsOpt = Annotated[
    bool | None,
    typer.Option(
        "--question-docs/--no-question-docs",
        help="Search each item's own retrieved passages (ALCE's docs), as ALCE and "
        "Think&Cite do; default: when every item ships them.",
        show_default=False,
    ),
]
ReuseOpt = Annotated[
    Path | None,
    typer.Option(
        help="Start this new run with another run's finished records of the methods whose "
        "settings did not change (same data, items, model, retriever, index): after changing "
        "one method's setting, only that method runs again.",
        show_default=False,
    ),
]
ToolsOpt = Annotated[
    Path | None,
    typer.Option(
        help="REBEL tools file (YAML/TOML/JSON): built-in search and calculator, HTTP APIs. "
        "Default: a search tool over the retriever.",
        show_default=False,
    ),
]
NliOpt = Annotated[
    str | None,
    typer.Option(
        help="NLI judge: [bold]llm[/] (the LLM answers Yes/No), the path of a local Hugging "
        "Face NLI model (TRUE T5, DeBERTa/RoBERTa MNLI), or [bold]none[/]. Think&Cite's R_a; "
        "in eval, also ALCE citation recall/precision and ELI5 claim recall (ALCE datasets: "
        "llm unless given)."
    ),
]
RewardModelOpt = Annotated[
    str | None,
    typer.Option(
        "--reward-model",
        help="Think&Cite's R_g reward model π: an embedded model name, a GGUF file, "
        "openai:MODEL@BASE_URL or policy (default: qwen2.5-coder-1.5b).",
    ),
]
RewardReferenceOpt = Annotated[
    str | None,
    typer.Option(
        "--reward-reference",
        "--reference",
        help="Think&Cite's R_g reference model π_ref: the same kinds, or none (R_g off: R_a "
        "only, said in the trace; default: qwen2.5-coder-0.5b).",
    ),
]
RetryFailedOpt = Annotated[
    bool,
    typer.Option(
        "--retry-failed",
        help="Also answer again the items whose last attempt failed (after a server "
        "outage, say). Every attempt stays in results.jsonl; reports use the last.",
    ),
]
# ``searchain report``'s: where the Platt-scaled naive baseline is fit.
NaivePlattOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--naive-platt",
        help="A calibration run whose traces carry naive values (repeatable): the naive "
        "confidence is also compared Platt-scaled, fit on its fit items (never on a "
        "reported item).",
        exists=True,
        file_okay=False,
    ),
]
MaxProbPlattOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--maxprob-platt",
        help="A calibration run made with the method setting maxprob (repeatable): the "
        "MaxProb baseline is also compared Platt-scaled, fit on its fit items (never on a "
        "reported item).",
        exists=True,
        file_okay=False,
    ),
]
