"""The report's "Selective answering" section: for every method of a run whose traces carry a
confidence (``trace["confidence"]``), its risk–coverage AURC, ECE (bins stated), Brier score
(beside the base rate's), log-loss and selective cover-EM against the naive confidence (the
answer's mean token log-probability) on the same items, with bootstrap intervals and the
paired intervals of the differences; optionally against the Platt-scaled naive baseline too
(:mod:`.naive_platt`, fit on calibration runs the caller names). The statistics
are :mod:`searchain.eval.selective`'s; the items :mod:`.method_confidence`'s; the plots
(``risk_coverage.png``, ``reliability.png``) :mod:`.plots`'. A method run with ``maxprob``
also gets the MaxProb baseline's table (:mod:`.maxprob_baseline`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searchain.eval import selective as sel
from searchain.eval.run_records import RunRecords
from searchain.eval.selective import maxprob_baseline, naive_platt
from searchain.eval.selective.cells import ROWS, UNCAL, cell, csv_rows, diff
from searchain.eval.selective.method_confidence import MethodConfidence, collect, describe


def _table(
    m: MethodConfidence,
    probability: bool,
    seed: int,
    n: int,
    platt: dict[str, Any] | None,
    sink: list[dict[str, object]] | None = None,
) -> list[str]:
    conf, right = np.asarray(m.confidence), np.asarray(m.correct)
    has = m.with_naive
    if not has.any():
        est = sel.bootstrap(conf, right, seed=seed, n=n)
        csv_rows(sink, m.run, m.method, "confidence", m.items, est)
        out = ["| metric | confidence |", "|---|---|"]
        out += [f"| {label} | {cell(est[k], k, probability)} |" for k, label in ROWS]
        return [*out, "", "No item has a naive value (the backend gave no log-probabilities)."]
    naive = sel.naive_probability(np.asarray(m.naive)[has])
    # The same seed gives every comparison the same resamples: all columns are paired.
    cmp = sel.compare(conf[has], naive, right[has], seed=seed, n=n)
    scaled = None
    if platt is not None:
        mapped = naive_platt.platt_probability(platt, np.asarray(m.naive)[has])
        scaled = sel.compare(conf[has], mapped, right[has], seed=seed, n=n)
    whole = sel.bootstrap(conf, right, seed=seed, n=n) if not has.all() else None
    on = int(has.sum())
    csv_rows(sink, m.run, m.method, "confidence", on, cmp.a)
    csv_rows(sink, m.run, m.method, "naive", on, cmp.b)
    csv_rows(sink, m.run, m.method, "confidence - naive", on, cmp.difference, paired=True)
    if scaled:
        csv_rows(sink, m.run, m.method, "naive, Platt-scaled", on, scaled.b)
        platt_diff = scaled.difference
        csv_rows(sink, m.run, m.method, "confidence - naive Platt", on, platt_diff, paired=True)
    if whole:
        csv_rows(sink, m.run, m.method, "confidence, all items", m.items, whole)
    head = ["confidence", "naive: mean token log-prob", "Δ confidence − naive (paired)"]
    head += ["naive, Platt-scaled", "Δ confidence − Platt (paired)"] if scaled else []
    head += [f"confidence, all {m.items} items"] if whole else []
    out = [f"| metric | {' | '.join(head)} |", "|---|" + "---|" * len(head)]
    for k, label in ROWS:
        cells = [cell(cmp.a[k], k, probability), cell(cmp.b[k], k, False)]
        cells.append(diff(cmp.difference[k], k))
        if scaled:
            cells += [cell(scaled.b[k], k), diff(scaled.difference[k], k)]
        cells += [cell(whole[k], k, probability)] if whole else []
        out.append(f"| {label} | {' | '.join(cells)} |")
    return out


def _method_block(
    m: MethodConfidence,
    seed: int,
    n: int,
    platt: dict[str, Any] | str | None,
    maxprob_platt: dict[str, Any] | str | None = None,
    sink: list[dict[str, object]] | None = None,
) -> list[str]:
    what, probability = describe(m)
    has = int(m.with_naive.sum())
    same = f"the last column is on all {m.items} items, the others on those {has}"
    same = same if 0 < has < m.items else ""
    head = (
        f"**{m.method}**: confidence = {what}. {m.items} of its {m.records} items have a "
        f"confidence and a cover-EM; {has} of them a naive value"
        + (f" ({same})" if same else "")
        + (f"; {m.abstained} abstained" if m.abstained else "")
        + "."
    )
    if isinstance(platt, str):  # why no Platt-scaled baseline could be fit
        head += f" No Platt-scaled naive baseline: {platt}."
    elif platt is not None and has:
        head += f" Platt-scaled naive baseline: {naive_platt.describe(platt)}."
    fitted = platt if isinstance(platt, dict) else None
    mp = m.maxprob, m.maxprob_missing, probability, maxprob_platt
    return [
        head,
        "",
        *_table(m, probability, seed, n, fitted, sink),
        "",
        ece_by_bins(m.confidence, m.correct, probability),
        "",
        *maxprob_baseline.block(
            m.confidence, m.correct, *mp, seed=seed, n=n, sink=sink, where=(m.run, m.method)
        ),
    ]


def ece_by_bins(
    confidence: Sequence[float], correct: Sequence[float], probability: bool = True
) -> str:
    """One line: the confidence's ECE at each of ``SENSITIVITY_BINS`` equal-width bin counts
    on all its items (the table states one count; this says how much the count alone moves
    it, as the reliability of a few hundred items allows)."""
    values = [sel.ece(confidence, correct, b) for b in sel.SENSITIVITY_BINS]
    if any(math.isnan(v) for v in values):
        return "ECE by bin count: – (the confidence is not in [0, 1])."
    counts = ", ".join(map(str, sel.SENSITIVITY_BINS))
    shown = ", ".join(f"{100 * v:.1f}" for v in values)
    note = "" if probability else UNCAL
    return (
        f"ECE by bin count ({counts} equal-width bins, all {len(confidence)} items): "
        f"{shown} %{note}."
    )


_HOW_TO_READ = (
    "Values in %, except the Brier scores and log-loss (on their own 0–1 and nats scales) "
    "and the ratio of cover-EM at 50 % to cover-EM at 100 % (×), "
    "with 95 % bootstrap CIs over items; Δ on the same resamples (paired). Items are "
    "answered most confident first: AURC is the mean error rate among the answered over "
    "coverages 1/n … 1 (lower is better); cover-EM at c % is the accuracy on the c % most "
    f"confident. ECE compares a bin's accuracy with its mean confidence over {sel.BINS} "
    "equal-width bins (its value moves with the bin count); Brier and log-loss score each "
    "item's confidence against its outcome, and a Brier score at or above the base rate's "
    "says nothing the share right does not. The naive column reads exp(mean token log-prob) "
    "as a probability, an uncalibrated score; its Platt-scaled column (with --naive-platt) "
    "maps it by a logistic fit on calibration items, ranking as the naive one does. MaxProb "
    "(methods run with maxprob) is the mean token probability of the answer in the call that "
    "wrote it, compared on the items that have one (raw, and with --maxprob-platt "
    "Platt-scaled on calibration items). Curves: "
    "risk_coverage.png, reliability.png with --out."
)


def section(
    runs: Sequence[RunRecords],
    seed: int = 0,
    n: int = 1000,
    naive_platt_runs: Sequence[Path] = (),
    maxprob_platt_runs: Sequence[Path] = (),
    sink: list[dict[str, object]] | None = None,
) -> str:
    """The Markdown of the selective-answering section ("" for no runs); a run where no
    method recorded a confidence gets one line and no table. With ``naive_platt_runs``
    (calibration runs whose traces carry naive values), each method's naive confidence is
    also compared Platt-scaled. ``sink`` receives every statistic shown, as rows
    (``selective.cells.CSV_FIELDS``: the report's selective.csv)."""
    found, without = collect(runs)
    with_naive = [m.method for m in found if m.with_naive.any()]
    with_maxprob = [m.method for m in found if np.isfinite(m.maxprob).any()]
    platt = (
        naive_platt.platt_baselines(with_naive, runs, naive_platt_runs, naive_platt.fit_naive_platt)
        if naive_platt_runs
        else {}
    )
    mp_platt = (
        naive_platt.platt_baselines(
            with_maxprob, runs, maxprob_platt_runs, maxprob_baseline.fit_maxprob_platt
        )
        if maxprob_platt_runs
        else {}
    )
    out: list[str] = []
    for run in runs:
        methods = [m for m in found if m.run == run.name]
        if not methods:
            if without.get(run.name):
                line = f"*{run.name}: no method recorded a confidence: no selective tables.*"
                out += [line, ""]
            continue
        out += [f"### {run.name}: selective answering (risk–coverage, calibration)", ""]
        for m in methods:
            out += _method_block(m, seed, n, platt.get(m.method), mp_platt.get(m.method), sink)
        if without[run.name]:
            names = ", ".join(without[run.name])
            out += [f"No confidence recorded by {names}: no selective table.", ""]
        out += [_HOW_TO_READ, ""]
    return "\n".join(out)
