"""Fit and certify SearChain's confidence calibrator on documentation questions (issue 61).

The answers are the real-documentation bench's own (``bench/real_docs_answers.py``): each
searchain arm's record of a question (scored by the short-answer golds, ``alias_match``) and
its whole trace beside it (``<arm>.traces.jsonl``), from which the signals and the
configuration identity are read — the calibrator maps only answers made exactly so, over
any of the sets' indexes (their corpora pooled: documentation questions over several
manuals; an answer over another index gets its mapping only as a labelled transfer). The
label is whether the answer shown was right: the short answer (``right_short``, what the
signals are computed on) by default, rescored with today's golds. Records made before traces
were kept have no trace and are counted, not used. The committed split rule
(``scoring/confidence/certification.split_of``) sends each item to fit or to certify; at most
three signals, each in its declared direction, are chosen on the fit items alone
(``--monotone``, the rule in ``scoring/confidence/feature_choice``).

    .venv/bin/python -m bench.docs_calibrator --sets calibration,reported,tune \\
        --arm searchain-plan \\
        --out results/calibration/docs/calibrator-searchain--qwen2.5-coder-1.5b--docs.json

Shipped as ``src/searchain/data/calibrator-searchain--<model>--docs.json`` it sits beside the
method's own calibrator and maps the answers of its configuration (``find_calibrator``).
Prints how many answers were used (and why others were not), the share right, whether the
fitted map beats the share right (else it is no probability), and the lowest certified risk.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.real_docs_answers import RESULTS
from bench.real_docs_sets import ARMS, SETS
from searchain.eval.calibrate import CalibrationItems, calibrator_of, items_of
from searchain.eval.document_records import load_records, load_traces, traces_path
from searchain.scoring.confidence.transfer import transfer_record
from searchain.scoring.document_answers import rescore
from searchain.types import Trace, strict_dumps

LABELS = {"short": "right_short", "whole": "right_whole"}
SHOWN = "yes (beats the share right in cross-validation)"
NOT_SHOWN = "no (predicts no better than the share right)"


def answers_of(
    sets: list[str], arm: str, model: str, label: str, out: Path
) -> tuple[list[tuple[str, Trace, bool]], dict[str, Any]]:
    """The (id, trace, right) of every finished answer of ``arm`` in the sets, and what was
    left out per set (failed, no trace)."""
    answers: list[tuple[str, Trace, bool]] = []
    report: dict[str, Any] = {}
    for name in sets:
        qset = SETS[name]
        lines = filter(str.strip, qset.questions.read_text(encoding="utf-8").splitlines())
        questions = {q["id"]: q for q in map(json.loads, lines)}
        records_file = qset.records(out, model) / f"{arm}.jsonl"
        records = load_records(records_file) if records_file.is_file() else {}
        traces = load_traces(traces_path(records_file))
        used = failed = untraced = 0
        for item, record in records.items():
            if record.get("status") != "ok":
                failed += 1
            elif item not in traces:
                untraced += 1
            else:
                right = rescore(questions[item], record)[LABELS[label]] >= 1.0
                answers.append((f"{name}:{item}", Trace.from_dict(traces[item]), right))
                used += 1
        report[name] = {"records": len(records), "used": used, "failed": failed,
                        "no trace (answered before traces were kept)": untraced}  # fmt: skip
    return answers, report


def summary(calibrator: dict[str, Any], items: CalibrationItems) -> str:
    fit = calibrator.get("fit_on") or {}
    cert = calibrator.get("certification") or {}
    lines = [
        f"{fit.get('items')} answers, {fit.get('right')} right; fit on {fit.get('fit_items')} "
        f"({fit.get('fit_right')} right), certified on {len(cert.get('items') or [])}",
        f"features: {', '.join(calibrator.get('features') or [])}",
        "shown as a probability: " + (SHOWN if calibrator.get("probability") else NOT_SHOWN),
        f"lowest certified risk (δ {cert.get('delta')}): {cert.get('lowest_certified_risk')}"
        + (f" — {cert['reason']}" if cert.get("reason") else ""),
        "applied to other documentation indexes as a transfer score: "
        + _transfer_said(calibrator.get("transfer") or {}),
    ]
    return "\n".join(lines)


def _transfer_said(transfer: dict[str, Any]) -> str:
    said = "yes" if transfer.get("applies") else "no"
    return (
        f"{said} (AUROC on the {transfer.get('certification_items')} certification items: "
        f"the mapping {transfer.get('auroc')}, the uncalibrated score "
        f"{transfer.get('uncalibrated_auroc')})"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--sets", default="calibration", help="question sets (calibration,reported,tune)"
    )
    p.add_argument("--arm", default="searchain-plan", help="the arm whose answers to calibrate")
    p.add_argument("--model", default="qwen2.5-coder-1.5b")
    p.add_argument("--label", choices=sorted(LABELS), default="short")
    p.add_argument("--features", help="comma-separated signals (default: chosen, --monotone)")
    p.add_argument(
        "--monotone",
        type=int,
        default=3,
        metavar="N",
        help="at most N signals, each in its declared direction, chosen on the fit "
        "items (scoring/confidence/feature_choice; 0: the method's own nine)",
    )
    p.add_argument("--records", type=Path, default=RESULTS, help="the bench's --out")
    p.add_argument("--out", type=Path, help="write the calibrator file here")
    args = p.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    unknown = sorted(set(sets) - set(SETS))
    if args.arm not in ARMS or ARMS[args.arm][0] != "searchain":
        p.error(f"--arm: a searchain arm of bench/real_docs_sets.py, not {args.arm!r}")
    if unknown:
        p.error(f"unknown set(s) {', '.join(unknown)} (sets: {', '.join(SETS)})")
    try:
        answers, report = answers_of(sets, args.arm, args.model, args.label, args.records)
    except ValueError as e:  # a damaged traces file: its name and line
        raise SystemExit(str(e)) from None
    print(json.dumps(report, indent=1), file=sys.stderr)
    items = items_of(answers, args.model)
    source = {"runs": [f"real-docs {s} set, arm {args.arm}" for s in sets],
              "datasets": [f"real-docs-{s}" for s in sets]}  # fmt: skip
    features = args.features.split(",") if args.features else None
    try:
        fitted = calibrator_of(
            items, ARMS[args.arm][0], source, features=features, pool_corpora=True,
            monotone=args.monotone or None,
        )  # fmt: skip
    except ValueError as e:
        raise SystemExit(f"no calibrator: {e}") from None
    calibrator = fitted.to_dict()
    # a family beside the method's own calibrator (calibrator.family_calibrators): it maps
    # only answers of its configuration, over the pooled documentation indexes
    calibrator["name"] = f"{calibrator['name']}--docs"
    # yes/no apart: a bare Yes or No is mapped only if some of its items were one
    yes_no = sum(1 for row in items.rows if row.get("answer_is_yes_no") == 1.0)
    calibrator["fit_on"] = {**calibrator["fit_on"], "yes_no_items": yes_no}
    held_out = items.part("certify")  # beyond its indexes only if it ranks these better
    calibrator["transfer"] = transfer_record(fitted, held_out.rows, held_out.right)
    if args.out and args.out.name != f"calibrator-{calibrator['name']}.json":
        # found by its file name, its certificate by its name: the two must agree
        raise SystemExit(f"--out: name the file calibrator-{calibrator['name']}.json")
    print(summary(calibrator, items))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            strict_dumps(calibrator, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
