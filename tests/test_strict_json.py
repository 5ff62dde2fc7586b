"""Strict JSON from every writer, and no NaN read as certainty: ``ask --json``, a run's
records and the service all write non-finite numbers as null; a calibrator treats a NaN signal
as a missing one (at its mean), not as log-odds clipped to 30 (p ≈ 1)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from searchain.eval.rundir import ResultWriter
from searchain.scoring.confidence.calibrator import shipped_calibrator
from searchain.types import strict_dumps


def _strict(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_numbers_are_written_as_null() -> None:
    text = strict_dumps({"logprob": float("-inf"), "scores": [float("nan"), 0.5], "n": 3})
    assert _strict(text) == {"logprob": None, "scores": [None, 0.5], "n": 3}
    with pytest.raises(ValueError, match="NaN"):
        _strict(json.dumps({"x": float("nan")}))  # what json.dumps alone would have written


def test_a_run_record_with_a_nan_is_strict_json(tmp_path: Path) -> None:
    path = tmp_path / "run" / "results.jsonl"
    path.parent.mkdir()
    writer = ResultWriter(path)
    try:
        writer.write({"id": "q1", "metrics": {"maxprob": float("nan"), "em": 1.0}})
    finally:
        writer.close()
    record = _strict(path.read_text().splitlines()[0])
    assert record["metrics"] == {"maxprob": None, "em": 1.0}


def test_a_nan_signal_is_a_missing_signal_not_certainty() -> None:
    calibrator = shipped_calibrator("searchain", "qwen2.5-coder-1.5b")
    assert calibrator is not None
    feature = calibrator.features[0]
    missing = calibrator.probability({})
    assert calibrator.probability({feature: float("nan")}) == missing
    assert calibrator.probability({feature: float("inf")}) == missing
    assert math.isfinite(missing) and missing < 0.99
    # and a huge NaN-free weight still clips, as before
    assert dataclasses.replace(calibrator, bias=1e6).probability({}) > 0.99
