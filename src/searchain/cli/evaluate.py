"""``searchain eval`` (run methods over a dataset into a resumable run directory) and
``searchain report`` (compare runs)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from searchain.cli.common import MethodOpt, console, err, fail
from searchain.cli.eval_options import (
    ConcurrencyOpt,
    DatasetOpt,
    ExecutorOpt,
    LimitOpt,
    MaxProbPlattOpt,
    MethodsOpt,
    NaivePlattOpt,
    NliOpt,
    OutOpt,
    QuestionDocsOpt,
    RayAddressOpt,
    RetryFailedOpt,
    ReuseOpt,
    RewardModelOpt,
    RewardReferenceOpt,
    SeedOpt,
    ToolsOpt,
)
from searchain.cli.model_options import (
    ConfidenceChecks,
    EvalRetrieval,
    KOpt,
    ModelOptions,
    RuntimeOptions,
)
from searchain.cli.option_groups import spec_of


def eval_(
    dataset: DatasetOpt,
    out: OutOpt,
    methods: MethodsOpt = "searchain",
    limit: LimitOpt = None,
    seed: SeedOpt = 0,
    concurrency: ConcurrencyOpt = 4,
    *,
    retrieval: EvalRetrieval,
    backend: ModelOptions,
    runtime: RuntimeOptions,
    k: KOpt = None,
    tools: ToolsOpt = None,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    nli: NliOpt = None,
    reward_model: RewardModelOpt = None,
    reward_reference: RewardReferenceOpt = None,
    option: MethodOpt = None,
    reuse_from: ReuseOpt = None,
    question_docs: QuestionDocsOpt = None,
    retry_failed: RetryFailedOpt = False,
    checks: ConfidenceChecks,
) -> None:
    """Run methods over a dataset into a run directory: every finished item is appended to
    results.jsonl (fsynced), failures are recorded and counted, and re-running the same
    command resumes where it stopped, even after kill -9.

    Methods: searchain, searchain-no-ir, searchain-no-verification, searchain-no-completion,
    retrieve-read (alias direct-retrieval), direct-prompting, cot, self-ask,
    self-ask-no-search, react, and the other methods of [bold]searchain ask --method[/]."""
    from searchain.eval.evaluate import EvalError, Evaluation, evaluate
    from searchain.methods.options import parse_method_options

    names = tuple(m.strip() for m in methods.split(",") if m.strip())
    try:
        ev = Evaluation(
            dataset=dataset,
            out=out,
            methods=names,
            spec=spec_of(retrieval, backend, runtime, checks),
            limit=limit,
            seed=seed,
            concurrency=concurrency,
            k=k,
            options=parse_method_options(option, list(names)) if option else None,
            tools=tools,
            nli=nli,
            reward_model=reward_model,
            reward_reference=reward_reference,
            question_docs=question_docs,
            executor=executor,
            ray_address=ray_address,
            retry_failed=retry_failed,
            reuse_from=reuse_from,
        )
        with evaluation_progress(len(names)) as progress:
            result = evaluate(ev, progress=progress, say=say)
    except (EvalError, ValueError) as e:
        fail(str(e))
    console.print_json(json.dumps(result))


def say(message: str) -> None:
    """An evaluation's notes on stderr (a resumed run's warnings in yellow)."""
    if message.startswith("warning:"):
        err.print(f"[yellow]{escape(message)}[/yellow]")
    else:
        err.print(escape(message))


@contextlib.contextmanager
def evaluation_progress(n_methods: int) -> Iterator[Callable[[Any, int], None]]:
    """A progress bar on stderr, fed by the runner's summaries."""
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    done = "{task.completed}/{task.total} done, {task.fields[failed]} failed"
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn(done),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err) as bar:
        task = bar.add_task("evaluating", total=None, failed=0)

        def progress(summary: Any, total: int) -> None:
            bar.update(
                task, total=total, completed=summary.done + summary.failed, failed=summary.failed
            )

        yield progress


def report(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories made by searchain eval.", exists=True, file_okay=False
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Also write report.md, report.csv and report.png here (and, when methods "
            "recorded confidences, selective.csv, risk_coverage.png and reliability.png).",
        ),
    ] = None,
    csv_out: Annotated[bool, typer.Option("--csv", help="Print CSV instead of Markdown.")] = False,
    paired: Annotated[
        bool,
        typer.Option(
            "--paired",
            help="Score only the items every method of a run has finished (for a partial "
            "run: all methods on the same questions).",
        ),
    ] = False,
    naive_platt: NaivePlattOpt = None,
    maxprob_platt: MaxProbPlattOpt = None,
    rescore: Annotated[
        bool,
        typer.Option(
            "--rescore",
            help="Score the recorded traces again with the current scoring (golds from the "
            "dataset the manifest names; no model runs) instead of the recorded metrics.",
        ),
    ] = False,
) -> None:
    """Compare runs: methods x metrics with 95 % bootstrap confidence intervals, then the
    SearChain paper's analyses of each run (efficiency of every method, knowledge sources of
    SearChain's nodes, effects of IR when a run holds searchain and searchain-no-ir), and
    selective answering for methods whose traces carry a confidence (AURC, ECE, selective
    cover-EM against the naive log-probability confidence).

    Example: searchain report runs/table-hotpotqa runs/table-musique --out runs/report"""
    from searchain.eval import report as rep

    if rescore:
        from searchain.eval.rescore import rescore as rescore_run

        try:
            loaded = [rescore_run(r) for r in runs]
        except (FileNotFoundError, ValueError) as e:
            fail(str(e))
    else:
        loaded = rep.load(list(runs))
    if paired:
        loaded = [rep.paired(r) for r in loaded]
    for r in loaded:
        if counts := rep.unpaired(r):
            err.print(
                f"[yellow]{r.name}: the methods did not all answer the same items "
                f"({', '.join(f'{m} {n}' for m, n in counts.items())}); --paired compares "
                "them on the same items[/yellow]"
            )
    rows = rep.summarize(loaded)
    if not rows:
        fail("no results in these run directories")
    selective: list[dict[str, object]] = []
    extra = (
        ""
        if csv_out and out is None
        else rep.analyses(loaded, naive_platt or (), maxprob_platt or (), selective)
    )
    print(rep.to_csv(rows) if csv_out else rep.markdown(rows) + ("\n" + extra if extra else ""))
    if out is not None:
        write_report(out, loaded, rows, extra, selective)


def write_report(
    out: Path, loaded: list[Any], rows: list[Any], extra: str, selective: list[dict[str, object]]
) -> None:
    """The report's files in ``out``: report.md, report.csv, report.png, and for methods with
    confidences selective.csv and the two plots."""
    from searchain.eval import report as rep
    from searchain.eval.selective.plots import plots as selective_plots

    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(rep.markdown(rows) + ("\n" + extra if extra else ""))
    (out / "report.csv").write_text(rep.to_csv(rows))
    written = ["report.md", "report.csv", "report.png"]
    if selective:  # the selective tables' statistics, for scripts
        (out / "selective.csv").write_text(rep.selective_csv(selective))
        written.append("selective.csv")
    rep.bar_chart(rows, out / "report.png")
    plots = [p.name for p in selective_plots(loaded, out)]
    err.print(f"wrote {out}/" + ", ".join([*written, *plots]))
