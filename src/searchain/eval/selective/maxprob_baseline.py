"""The MaxProb baseline of the report's selective-answering section.

MaxProb is the mean token probability of the final answer in the call that wrote it
(``scoring/confidence/maxprob.py``: recorded in ``trace.meta["maxprob"]`` by a method run with the
setting ``maxprob``). The report compares a method's confidence with it on the items that
have a MaxProb value, as it does with the naive confidence: raw (exp of a mean
log-probability, an uncalibrated score) and, with calibration runs (``--maxprob-platt``),
Platt-scaled on their *fit* items only (:func:`.naive_platt.fit_platt` of
ln MaxProb, never on a reported item). Items without a value are counted with the reasons
their traces give.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searchain.eval import selective as sel
from searchain.eval.selective import naive_platt
from searchain.eval.selective.cells import ROWS, cell, csv_rows, diff
from searchain.scoring.confidence import maxprob

FEATURE = "maxprob_logprob"  # the Platt map's one input: ln MaxProb, a mean log-probability
MAPS = "ln MaxProb"


def log_maxprob(record: dict) -> float | None:
    """A record's ln MaxProb, None without a MaxProb value."""
    value = maxprob.value_of(((record.get("trace") or {}).get("meta")) or {})
    return None if value is None else math.log(value)


def fit_maxprob_platt(
    run_dirs: Sequence[str | Path], method: str, exclude: Sequence[str] = ()
) -> dict[str, Any]:
    """The Platt map of ``method``'s MaxProb, fit on the fit items of the calibration runs."""
    return naive_platt.fit_platt(run_dirs, method, exclude, log_maxprob, FEATURE, MAPS)


def _absent(reasons: Counter[str]) -> str:
    return "; ".join(f"{n} × {why}" for why, n in reasons.most_common())


def block(
    confidence: Sequence[float],
    correct: Sequence[float],
    values: Sequence[float],
    reasons: Counter[str],
    probability: bool,
    platt: dict[str, Any] | str | None,
    seed: int = 0,
    n: int = 1000,
    sink: list[dict[str, object]] | None = None,
    where: tuple[str, str] = ("", ""),
) -> list[str]:
    """The MaxProb paragraph and table of one method: its confidence (a ``probability`` or
    not) against MaxProb (``values``, NaN where absent, ``reasons`` counting why) on the
    items with a value, and against its Platt map (or why none was fit). Nothing for a
    method that was not run with ``maxprob``. ``sink`` receives the statistics as rows of
    ``where`` (run, method)."""
    values_ = np.asarray(values, dtype=float)
    has = np.isfinite(values_)
    if not has.any() and not reasons:
        return []
    head = f"MaxProb baseline: {int(has.sum())} of {values_.size} items have a MaxProb value"
    head += f" (without one: {_absent(reasons)})." if reasons else "."
    if isinstance(platt, str):
        head += f" No Platt-scaled MaxProb baseline: {platt}."
    elif platt is not None and has.any():
        head += f" Platt-scaled MaxProb baseline: {naive_platt.describe(platt)}."
    if not has.any():
        return [head, ""]
    conf, right = np.asarray(confidence)[has], np.asarray(correct)[has]
    cmp = sel.compare(conf, values_[has], right, seed=seed, n=n)
    scaled = None
    if isinstance(platt, dict):
        mapped = naive_platt.platt_probability(platt, np.log(values_[has]))
        scaled = sel.compare(conf, mapped, right, seed=seed, n=n)
    on = int(has.sum())
    csv_rows(sink, *where, "confidence, on MaxProb's items", on, cmp.a)
    csv_rows(sink, *where, "MaxProb", on, cmp.b)
    csv_rows(sink, *where, "confidence - MaxProb", on, cmp.difference, paired=True)
    if scaled:
        csv_rows(sink, *where, "MaxProb, Platt-scaled", on, scaled.b)
        csv_rows(sink, *where, "confidence - MaxProb Platt", on, scaled.difference, paired=True)
    columns = ["confidence", "MaxProb", "Δ confidence − MaxProb (paired)"]
    columns += ["MaxProb, Platt-scaled", "Δ confidence − Platt (paired)"] if scaled else []
    out = [head, "", f"| metric | {' | '.join(columns)} |", "|---|" + "---|" * len(columns)]
    for key, label in ROWS:
        cells = [cell(cmp.a[key], key, probability), cell(cmp.b[key], key, False)]
        cells.append(diff(cmp.difference[key], key))
        if scaled:
            cells += [cell(scaled.b[key], key), diff(scaled.difference[key], key)]
        out.append(f"| {label} | {' | '.join(cells)} |")
    return [*out, ""]
