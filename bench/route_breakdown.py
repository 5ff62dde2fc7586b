"""SearChain's routes in one run of a benchmark data set: how often it answered in one read
and how often it chained, each route's cover-EM, and what the chain changed over the first
read (right answers it added and lost) — issue 62's "reported beside them". The golds come
from the data set the run's manifest names (``--dataset`` for records without one); the
breakdown itself is ``searchain.eval.route_breakdown``, which ``searchain report`` prints too.

    .venv/bin/python -m bench.route_breakdown results/quality/qwen2.5-coder-1.5b/hotpotqa-100-route
"""

from __future__ import annotations

import argparse
from pathlib import Path

from searchain.eval.datasets import load_dataset
from searchain.eval.rescore import gold_of, run_golds
from searchain.eval.route_breakdown import breakdown_table, routed_records
from searchain.eval.runner import read_results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", type=Path, help="a run directory (results.jsonl)")
    p.add_argument("--dataset", help="the data set the run answered (default: its manifest's)")
    p.add_argument("--method", default="searchain")
    args = p.parse_args()
    try:
        if args.dataset:
            golds = {ex.id: gold_of(ex) for ex in load_dataset(args.dataset, limit=None)}
        else:
            golds = run_golds(args.run)
        routed = routed_records(read_results(args.run), golds, args.method)
    except (ValueError, KeyError, OSError) as e:  # no manifest, no data set, another set
        raise SystemExit(str(e.args[0] if isinstance(e, KeyError) and e.args else e)) from None
    if not routed:
        raise SystemExit(f"{args.run} holds no routed record of {args.method}")
    print("\n".join(breakdown_table(routed)))


if __name__ == "__main__":
    main()
