"""Does an opt-in confidence check (``--confidence-check nli|consistency``) tell right answers
from wrong ones? Measured on calibration items only (never the reported ones): for each
recorded answer of a method, the check's signal — ``nli``: P(the cited passages state the
answer), the same model as judge; ``consistency``: the share of 5 resampled answers that
agree — next to whether the answer was right; then its AUROC with a bootstrap CI. No answer
is produced again. Resumable (one JSON line per item under ``--out``, by default
``results/confidence/CHECK-signal``).

    SEARCHAIN_THREADS=1 .venv/bin/python -m bench.confidence_check_signal run \\
        results/quality/qwen2.5-coder-1.5b/tune/hotpotqa-paper40 \\
        results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration --method searchain \\
        --check consistency --limit 40
    .venv/bin/python -m bench.confidence_check_signal table --method searchain --check consistency

``signals`` does the same for every free signal the traces of a calibration run hold (no model
call), on the items the split rule gives to fitting (``--part``), as issue 51's refit was read:

    .venv/bin/python -m bench.confidence_check_signal signals \
        results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration-default --method searchain
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bench.kit import RESULTS_DIR
from searchain.eval.calibrate import item_ids
from searchain.eval.runner import read_results
from searchain.eval.signal_auroc import signal_aurocs
from searchain.scoring.confidence import signals
from searchain.scoring.confidence.calibration import auroc
from searchain.scoring.confidence.checks import CHECKS
from searchain.types import Trace

REPORTED = [
    RESULTS_DIR / "quality/qwen2.5-coder-1.5b/hotpotqa-100",
    RESULTS_DIR / "quality/qwen2.5-coder-1.5b/musique-100",
]
SIGNAL = {"nli": "answer_supported", "consistency": "answer_agreement"}


def out_dir(args: argparse.Namespace) -> Path:
    return args.out or RESULTS_DIR / f"confidence/{args.check}-signal"


def run(args: argparse.Namespace) -> None:
    from searchain.llm import make_llm

    out = out_dir(args) / f"{args.method}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(line)["id"] for line in out.open()} if out.is_file() else set()
    seen = item_ids(REPORTED)  # never a reported item
    llm = make_llm("local", model=args.model)
    check, name = CHECKS[args.check], SIGNAL[args.check]
    with out.open("a", encoding="utf-8") as f:
        for run_dir in args.runs:
            for r in read_results(run_dir):
                if r.get("method") != args.method or r.get("status") != "ok" or r["id"] in seen:
                    continue
                seen.add(r["id"])
                if r["id"] in done or not r.get("trace"):
                    continue
                if args.limit is not None and len(done) >= args.limit:
                    return
                trace = Trace.from_dict(r["trace"])
                t0 = time.perf_counter()
                found, _ = check(trace, llm)
                right = (r.get("metrics") or {}).get("cover_em", 0.0) >= 1.0
                row = {"id": r["id"], "p": found[name], "right": right,
                       "signals": signals(trace), "seconds": time.perf_counter() - t0}  # fmt: skip
                f.write(json.dumps(row) + "\n")
                f.flush()
                done.add(r["id"])


def table(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in (out_dir(args) / f"{args.method}.jsonl").open()]
    p = np.array([r["p"] for r in rows])
    right = np.array([r["right"] for r in rows], dtype=bool)
    rng = np.random.default_rng(0)
    boots = [auroc(p[i], right[i]) for i in (rng.integers(0, len(p), len(p)) for _ in range(2000))]
    lo, hi = np.nanpercentile(boots, [2.5, 97.5])
    print(f"{args.method}: {len(rows)} calibration items, {int(right.sum())} right")
    name = SIGNAL[args.check]
    print(f"AUROC of {name}: {auroc(p, right):.2f} [{lo:.2f}, {hi:.2f}] (0.5: no signal)")
    print(f"mean {name}: right {p[right].mean():.2f}, wrong {p[~right].mean():.2f}")


def signals_table(args: argparse.Namespace) -> None:
    n, right, found = signal_aurocs(args.run, args.method, args.part)
    print(f"{args.method}: {n} {args.part} items of {args.run}, {right} right")
    print("| signal | answers | AUROC (0.5: no signal) | 95 % interval |\n|---|---|---|---|")
    for name, (value, lo, hi, count) in found.items():
        print(f"| `{name}` | {count} | {value:.2f} | {lo:.2f} to {hi:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("runs", nargs="+", type=Path)
    r.add_argument("--model", default="qwen2.5-coder-1.5b")
    r.add_argument("--limit", type=int, help="stop when this many items are written")
    t = sub.add_parser("table")
    for p in (r, t):
        p.add_argument("--method", default="searchain")
        p.add_argument("--check", choices=sorted(SIGNAL), default="nli")
        p.add_argument("--out", type=Path, help="default: results/confidence/CHECK-signal")
    f = sub.add_parser("signals")
    f.add_argument("run", type=Path, help="a calibration run directory")
    f.add_argument("--method", default="searchain")
    f.add_argument("--part", choices=("fit", "certify"), default="fit")
    args = parser.parse_args()
    {"run": run, "table": table, "signals": signals_table}[args.command](args)


if __name__ == "__main__":
    main()
