"""Confidence on recorded runs (issue 41): each answer's confidence from its trace's signals
(calibrated where a calibrator for the method and model was fit, on other items), and the
naive confidence beside it (the mean token log-probability of the answer as the model's reply
to the question: one scoring call each, by the same model), written as a run directory that
`searchain report` reads — its "Selective answering" section then compares the two on the
same items (AURC with its paired CI, ECE, cover-EM at 50 and 80 % coverage).

No answer is produced again: the answers, their traces and their scores are the run's own.
Resumable: an item already written is kept.

    .venv/bin/python -m bench.confidence results/quality/qwen2.5-coder-1.5b/hotpotqa-100 \\
        results/quality/qwen2.5-coder-1.5b/musique-100 --methods searchain,retrieve-read \\
        --model qwen2.5-coder-1.5b --out results/confidence
    .venv/bin/searchain report results/confidence/hotpotqa-100 results/confidence/musique-100

``--refresh`` recomputes the confidences already written (after a calibrator is refit),
keeping the naive values: no model call.

``--transfer`` (issue 51: MuSiQue-100 as a transfer figure): where the method's calibrator was
fit on another corpus and nothing else differs, its mapping is applied anyway and written as an
uncalibrated score whose note says so — how the HotpotQA calibrator ranks and scores answers
over another corpus, never shown as a probability there.

``--without maxprob`` (issue 51): the confidence of a run made with ``-O maxprob=true`` from the
calibrator of answers made without it — what ``ask`` shows by default — with MaxProb kept in the
trace for the report's MaxProb baseline (its signal shown, not used). ``--refresh`` without it
then gives the ``+maxprob`` calibrator's confidence of a copy, no model call.

``--check consistency`` (or ``nli``) runs that opt-in confidence check on each recorded answer
first (its model calls, seeded and cached, are the check's own; the answer stays the run's), as
``--confidence-check`` would have at run time: on calibration runs, for ``searchain calibrate``
to fit the ``METHOD+CHECK`` calibrator; on reported runs, to score it.

    SEARCHAIN_THREADS=1 .venv/bin/python -m bench.confidence \\
        results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration --methods searchain \\
        --check consistency --out results/confidence/consistency
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from bench.kit import RESULTS_DIR
from searchain.eval.calibrate import run_config, stamped
from searchain.eval.rescore import run_model
from searchain.eval.runner import MANIFEST, RESULTS, read_results
from searchain.scoring.confidence import naive_logprob
from searchain.scoring.confidence.checks import check_names, run_checks
from searchain.scoring.confidence.transfer import confidence_of, transferred
from searchain.types import Trace


def with_confidence(
    run: Path,
    out: Path,
    methods: set[str],
    llm: object,
    checks: tuple[str, ...] = (),
    transfer: bool = False,
    without: tuple[str, ...] = (),
) -> int:
    """Copy ``run``'s records of ``methods`` into ``out`` with their confidences (after the
    ``checks``; from the calibrator of answers made ``without`` those checks where named);
    returns how many were added now."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run / MANIFEST, out / MANIFEST)
    target = out / RESULTS
    done = {(r["method"], r["id"]) for r in read_results(out)} if target.is_file() else set()
    model, config = run_model(run), run_config(run)
    added = 0
    with target.open("a", encoding="utf-8") as f:
        for r in read_results(run):
            if r["method"] not in methods or (r["method"], r["id"]) in done:
                continue
            if r.get("status") == "ok" and r.get("trace"):
                trace = stamped(Trace.from_dict(r["trace"]), config)
                check_cost = run_checks(trace, checks, llm) if checks else {}
                conf = confidence_of(trace, model, without)
                if transfer:
                    conf = transferred(conf, trace, model)
                conf.naive, conf.cost = naive_logprob(llm, trace.question, trace.answer)
                conf.cost = {**conf.cost, **{f"check_{k}": v for k, v in check_cost.items()}}
                meta = {**r["trace"].get("meta", {}), **trace.meta}
                r = {**r, "trace": {**r["trace"], "meta": meta, "confidence": conf.to_dict()}}
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
            f.flush()
            added += 1
    return added


def refresh(out: Path, without: tuple[str, ...] = ()) -> int:
    """Recompute the confidence of every record already in ``out`` (a new calibrator, new
    signals; ``without`` as for :func:`with_confidence`), keeping its naive value and that
    value's cost: no model call."""
    target = out / RESULTS
    records = list(read_results(out))
    model, config = run_model(out), run_config(out)
    tmp = target.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in records:
            old = (r.get("trace") or {}).get("confidence")
            if old is not None:
                conf = confidence_of(stamped(Trace.from_dict(r["trace"]), config), model, without)
                conf.naive, conf.cost = old.get("naive"), old.get("cost") or conf.cost
                r = {**r, "trace": {**r["trace"], "confidence": conf.to_dict()}}
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(target)
    return len(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--methods", default="searchain,retrieve-read")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="the runs' model")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "confidence")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--check", action="append", help="an opt-in confidence check to run")
    parser.add_argument(
        "--transfer",
        action="store_true",
        help="apply a calibrator fit on another corpus (only that differing) as a labelled "
        "uncalibrated score",
    )
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        help="score with the calibrator of answers made without this check (e.g. maxprob)",
    )
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="recompute the confidences already written (new calibrator), no model call",
    )
    args = parser.parse_args()
    if args.refresh:
        for run in args.runs:
            done = refresh(args.out / run.name, tuple(args.without))
            print(f"{run.name}: {done} records refreshed")
        return
    from searchain.llm import make_llm

    llm = make_llm("local", model=args.model, n_threads=args.threads)
    methods = set(args.methods.split(","))
    for run in args.runs:
        checks = check_names(args.check)
        added = with_confidence(
            run, args.out / run.name, methods, llm, checks, args.transfer, tuple(args.without)
        )
        print(f"{run.name}: {added} records with their confidence -> {args.out / run.name}")


if __name__ == "__main__":
    main()
