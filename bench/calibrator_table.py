"""docs/confidence.md's table of the shipped calibrators, written from their files.

Every cell is read from ``src/searchain/data/calibrator-*.json``: the configuration the
calibrator was fit on, its fit and certification item counts, the lowest risk its
certification items certify at δ and the threshold there, its cross-validated log-loss against
the base rate's on the fit items, and whether its values are shown as probabilities. A refit
reprints the table (tests/scoring/test_confidence_certification.py checks that the docs hold these
rows, word for word).

    .venv/bin/python -m bench.calibrator_table
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bench.kit import ROOT

DATA = ROOT / "src" / "searchain" / "data"
HEAD = (
    "| calibrator | fit on | fit items | certification items | lowest risk certified (δ = 0.1) "
    "| threshold there | CV log-loss / base rate (fit items) | shown as |\n"
    "|---|---|---|---|---|---|---|---|"
)
BASE_RATE = "uncalibrated score (no better than the base rate); `--max-risk` refuses it"


def shipped() -> dict[str, dict[str, Any]]:
    """The shipped calibrators by name (``searchain+likelihood--qwen2.5-coder-1.5b``)."""
    return {
        p.name.removeprefix("calibrator-").removesuffix(".json"): json.loads(p.read_text())
        for p in sorted(DATA.glob("calibrator-*.json"))
    }


def fit_on(configuration: dict[str, Any]) -> str:
    """The configuration in a few words: SearChain's question position and final step, a
    baseline's task; the corpora where pooled (a family fit over several documentation
    indexes, ``--docs``) — the others share one corpus, the prompt form and the model."""
    if configuration.get("question_position") is None:
        return f"task {configuration['task']}"
    said = f"question {configuration['question_position']}, {configuration['final_step']}"
    corpus = configuration.get("corpus")
    if isinstance(corpus, list):
        said += f", over any of {len(corpus)} documentation indexes (`{'`, `'.join(corpus)}`)"
    return said


def row(name: str, cal: dict[str, Any]) -> str:
    """One calibrator's row."""
    cert = cal["certification"]
    lowest = cert["lowest_certified_risk"]
    at = cert.get("at_lowest_risk") or {}
    there = (
        "–"
        if lowest is None
        else f"{at['threshold']:.2f} ({at['answered']} answered, {at['errors']} wrong)"
    )
    loss = cal["l2_chosen_by"]["cv_log_loss"][f"{cal['l2']:g}"]
    bar = cal["l2_chosen_by"]["base_rate_log_loss"]
    cells = [
        f"`{name}`",
        fit_on(cert["configuration"]),
        str(cal["fit_on"]["fit_items"]),
        str(len(cert["items"])),
        "none" if lowest is None else f"{lowest:.2f}",
        there,
        f"{loss:.3f} / {bar:.3f}",
        "probability" if cal.get("probability", True) else BASE_RATE,
    ]
    return "| " + " | ".join(cells) + " |"


def _order(name: str) -> tuple[int, int, str]:
    """SearChain's own calibrators first, then the baselines', then the paper preset's; in
    each, the plain one before those of its checks."""
    variant = name.split("--")[0]
    method = variant.split("+")[0]
    return ({"searchain": 0, "searchain-paper": 2}.get(method, 1), variant.count("+"), name)


def table() -> str:
    """The whole table, header included."""
    found = shipped()
    return "\n".join([HEAD, *(row(n, found[n]) for n in sorted(found, key=_order))])


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.parse_args()
    sys.stdout.write(table() + "\n")


if __name__ == "__main__":
    main()
