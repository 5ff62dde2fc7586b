"""Run methods over a data set into a resumable run directory: what ``searchain eval`` and
``searchain.evaluate`` both call.

An :class:`Evaluation` says what to run (the data set, the methods, the model and retriever as
one :class:`~searchain.methods.assembly.Spec`, each method's settings); :func:`evaluate` sets
the run up (its configuration, whose hash a resumed run must match), builds every method with
the one assembler, answers the items not yet answered and returns the summary. Every finished
item is appended to ``results.jsonl`` (fsynced), failures are recorded, and running the same
evaluation again resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchain.eval import setup
from searchain.methods.assembly import Spec, assemble, open_llm, open_retriever
from searchain.types import Trace

EXECUTORS = ("local", "ray")


class EvalError(ValueError):
    """The evaluation cannot start as asked (the message says why and what to do)."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


@dataclass
class Evaluation:
    """What to evaluate. ``spec`` names the model and retriever (its ``method`` is unused);
    ``options`` each method's settings by method name (``-O``); ``k``, ``tools``, ``nli`` and
    the reward pair reach the methods that take them."""

    dataset: str
    out: Path
    methods: tuple[str, ...] = ("searchain",)
    spec: Spec = field(default_factory=Spec)
    limit: int | None = None
    seed: int = 0
    concurrency: int = 4
    k: int | None = None
    options: Mapping[str, Mapping[str, Any]] | None = None
    tools: Path | None = None
    nli: str | None = None
    reward_model: str | None = None
    reward_reference: str | None = None
    question_docs: bool | None = None
    executor: str = "local"
    ray_address: str | None = None
    retry_failed: bool = False
    reuse_from: Path | None = None

    def method_options(self) -> dict[str, dict[str, Any]]:
        return {n: dict((self.options or {}).get(n, {})) for n in self.methods}


def model_config(spec: Spec, given: str | None) -> dict[str, Any]:
    """What a manifest records of the model, in the keys runs have always used. A run made
    without naming a model recorded ``model: null`` when that meant Gemma 3 270M, the old
    default of evaluations; it still does for Gemma, so those runs resume."""
    ref = spec.model_ref()
    model = ref.name
    if given is None and ref.backend == "local" and model == "gemma-3-270m":
        model = None
    out: dict[str, Any] = {"llm": ref.backend, "model": model, "base_url": ref.base_url}
    if ref.path is not None:
        out["model_path"] = ref.path
    return out


def run_config(ev: Evaluation, fingerprint: dict[str, Any], nli: str | None) -> dict[str, Any]:
    """The run's configuration: a resumed run must match its hash, so a key added later is
    written only when it is set (earlier run directories keep their hash)."""
    spec = ev.spec
    models = model_config(spec, spec.model)
    config: dict[str, Any] = {
        "dataset": ev.dataset,
        "dataset_sha256": fingerprint["sha256"],
        "limit": ev.limit,
        "seed": ev.seed,
        "methods": list(ev.methods),
        "llm": models["llm"],
        "model": models["model"],
        "base_url": models["base_url"],
        "api": spec.api,  # replaced by the form it resolved to, once the model is open
        "retriever": spec.retriever,
        "index": spec.index,
        "dense_index": spec.dense_index,
    }
    if "labels" in fingerprint:  # a label filter (fever: no NOT ENOUGH INFO), said plainly
        config["dataset_labels"] = fingerprint["labels"]
    if ev.k is not None:
        config["k"] = ev.k
    if spec.confidence_checks:  # costly confidence signals in every record's trace
        config["confidence_checks"] = sorted(spec.confidence_checks)
    if "model_path" in models:
        config["model_path"] = models["model_path"]
    pair = (("reward_model", ev.reward_model), ("reward_reference", ev.reward_reference))
    for key, value in (("nli", nli), *pair):
        if value is not None:
            config[key] = value
    if ev.options is not None:
        config["options"] = ev.method_options()
    if ev.tools is not None:  # REBEL's tools file, by content
        if not ev.tools.is_file():
            raise EvalError(f"tools file not found: {ev.tools}")
        digest = hashlib.sha256(ev.tools.read_bytes()).hexdigest()
        config["tools"] = {"path": str(ev.tools), "sha256": digest}
    return config


def per_method_options(
    ev: Evaluation, examples: list, nli: str | None
) -> dict[str, dict[str, Any]]:
    """Each method's settings: the data set's task (SearChain's prompt family, the baselines'
    label instruction), then the settings given once for every method that takes them
    (``-k``, ``--tools``, the judge and reward pair, the ALCE demo family), then what was
    given with ``-O``."""
    from searchain.methods.catalog import given_to, task_options

    task = examples[0].task if examples else "multihop"
    pair = {"reward_model": ev.reward_model, "reward_reference": ev.reward_reference}
    shared = {
        **setup.thinkcite_eval_options(examples, nli, pair),
        "tools": None if ev.tools is None else str(ev.tools),
        "k": ev.k,
    }
    given = ev.method_options()
    return {
        name: {**task_options(name, task), **given_to(name, shared), **given[name]}
        for name in ev.methods
    }


def _check(ev: Evaluation) -> None:
    from searchain.retrieval.factory import is_llm_url

    if ev.executor not in EXECUTORS:
        raise EvalError(f"unknown executor {ev.executor!r}; local or ray")
    if ev.executor == "ray" and is_llm_url(ev.spec.retriever):
        raise EvalError(
            "--executor ray does not support --retriever llm-url yet; use --executor local"
        )


def evaluate(
    ev: Evaluation,
    *,
    progress: Callable[[Any, int], None] | None = None,
    say: Callable[[str], None] = _stderr,
) -> dict[str, Any]:
    """Run ``ev`` (resuming its run directory) and return its summary: ``run``, ``done``,
    ``failed``, ``skipped``, ``seconds`` (and ``quarantined`` when corrupt lines were set
    aside). ``progress(summary, total)`` is called as items finish; ``say`` gets notes."""
    from searchain.eval.datasets import dataset_fingerprint, load_dataset

    _check(ev)
    try:
        examples = load_dataset(ev.dataset, limit=ev.limit, seed=ev.seed)
    except (FileNotFoundError, ValueError) as e:
        raise EvalError(str(e)) from None
    nli = setup.default_alce_judge(examples, ev.nli, ev.out, say)
    config = run_config(ev, dataset_fingerprint(ev.dataset), nli)
    try:
        pools = setup.question_pools(examples, ev.question_docs)
    except ValueError as e:
        raise EvalError(str(e)) from None
    if pools is not None:  # only then, so earlier run directories keep their config hash
        config["question_docs"] = True
        if ev.executor == "ray":
            raise EvalError(
                "--executor ray does not search per-question docs yet; use --executor local"
            )
        say(
            f"searching each item's own passages ({len(pools)} pools; --no-question-docs "
            "searches --index instead)"
        )
    built = _build(ev, examples, nli, config, pools, say)
    return _run(ev, examples, config, built, progress, say)


@dataclass
class Built:
    """What :func:`_build` opened: each method's runner, its options, the judge."""

    runners: dict[str, Callable[[str], Trace]]
    options: dict[str, dict[str, Any]]
    methods: dict[str, Any]
    judge: Any
    llm: Any
    retriever: Any


def _build(
    ev: Evaluation,
    examples: list,
    nli: str | None,
    config: dict[str, Any],
    pools: Any,
    say: Callable[[str], None],
) -> Built:
    from searchain.llm import LLMError
    from searchain.retrieval.factory import is_llm_url

    try:
        llm = open_llm(ev.spec)
        # The form the prompts took, not the flag: `auto` on a base model ran completions,
        # like the runs made before `auto` existed (their config hash stays valid).
        config["api"] = "chat" if llm.form == "chat" else "completions"
        if pools is not None:
            retriever = pools
        else:
            retriever = open_retriever(ev.spec, llm)
            if is_llm_url(ev.spec.retriever):  # keep page texts for document recall
                retriever.config = dataclasses.replace(retriever.config, keep_documents=True)  # type: ignore[attr-defined]
                setup.exclude_evaluated_demos(retriever, examples, config, say)
        options = per_method_options(ev, examples, nli)
        runners, methods = {}, {}
        for name in ev.methods:
            spec = dataclasses.replace(ev.spec, method=name, options=options[name])
            runner = assemble(spec, llm=llm, retriever=retriever)
            methods[name] = runner.method
            runners[name] = setup.in_pools(pools, runner) if pools is not None else runner
        judge = setup.eval_judge(nli, llm)
    except (LLMError, ValueError, ImportError, FileNotFoundError, RuntimeError) as e:
        raise EvalError(str(e)) from None
    return Built(runners, options, methods, judge, llm, retriever)


def _prepare_run_dir(
    ev: Evaluation, config: dict[str, Any], built: Built, say: Callable[[str], None]
) -> None:
    """Write (or check, when resuming) the manifest; take records from ``reuse_from``."""
    from searchain.eval.methods import describe
    from searchain.eval.runner import (
        RunConfigMismatch,
        RunLocked,
        environment_changes,
        prepare_run_dir,
        runtime_environment,
    )

    # What each name resolved to (ablation flags, k, templates...), so the manifest says it.
    config["method_config"] = {n: describe(m) for n, m in built.methods.items()}
    environment = runtime_environment(built.llm, built.retriever)
    try:
        changes = environment_changes(ev.out, environment)
        prepare_run_dir(ev.out, config, environment)
    except (RunConfigMismatch, RunLocked) as e:
        raise EvalError(str(e)) from None
    for change in changes:  # resumed, but its finished items may not compare with new ones
        say(f"warning: resuming {ev.out}: {change}")
    if ev.reuse_from is not None:
        from searchain.eval.reuse import ReuseRefused, crossed_differences, reuse_records

        try:
            reused = reuse_records(ev.reuse_from, ev.out, config, environment)
        except ReuseRefused as e:
            raise EvalError(str(e)) from None
        say(f"reused from {ev.reuse_from}: {reused or 'nothing'}")
        if reused:
            for crossed in crossed_differences(ev.reuse_from, environment):
                say(f"warning: reused across a difference: {crossed}")


def _scorer(judge: Any) -> Callable[[Any, Trace], dict[str, float]]:
    from searchain.retrieval.llm_url.evaluation import retrieval_metrics
    from searchain.scoring import score_trace
    from searchain.scoring.alce import alce_scores

    def score(item: Any, trace: Trace) -> dict[str, float]:
        # Every method on its final answer; the final content's scores as *_content beside.
        scores = score_trace(trace, item.gold)
        # Retrieval Recall@1/@10 (DPR has_answer) of direct-retrieval, LLM-URL's valid URLs.
        scores.update(retrieval_metrics(trace, item.gold.get("answers") or []))
        scores.update(alce_scores(trace, item.gold, judge))  # ALCE datasets only
        return scores

    return score


def _run(
    ev: Evaluation,
    examples: list,
    config: dict[str, Any],
    built: Built,
    progress: Callable[[Any, int], None] | None,
    say: Callable[[str], None],
) -> dict[str, Any]:
    from searchain.eval.runner import Item, RunLocked, run
    from searchain.scoring.alce import alce_gold

    _prepare_run_dir(ev, config, built, say)
    items = [
        Item(
            e.id,
            e.question,
            {"answers": e.answers, "label": e.label, "task": e.task, **alce_gold(e)},
        )
        for e in examples
    ]
    if progress is not None:  # the total is known before the first item finishes
        progress(types.SimpleNamespace(done=0, failed=0), len(items) * len(ev.methods))
    common = dict(
        concurrency=ev.concurrency,
        score=_scorer(built.judge),
        progress=progress,
        retry_failed=ev.retry_failed,
    )
    try:
        if ev.executor == "ray":
            from searchain.eval.methods import MethodsSpec
            from searchain.eval.ray_executor import run_ray

            spec = dataclasses.replace(ev.spec, api=config["api"])
            methods = MethodsSpec(tuple(ev.methods), spec, built.options)
            summary = run_ray(items, methods, ev.out, address=ev.ray_address, **common)
        else:
            summary = run(items, built.runners, ev.out, **common)
    except (RunLocked, ImportError) as e:
        raise EvalError(str(e)) from None
    result = {
        "run": str(ev.out),
        "done": summary.done,
        "failed": summary.failed,
        "skipped": summary.skipped,
        "seconds": round(summary.seconds, 2),
    }
    if getattr(summary, "quarantined", 0):  # corrupt lines set aside, their items redone
        result["quarantined"] = summary.quarantined
    return result
