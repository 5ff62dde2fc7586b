"""The HotpotQA calibration pool, without the frozen held-out items (issue 51).

``results/calibration/splits/hotpotqa-calibration-400.jsonl`` (issue 41) is HotpotQA's
dev_subsampled without the 100 reported items: it still holds all 160 items of
``../shared/splits/hotpotqa-fresh-heldout-160.txt``, which no run may answer before their one
scoring. Its committed calibration run answered 100 of the 400 (seed-0 subsample), none of them
held out; a larger subsample of that file would draw held-out items. This writes the pool
calibration runs draw from now:

    results/calibration/splits/hotpotqa-calibration-pool.jsonl

the 240 items outside HotpotQA-100 and the frozen 160, in HotpotQA's own format: first the items
the committed calibration run answered (in its order, so a run of the new default configuration
answers those first and can pair with the old records), then the others in file order. A run
answers it in order without ``--limit`` (``searchain eval --dataset FILE --concurrency 1``) and
may stop anywhere; the command refuses to write a pool that holds a held-out item.

    .venv/bin/python -m bench.calibration_split
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.kit import RESULTS_DIR
from searchain.eval.datasets import dataset_path
from searchain.eval.splits import held_out_ids, reported_ids

CALIBRATION = RESULTS_DIR / "calibration"
ANSWERED = CALIBRATION / "qwen2.5-coder-1.5b" / "hotpotqa-calibration" / "results.jsonl"
POOL = CALIBRATION / "splits" / "hotpotqa-calibration-pool.jsonl"


def answered_order(path: Path) -> list[str]:
    """The item ids of a run's records, first appearance first."""
    seen: dict[str, None] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                seen.setdefault(json.loads(line)["id"], None)
    return list(seen)


def pool_lines() -> list[str]:
    lines = [ln for ln in dataset_path("hotpotqa").read_text().splitlines() if ln.strip()]
    by_id = {json.loads(ln)["question_id"]: ln for ln in lines}
    excluded = reported_ids("hotpotqa", 100) | held_out_ids("hotpotqa")
    first = [i for i in answered_order(ANSWERED) if i in by_id and i not in excluded]
    rest = [i for i in by_id if i not in excluded and i not in set(first)]
    return [by_id[i] for i in [*first, *rest]]


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--out", type=Path, default=POOL, help="where the pool goes")
    args = p.parse_args()
    lines = pool_lines()
    ids = {json.loads(ln)["question_id"] for ln in lines}
    if ids & held_out_ids("hotpotqa"):  # never: the frozen items are answered once, last
        raise SystemExit("the pool holds a frozen held-out item; nothing written")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
    print(
        f"{args.out}: {len(lines)} items ({len(answered_order(ANSWERED))} answered before, first)"
    )


if __name__ == "__main__":
    main()
