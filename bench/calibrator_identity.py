"""Widen a shipped calibrator's configuration to the identity's later fields, from its runs.

The configuration identity (``scoring/confidence/configuration.py``) came to include the model
file, θ, k, the reader, the evidence step's passages and the yes/no check, and then a
baseline's prompt template (retrieve-read's default gained a short-answer ending, issue 62).
A calibrator fit before then names none of them, so it maps no answer any more and says why
("model file …, fit on not recorded"). Where every run it was fit on is still here with its
manifest, those values are known (for a relabelled copy, from the run it was copied from):
``searchain calibrate`` now stamps each recorded trace with what its run's manifest says
(``eval/run_stamps.py``: the model file of an embedded named model, k, the reader, the evidence
passages, the yes/no check), and the traces record θ. This writes them into the calibrator's
certification configuration, with how in ``identity_widened``; a calibrator whose runs are not
all here, or disagree with each other, is left as it is and listed. No model call, no refit.

    .venv/bin/python -m bench.calibrator_identity           # what it would write
    .venv/bin/python -m bench.calibrator_identity --write   # write the files
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from searchain.eval.run_stamps import run_config, stamped
from searchain.scoring.confidence.configuration import configuration
from searchain.types import Trace

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "searchain" / "data"
NEW_FIELDS = ("model_file", "template", "theta", "k", "evidence_k", "reader", "yesno_check")
# The relabelled copies some calibrators were fit on (not committed) are their source runs with
# node labels recomputed, settings unchanged (results/calibration/README.md, issue 47).
RELABELLED = "results/calibration/relabelled/"
SOURCES = {
    "hotpotqa-paper40": "results/quality/qwen2.5-coder-1.5b/tune/hotpotqa-paper40",
    "hotpotqa-calibration": "results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration",
}


def source_of(run: str) -> Path:
    """The committed run ``run`` was made from (itself unless a relabelled copy)."""
    if not run.startswith(RELABELLED):
        return ROOT / run
    rest = run.removeprefix(RELABELLED)
    return ROOT / SOURCES.get(rest, f"results/confidence/{rest}")


def run_identity(run: Path, method: str) -> dict[str, Any]:
    """The later identity fields of ``method``'s answers in ``run``, as ``searchain calibrate``
    would now stamp them from its manifest (``eval.run_stamps``), or ValueError saying why
    they are not known."""
    if not (run / "manifest.json").exists():
        raise ValueError(f"{run.relative_to(ROOT)}: no manifest")
    config = run_config(run)
    found = set()
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("method") != method or not record.get("trace"):
            continue
        trace = stamped(Trace.from_dict(record["trace"]), config)
        identity = configuration(trace, str(config.get("model")))
        found.add(tuple((f, identity[f]) for f in NEW_FIELDS))
    if len(found) != 1:
        raise ValueError(f"{run.relative_to(ROOT)}: its answers say {sorted(map(str, found))}")
    said = dict(found.pop())
    if said["model_file"] is None:
        raise ValueError(f"{run.relative_to(ROOT)}: its manifest names no embedded model file")
    return said


def widened(calibrator: dict[str, Any]) -> dict[str, Any]:
    """``calibrator`` with the later fields in its configuration (ValueError: not known)."""
    # the paper preset's were fit as searchain's (bench/paper_calibrators.py): its records
    method = calibrator["method"].split("+")[0].removesuffix("-paper")
    found = [run_identity(source_of(run), method) for run in calibrator["fit_on"]["runs"]]
    if any(f != found[0] for f in found):
        raise ValueError(f"its runs differ: {found}")
    out = json.loads(json.dumps(calibrator))
    out["certification"]["configuration"].update(found[0])
    out["identity_widened"] = (
        "model file, prompt template, θ, k, evidence passages, reader and yes/no check written "
        "from the runs' "
        "manifests and traces as `searchain calibrate` stamps them (eval/run_stamps.py) by "
        "bench/calibrator_identity.py; weights, items and certification unchanged"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the widened files")
    args = parser.parse_args()
    for path in sorted(DATA.glob("calibrator-*.json")):
        calibrator = json.loads(path.read_text(encoding="utf-8"))
        config = calibrator.get("certification", {}).get("configuration")
        if config is None or all(f in config for f in NEW_FIELDS):
            continue
        try:
            out = widened(calibrator)
        except ValueError as why:
            print(f"left as it is  {path.name}: {why}")
            continue
        said = {f: out["certification"]["configuration"][f] for f in NEW_FIELDS}
        print(f"{'widened' if args.write else 'would widen'}  {path.name}: {said}")
        if args.write:
            path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
