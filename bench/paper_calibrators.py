"""The paper preset's calibrators: the shipped SearChain calibrators fit before issue 50, which
were fit on answers made with exactly ``searchain-paper``'s settings, named for it.

Until issue 50 SearChain's defaults were the paper's settings (with the question in the
instruction, which the calibration runs pinned), and the shipped calibrators were fit on those
answers under the method's name, ``searchain``. Issue 51 refits ``searchain``'s calibrators on
the new defaults; the paper preset then had none, although the old ones describe it. This
checks, for every run a calibrator was fit on, that the run's SearChain settings
(``method_config``) are the preset's, and writes the calibrator as ``searchain-paper``'s
(same weights, items and certification; the configuration's method renamed, the renaming
recorded in ``relabelled``). It refuses a calibrator whose runs differ from the preset, or one
already fit on the defaults. No model call, no refit.

    .venv/bin/python -m bench.paper_calibrators  # before calibrator_refit.sh overwrites them
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bench.kit import ROOT
from searchain.eval.methods import config_values
from searchain.methods.searchain import SEARCHAIN_PAPER
from searchain.methods.searchain.config import SearChainConfig

DATA = ROOT / "src" / "searchain" / "data"
PRESET = "searchain-paper"
NOT_SETTINGS = ("name", "class", "retriever", "reader")  # what describe() adds to settings


def paper_settings(task: str) -> dict[str, Any]:
    """The settings a run's manifest records for the preset (those at their ``before`` value
    left out, as ``eval.methods.config_values`` records every run)."""
    return config_values(SearChainConfig(task=task, **SEARCHAIN_PAPER))


def run_settings(run: str) -> dict[str, Any]:
    manifest = json.loads((ROOT / run / "manifest.json").read_text(encoding="utf-8"))
    found = manifest["config"]["method_config"]["searchain"]
    return {k: v for k, v in found.items() if k not in NOT_SETTINGS}


def relabelled(calibrator: dict[str, Any]) -> dict[str, Any]:
    """``calibrator`` as the preset's, or a SystemExit saying why it is not the preset's."""
    config = calibrator["certification"]["configuration"]
    if config["final_step"] != "tracing" or config["question_position"] != "instruction":
        raise SystemExit(f"{calibrator['name']}: fit on {config}, not the paper's settings")
    want = paper_settings(config["task"])
    for run in calibrator["fit_on"]["runs"]:
        got = run_settings(run)
        if got != want:
            diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want)
                    if got.get(k) != want.get(k)}  # fmt: skip
            raise SystemExit(f"{calibrator['name']}: {run} differs from the preset: {diff}")
    method = PRESET + calibrator["method"].removeprefix("searchain")
    out = dict(calibrator, method=method, name=f"{method}--{calibrator['model']}")
    out["certification"] = dict(calibrator["certification"])
    out["certification"]["configuration"] = dict(config, method=PRESET)
    out["relabelled"] = (
        f"fit as {calibrator['method']} on runs whose SearChain settings are {PRESET}'s "
        "(checked by bench/paper_calibrators.py); renamed, not refit"
    )
    return out


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.parse_args()
    for path in sorted(DATA.glob("calibrator-searchain*--*.json")):
        if path.name.startswith(f"calibrator-{PRESET}"):
            continue
        calibrator = json.loads(path.read_text(encoding="utf-8"))
        out = relabelled(calibrator)
        target = DATA / f"calibrator-{out['name']}.json"
        target.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"{path.name} -> {target.name}")


if __name__ == "__main__":
    main()
