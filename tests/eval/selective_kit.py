"""A run directory written by hand, with confidences, for the tests of the report's selective
answering section and its baselines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def _record(i: int, method: str, right: bool, confidence: dict | None) -> dict:
    trace: dict = {"question": f"q{i}", "method": method, "answer": "x"}
    if confidence is not None:
        trace["confidence"] = confidence
    metrics = {"cover_em": float(right), "em": float(right), "f1": float(right)}
    return {"id": str(i), "method": method, "status": "ok", "metrics": metrics, "trace": trace}


def write_run(path: Path, with_confidence: bool = True, items: int = 40) -> Path:
    """A run directory written by hand: ``calibrated`` (a calibrated confidence, and a naive
    log-probability for all but the last 4 items), ``score`` (an uncalibrated score, no naive
    value), ``plain`` (no confidence, as before issue 41), and one failed item."""
    rng = np.random.default_rng(7)
    calibrator = {"name": "platt", "version": "1", "fit_on": "hotpotqa-dev"}
    records = []
    for i in range(items):
        p = float(rng.uniform(0.05, 0.95))
        right = bool(rng.random() < p)
        naive = None if i >= items - 4 else float(np.log(rng.uniform(0.2, 1)))
        calibrated = {
            "value": p,
            "calibrated": True,
            "calibrator": calibrator,
            "signals": {"answer_logprob_mean": naive},
            "naive": naive,
            "abstained": p < 0.1,
        }
        score = {"value": round(p, 1), "calibrated": False, "calibrator": None, "naive": None}
        records += [
            _record(i, "calibrated", right, calibrated if with_confidence else None),
            _record(i, "score", right, score if with_confidence else None),
            _record(i, "plain", right, None),
        ]
    records.append({"id": "crash", "method": "calibrated", "status": "error", "error": "boom"})
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
