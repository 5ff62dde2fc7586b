"""Issue 51's one look: the frozen held-out HotpotQA items, answered once, scored once.

``../shared/splits/hotpotqa-fresh-heldout-160.txt`` names 160 HotpotQA items no run has
answered. They are answered only after everything is chosen: this writes their data file and
refuses while the shipped calibrators are not yet fit on the configuration the run makes (the
defaults: SearChain with the question last and the evidence step), so the first answers cannot
come before the refit they judge.

    .venv/bin/python -m bench.heldout_run split     # writes the 160 items' data file
    .venv/bin/python -m bench.heldout_run check     # exits 1 unless the refit has shipped

``bench/model_runs/heldout_answers.sh`` runs both, then the evaluation (resumable).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.kit import RESULTS_DIR, ROOT
from searchain.eval.datasets import dataset_path
from searchain.eval.splits import held_out_ids, held_out_path

SPLIT = RESULTS_DIR / "heldout" / "splits" / "hotpotqa-heldout-160.jsonl"
SHIPPED = ROOT / "src" / "searchain" / "data"  # the shipped calibrators
MODEL = "qwen2.5-coder-1.5b"
# The configuration the defaults answer with (scoring/confidence/configuration.py's fields),
# which the shipped calibrators must hold for before a held-out item is answered.
DEFAULTS = {"question_position": "last", "final_step": "evidence:path+question"}


def split_lines() -> list[str]:
    """The frozen items' lines of HotpotQA's file, in the frozen file's order."""
    frozen = held_out_path("hotpotqa")
    assert frozen is not None
    ids = [ln.strip() for ln in frozen.read_text().splitlines() if ln.strip()]
    lines = [ln for ln in dataset_path("hotpotqa").read_text().splitlines() if ln.strip()]
    by_id = {json.loads(ln)["question_id"]: ln for ln in lines}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise SystemExit(f"{len(missing)} frozen ids are not in HotpotQA's file: {missing[:3]}")
    return [by_id[i] for i in ids]


def unfit(shipped: Path = SHIPPED) -> list[str]:
    """Why the shipped SearChain calibrator (in the folder ``shipped``) does not yet hold for
    the defaults (empty: it does)."""
    from searchain.scoring.confidence.calibrator import calibrator_name

    path = shipped / calibrator_name("searchain", MODEL)
    if not path.is_file():
        return [f"{path.name} is missing"]
    fit = json.loads(path.read_text())["certification"]["configuration"]
    return [f"{k} is {fit.get(k)}, not {v}" for k, v in DEFAULTS.items() if fit.get(k) != v]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("split", "check"))
    p.add_argument("--out", type=Path, default=SPLIT, help="split: where the data file goes")
    p.add_argument("--calibrators", type=Path, default=SHIPPED,
                   help="check: the folder of the shipped calibrators")  # fmt: skip
    args = p.parse_args()
    if args.what == "split":
        lines = split_lines()
        assert {json.loads(ln)["question_id"] for ln in lines} == held_out_ids("hotpotqa")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
        print(f"{args.out}: {len(lines)} frozen items")
        return
    why = unfit(args.calibrators)
    if why:
        raise SystemExit(
            "the held-out items are answered only after the refit: the shipped SearChain "
            f"calibrator does not hold for the defaults ({'; '.join(why)})"
        )
    print("the shipped SearChain calibrator holds for the defaults")


if __name__ == "__main__":
    main()
