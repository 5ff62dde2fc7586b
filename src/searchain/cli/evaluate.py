"""``searchain eval`` (run methods over a dataset into a resumable run directory) and
``searchain report`` (compare runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from searchain.cli.common import (
    DenseIndexOpt,
    IndexOpt,
    MethodOpt,
    NliOpt,
    ReferenceOpt,
    RetrieverOpt,
    ReuseOpt,
    ToolsOpt,
    console,
    err,
    fail,
    is_llm_url,
    open_retriever,
    with_reports,
)
from searchain.llm.models import API_HELP, MODEL_HELP, MODEL_PATH_HELP
from searchain.types import Trace


def eval_(
    dataset: Annotated[
        str,
        typer.Option(
            help="A dataset name (hotpotqa, musique, strategyqa, fever = SUPPORTS/REFUTES "
            "claims as in the paper, fever-nei, nq, webq, ...) or a file path."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (re-run to resume).")],
    methods: Annotated[str, typer.Option(help="Comma-separated methods.")] = "searchain",
    limit: Annotated[int | None, typer.Option(help="Evaluate this many items.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the --limit subsample.")] = 0,
    concurrency: Annotated[int, typer.Option(help="Items answered at once.")] = 4,
    index: IndexOpt = None,
    retriever: RetrieverOpt = "bm25",
    dense_index: DenseIndexOpt = None,
    llm: Annotated[str, typer.Option("--llm", help="local or openai.")] = "local",
    model: Annotated[str | None, typer.Option(help=MODEL_HELP)] = None,
    base_url: Annotated[str | None, typer.Option(help="Endpoint for --llm openai.")] = None,
    api: Annotated[str, typer.Option(help=API_HELP)] = "auto",
    model_path: Annotated[Path | None, typer.Option(help=MODEL_PATH_HELP)] = None,
    cache: Annotated[bool, typer.Option(help="Use the on-disk LLM call cache.")] = True,
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            help="Passages per query (default: each method's own). Retrieval Recall@10 of "
            "direct-retrieval needs -k 10.",
        ),
    ] = None,
    tools: ToolsOpt = None,
    executor: Annotated[
        str,
        typer.Option(
            help="[bold]local[/] (threads in this process) or [bold]ray[/] (each item a Ray "
            "task; needs the ray extra). Results and resume are the same either way."
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Ray cluster to join for --executor ray (e.g. auto, ray://HOST:10001; "
            "default: start a local one). Workers need searchain installed."
        ),
    ] = None,
    nli: NliOpt = None,
    reference: ReferenceOpt = None,
    option: MethodOpt = None,
    reuse_from: ReuseOpt = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Also answer again the items whose last attempt failed (after a server "
            "outage, say). Every attempt stays in results.jsonl; reports use the last.",
        ),
    ] = False,
) -> None:
    """Run methods over a dataset into a run directory: every finished item is appended to
    results.jsonl (fsynced), failures are recorded and counted, and re-running the same
    command resumes where it stopped, even after kill -9.

    Methods: searchain, searchain-no-ir, searchain-no-verification, searchain-no-completion,
    retrieve-read (alias direct-retrieval), direct-prompting, cot, self-ask,
    self-ask-no-search, react, and the other methods of [bold]searchain ask --method[/]."""
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from searchain.eval.datasets import dataset_fingerprint, load_dataset
    from searchain.eval.runner import (
        Item,
        RunConfigMismatch,
        RunLocked,
        environment_changes,
        prepare_run_dir,
        run,
        runtime_environment,
    )
    from searchain.llm import LLMError, make_llm
    from searchain.methods.base import traced
    from searchain.methods.registry import build_method
    from searchain.scoring import score_trace

    try:
        examples = load_dataset(dataset, limit=limit, seed=seed)
    except (FileNotFoundError, ValueError) as e:
        fail(str(e))
    names = [m.strip() for m in methods.split(",") if m.strip()]
    nli = _default_alce_judge(examples, nli, out)
    from searchain.methods.options import parse_method_options

    try:
        method_options = parse_method_options(option, names)
    except ValueError as e:
        fail(str(e))
    fingerprint = dataset_fingerprint(dataset)
    config = {
        "dataset": dataset,
        "dataset_sha256": fingerprint["sha256"],
        "limit": limit,
        "seed": seed,
        "methods": names,
        "llm": llm,
        "model": model,
        "base_url": base_url,
        "api": api,  # replaced by the form it resolved to, below
        "retriever": retriever,
        "index": str(index) if index else None,
        "dense_index": str(dense_index) if dense_index else None,
    }
    if "labels" in fingerprint:  # a label filter (fever: no NOT ENOUGH INFO), said plainly
        config["dataset_labels"] = fingerprint["labels"]
    if k is not None:  # only when set, so earlier run directories keep their config hash
        config["k"] = k
    if model_path is not None:
        config["model_path"] = str(model_path)
    for key, value in (("nli", nli), ("reference", reference)):
        if value is not None:
            config[key] = value
    if option:  # only when given, so earlier run directories keep their config hash
        config["options"] = method_options
    if tools is not None:  # REBEL's tools file, by content
        import hashlib

        if not tools.is_file():
            fail(f"tools file not found: {tools}")
        config["tools"] = {
            "path": str(tools),
            "sha256": hashlib.sha256(tools.read_bytes()).hexdigest(),
        }
    if executor not in ("local", "ray"):
        fail(f"unknown executor {executor!r}; local or ray")
    if executor == "ray" and is_llm_url(retriever):
        fail("--executor ray does not support --retriever llm-url yet; use --executor local")
    r = None if is_llm_url(retriever) else open_retriever(retriever, index, dense_index)
    try:
        client = make_llm(llm, model=model, base_url=base_url, api=api, cache=cache,
                          model_path=str(model_path) if model_path else None)  # fmt: skip
        # The form the prompts took, not the flag: `auto` on a base model ran completions,
        # like the runs made before `auto` existed (their config hash stays valid).
        config["api"] = "chat" if client.form == "chat" else "completions"
        if r is None:  # LLM-URL asks the same LLM for URLs; keep page texts for doc recall
            import dataclasses

            r = open_retriever(retriever, index, dense_index, llm=client)
            r.config = dataclasses.replace(r.config, keep_documents=True)  # type: ignore[attr-defined]
            _exclude_evaluated_demos(r, examples, config)
        # The dataset's task reaches every task-aware method: SearChain picks its prompt
        # family, the baselines add its label instruction (StrategyQA Yes/No, FEVER labels).
        family = examples[0].task if examples else "multihop"
        tc = _thinkcite_eval_options(examples, nli, reference)
        opts = {n: {**_eval_options(n, family, tools), **(tc if n == "thinkcite" else {}),
                    **method_options[n]} for n in names}  # fmt: skip
        built = {n: build_method(n, client, r, k=k, **opts[n]) for n in names}  # type: ignore[arg-type]
        judge = _eval_judge(nli, client)
        runners = {n: with_reports(traced(m, client), retriever) for n, m in built.items()}
    except (LLMError, ValueError, ImportError) as e:
        fail(str(e))
    from searchain.eval.methods import describe

    # What each name resolved to (ablation flags, k, templates...), so the manifest says it.
    config["method_config"] = {n: describe(m) for n, m in built.items()}
    environment = runtime_environment(client, r)
    try:
        changes = environment_changes(out, environment)
        prepare_run_dir(out, config, environment)
    except (RunConfigMismatch, RunLocked) as e:
        fail(str(e))
    for change in changes:  # resumed, but its finished items may not compare with new ones
        err.print(f"[yellow]warning: resuming {out}: {change}[/yellow]")
    if reuse_from is not None:
        from searchain.eval.reuse import ReuseRefused, reuse_records

        try:
            reused = reuse_records(reuse_from, out, config, environment)
        except ReuseRefused as e:
            fail(str(e))
        err.print(f"reused from {reuse_from}: {reused or 'nothing'}")
    from searchain.scoring.alce import alce_gold, alce_scores

    items = [Item(e.id, e.question, {"answers": e.answers, "label": e.label, "task": e.task,
                                     **alce_gold(e)}) for e in examples]  # fmt: skip

    def score(item: Item, trace: Trace) -> dict[str, float]:
        # Every method on its final answer; the final content's scores as *_content beside.
        scores = score_trace(trace, item.gold)
        # Retrieval Recall@1/@10 (DPR has_answer) of direct-retrieval, LLM-URL's valid-URL share.
        from searchain.retrieval.llm_url.evaluation import retrieval_metrics

        scores.update(retrieval_metrics(trace, item.gold.get("answers") or []))
        scores.update(alce_scores(trace, item.gold, judge))  # ALCE datasets only
        return scores

    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
               "{task.total} done, {task.fields[failed]} failed"), TimeElapsedColumn(),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=err) as bar:
        # The total is known before the first item: "0/None done" told a person nothing.
        task = bar.add_task("evaluating", total=len(items) * len(names), failed=0)

        def progress(summary: object, total: int) -> None:
            bar.update(task, total=total, completed=summary.done + summary.failed,  # type: ignore[attr-defined]
                       failed=summary.failed)  # type: ignore[attr-defined]  # fmt: skip

        if executor == "ray":
            from searchain.eval.methods import MethodsSpec
            from searchain.eval.ray_executor import run_ray

            spec = MethodsSpec(
                tuple(names), llm=llm, model=model, base_url=base_url, api=config["api"],
                cache=cache, model_path=str(model_path) if model_path else None,
                retriever=retriever, index=str(index) if index else None,
                dense_index=str(dense_index) if dense_index else None, k=k,
                options=opts,
            )  # fmt: skip
            try:
                summary = run_ray(items, spec, out, address=ray_address, concurrency=concurrency,
                                  score=score, progress=progress,
                                  retry_failed=retry_failed)  # fmt: skip
            except ImportError as e:
                fail(str(e))
        else:
            try:
                summary = run(items, runners, out, concurrency=concurrency, score=score,
                              progress=progress, retry_failed=retry_failed)  # fmt: skip
            except RunLocked as e:
                fail(str(e))
    result = {"run": str(out), "done": summary.done, "failed": summary.failed,
              "skipped": summary.skipped, "seconds": round(summary.seconds, 2)}  # fmt: skip
    if getattr(summary, "quarantined", 0):  # corrupt lines set aside, their items redone
        result["quarantined"] = summary.quarantined
    console.print_json(json.dumps(result))


def _thinkcite_eval_options(
    examples: list, nli: str | None, reference: str | None
) -> dict[str, object]:
    """Think&Cite's demo family follows the dataset (QAMPARI lists, ELI5 why/how, else ASQA)."""
    from searchain.methods.thinkcite.prompting import family_for

    ex = examples[0] if examples else None
    fam = family_for(ex.task if ex else None, (ex.meta or {}).get("alce") if ex else None)
    return {"family": fam, "nli": None if nli == "none" else (nli or "llm"),
            "reference": reference}  # fmt: skip


def _default_alce_judge(examples: list, nli: str | None, out: Path) -> str | None:
    """ALCE datasets are scored on their citations too, as in the ALCE paper: without
    --nli the LLM judge does it. A run directory started before this default (its manifest
    has no judge) keeps going without one, so it still resumes."""
    if nli is not None or not examples or not (examples[0].meta or {}).get("alce"):
        return nli
    manifest = out / "manifest.json"
    if manifest.is_file():
        try:
            started = json.loads(manifest.read_text(encoding="utf-8")).get("config", {})
        except (OSError, ValueError):
            started = {"nli": None}  # unreadable: let the manifest check report it
        if "nli" not in started:
            err.print(f"{out} was started without an NLI judge: citation metrics stay off")
            return None
    err.print(
        "ALCE dataset: citation recall/precision by the LLM judge (--nli llm); give --nli "
        "PATH for a local NLI model, or --nli none to skip them"
    )
    return "llm"


def _eval_judge(nli: str | None, client: object) -> object:
    """The NLI judge of the ALCE citation metrics (None: those metrics are not computed)."""
    if nli is None or nli == "none":
        return None
    from searchain.readers.nli import make_judge

    return make_judge(nli, client)  # type: ignore[arg-type]


def _exclude_evaluated_demos(r: object, examples: list, config: dict[str, object]) -> None:
    """LLM-URL's few-shot demos never include an evaluated item (the packaged ones are MuSiQue
    train items, which `--dataset musique` evaluates): drop them, and say so in the manifest
    (only then, so run directories without an overlap keep their config hash)."""
    demos = r.exclude_demos([e.question for e in examples], [e.id for e in examples])  # type: ignore[attr-defined]
    if demos["excluded"]:
        config["llm_url_demos"] = demos
        err.print(
            f"LLM-URL: {len(demos['excluded'])} demo(s) are evaluated items and were left out; "
            f"the prompt shows {demos['shots']} other(s)"
        )


def _eval_options(method: str, task: str, tools: Path | None) -> dict[str, object]:
    from searchain.methods.registry import task_options

    if method == "rebel" and tools is not None:
        return {"tools": str(tools)}
    return dict(task_options(method, task))


def report(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories made by searchain eval.", exists=True, file_okay=False
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Also write report.md, report.csv and report.png here."),
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
    SearChain's nodes, effects of IR when a run holds searchain and searchain-no-ir).

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
    extra = "" if csv_out else rep.analyses(loaded)
    print(rep.to_csv(rows) if csv_out else rep.markdown(rows) + ("\n" + extra if extra else ""))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(rep.markdown(rows) + ("\n" + extra if extra else ""))
        (out / "report.csv").write_text(rep.to_csv(rows))
        rep.bar_chart(rows, out / "report.png")
        err.print(f"wrote {out}/report.md, report.csv, report.png")
