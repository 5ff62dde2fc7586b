"""The items of one (run, method) that carry a confidence and a cover-EM, as the selective
answering section and its plots read them from a run's records: the confidence, the naive
value (the answer's mean token log-probability), MaxProb where the method ran with it, and
what the confidence is (a calibrated probability, or an uncalibrated score).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from searchain.eval.run_records import RunRecords
from searchain.scoring.confidence import maxprob


@dataclass(slots=True)
class MethodConfidence:
    """The items of one (run, method) that carry a confidence and a cover-EM."""

    run: str
    method: str
    records: int  # all the method's records, failed ones included
    confidence: list[float] = field(default_factory=list)
    naive: list[float] = field(default_factory=list)  # NaN where the backend gave none
    maxprob: list[float] = field(default_factory=list)  # NaN where the trace has none
    maxprob_missing: Counter[str] = field(default_factory=Counter)  # why, where asked for
    correct: list[float] = field(default_factory=list)
    calibrated: list[bool] = field(default_factory=list)
    calibrators: set[tuple[str, str, str]] = field(default_factory=set)
    abstained: int = 0

    @property
    def items(self) -> int:
        return len(self.confidence)

    @property
    def with_naive(self) -> np.ndarray:
        """Which items have a naive value."""
        return np.isfinite(np.asarray(self.naive, dtype=float))

    def add(self, conf: dict[str, Any], correct: float, meta: dict[str, Any]) -> None:
        naive = conf.get("naive")
        self.confidence.append(float(conf["value"]))
        value = maxprob.value_of(meta)
        self.maxprob.append(math.nan if value is None else value)
        if (why := maxprob.reason_of(meta)) is not None:
            self.maxprob_missing[why] += 1
        self.naive.append(float(naive) if _finite(naive) else math.nan)
        self.correct.append(correct)
        self.calibrated.append(conf.get("calibrated") is True)
        if conf.get("calibrated") is True and isinstance(conf.get("calibrator"), dict):
            c = conf["calibrator"]
            self.calibrators.add((str(c.get("name")), str(c.get("version")), _fit_on(c)))
        self.abstained += conf.get("abstained") is True


def _finite(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _usable(record: dict) -> tuple[dict, float, dict] | None:
    """The record's confidence, correctness (cover-EM) and trace meta, when it has both."""
    trace = (record.get("trace") or {}) if record.get("status") == "ok" else {}
    conf, cover = trace.get("confidence"), (record.get("metrics") or {}).get("cover_em")
    if not isinstance(conf, dict) or not _finite(conf.get("value")) or not _finite(cover):
        return None
    return conf, float(cover >= 1.0), trace.get("meta") or {}


def collect(runs: Iterable[RunRecords]) -> tuple[list[MethodConfidence], dict[str, list[str]]]:
    """Every (run, method) with at least one confidence, and per run the methods without."""
    found, without = [], {}
    for run in runs:
        by_method: dict[str, MethodConfidence] = {}
        for r in run.records:
            m = by_method.setdefault(r["method"], MethodConfidence(run.name, r["method"], 0))
            m.records += 1
            if usable := _usable(r):
                m.add(*usable)
        found += [m for m in by_method.values() if m.items]
        without[run.name] = [name for name, m in by_method.items() if not m.items]
    return found, without


def _fit_on(calibrator: dict[str, Any]) -> str:
    """Where a calibrator was fit, in a few words: its items and runs."""
    fit = calibrator.get("fit_on")
    if not isinstance(fit, dict):
        return str(fit)
    runs = ", ".join(str(r) for r in fit.get("runs", []))
    return f"{fit.get('items', '?')} items, {fit.get('right', '?')} right, of {runs}"


def describe(m: MethodConfidence) -> tuple[str, bool]:
    """What the confidence is, and whether it may be read as a probability."""
    calibrated = sum(m.calibrated)
    if calibrated == m.items:
        if len(m.calibrators) == 1:
            name, version, fit_on = next(iter(m.calibrators))
            return f"calibrated probability (calibrator {name} {version}, fit on {fit_on})", True
        return f"calibrated probability ({len(m.calibrators) or 'no named'} calibrators)", True
    if calibrated:
        return f"only {calibrated} of {m.items} calibrated: read as an uncalibrated score", False
    return "an uncalibrated score in [0, 1], not a probability", False
