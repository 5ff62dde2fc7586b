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
    RetrieverOpt,
    ReuseOpt,
    RewardModelOpt,
    RewardReferenceOpt,
    ToolsOpt,
    console,
    err,
    fail,
    is_llm_url,
    open_retriever,
    with_reports,
)
from searchain.cli.eval_setup import (
    default_alce_judge,
    eval_judge,
    eval_options,
    exclude_evaluated_demos,
    in_pools,
    question_pools,
    thinkcite_eval_options,
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
    reward_model: RewardModelOpt = None,
    reward_reference: RewardReferenceOpt = None,
    option: MethodOpt = None,
    reuse_from: ReuseOpt = None,
    question_docs: Annotated[
        bool | None,
        typer.Option(
            "--question-docs/--no-question-docs",
            help="Search each item's own retrieved passages (ALCE's docs), as ALCE and "
            "Think&Cite do; default: when every item ships them.",
            show_default=False,
        ),
    ] = None,
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
    nli = default_alce_judge(examples, nli, out)
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
    pair = (("reward_model", reward_model), ("reward_reference", reward_reference))
    for key, value in (("nli", nli), *pair):
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
    try:
        pools = question_pools(examples, question_docs)
    except ValueError as e:
        fail(str(e))
    if pools is not None:  # only then, so earlier run directories keep their config hash
        config["question_docs"] = True
        if executor == "ray":
            fail("--executor ray does not search per-question docs yet; use --executor local")
        err.print(f"searching each item's own passages ({len(pools)} pools; --no-question-docs "
                  "searches --index instead)")  # fmt: skip
    if pools is not None:
        r = pools
    else:
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
            exclude_evaluated_demos(r, examples, config)
        # The dataset's task reaches every task-aware method: SearChain picks its prompt
        # family, the baselines add its label instruction (StrategyQA Yes/No, FEVER labels).
        family = examples[0].task if examples else "multihop"
        tc = thinkcite_eval_options(examples, nli, dict(pair))
        opts = {n: {**eval_options(n, family, tools), **(tc if n == "thinkcite" else {}),
                    **method_options[n]} for n in names}  # fmt: skip
        built = {n: build_method(n, client, r, k=k, **opts[n]) for n in names}  # type: ignore[arg-type]
        judge = eval_judge(nli, client)
        runners = {n: with_reports(traced(m, client), retriever) for n, m in built.items()}
        if pools is not None:
            runners = {n: in_pools(pools, f) for n, f in runners.items()}
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
