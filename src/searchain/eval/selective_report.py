"""The report's "Selective answering" section: for every method of a run whose traces carry a
confidence (``trace["confidence"]``), its risk–coverage AURC, ECE (bins stated), Brier score
(beside the base rate's), log-loss and selective cover-EM against the naive confidence (the
answer's mean token log-probability) on the same items, with bootstrap intervals and the
paired intervals of the differences; optionally against the Platt-scaled naive baseline too
(:mod:`searchain.eval.naive_platt`, fit on calibration runs the caller names); and the two
plots (``risk_coverage.png``, ``reliability.png``). The statistics are
:mod:`searchain.eval.selective`'s. A method run with ``maxprob`` also gets the MaxProb
baseline's table (:mod:`searchain.eval.maxprob_baseline`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from searchain.eval import maxprob_baseline, naive_platt
from searchain.eval import selective as sel
from searchain.eval.run_records import RunRecords
from searchain.eval.selective_cells import ROWS, UNCAL, cell, csv_rows, diff
from searchain.scoring import maxprob


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


def _describe(m: MethodConfidence) -> tuple[str, bool]:
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
    what, probability = _describe(m)
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


def platt_baselines(
    found: Sequence[MethodConfidence], runs: Sequence[RunRecords], calibration: Sequence[Path]
) -> dict[str, dict[str, Any] | str]:
    """Per method with naive values, its Platt map fit on the ``calibration`` runs (never on
    an item of the reported ``runs``), or why none could be fit."""
    reported = {str(r.get("id")) for run in runs for r in run.records}
    out: dict[str, dict[str, Any] | str] = {}
    for method in sorted({m.method for m in found if m.with_naive.any()}):
        try:
            out[method] = naive_platt.fit_naive_platt(calibration, method, reported)
        except ValueError as e:
            out[method] = str(e)
    return out


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
    (``selective_cells.CSV_FIELDS``: the report's selective.csv)."""
    found, without = collect(runs)
    platt = platt_baselines(found, runs, naive_platt_runs) if naive_platt_runs else {}
    with_maxprob = [m.method for m in found if np.isfinite(m.maxprob).any()]
    mp_platt = (
        maxprob_baseline.platt_baselines(with_maxprob, runs, maxprob_platt_runs)
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


def _curves(m: MethodConfidence) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The risk–coverage curves of a method's confidence, naive and oracle on the same items."""
    has = m.with_naive if m.with_naive.any() else np.ones(m.items, dtype=bool)
    conf, right = np.asarray(m.confidence)[has], np.asarray(m.correct)[has]
    out = {"confidence": sel.risk_coverage(conf, right)}
    if m.with_naive.any():
        out["naive (mean token log-prob)"] = sel.risk_coverage(np.asarray(m.naive)[has], right)
    out["oracle (best ranking)"] = sel.risk_coverage(right, right)
    return out


def _grid(count: int, title: str):
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    cols = min(3, count)
    rows = math.ceil(count / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows), squeeze=False)
    for ax in axes.flat[count:]:
        ax.set_visible(False)
    fig.suptitle(title)
    return plt, fig, list(axes.flat)


def _risk_coverage_png(found: list[MethodConfidence], path: Path) -> Path:
    plt, fig, axes = _grid(len(found), "Risk–coverage (lower is better)")
    for ax, m in zip(axes, found, strict=False):
        for label, (coverage, risk) in _curves(m).items():
            style = {"color": "0.6", "linestyle": ":"} if label.startswith("oracle") else {}
            ax.plot(100 * coverage, 100 * risk, label=label, **style)
        ax.set(title=_panel_title(m), xlabel="coverage %", ylabel="risk % (1 − cover-EM)")
        ax.set_xlim(0, 100)
        ax.legend(fontsize=7)
    return _save(plt, fig, path)


def _reliability_scores(m: MethodConfidence) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The scores in [0, 1] a reliability diagram can show, with the items' correctness."""
    conf, right, has = np.asarray(m.confidence), np.asarray(m.correct), m.with_naive
    out = {}
    if conf.min() >= 0 and conf.max() <= 1:
        label = "confidence" if _describe(m)[1] else "confidence (uncalibrated score)"
        out[label] = (conf, right)
    if has.any():
        naive = sel.naive_probability(np.asarray(m.naive)[has])
        out["naive exp(mean token log-prob), uncalibrated"] = (naive, right[has])
    return out


def _reliability_png(found: list[MethodConfidence], path: Path) -> Path:
    plt, fig, axes = _grid(len(found), f"Reliability ({sel.BINS} equal-width bins)")
    for ax, m in zip(axes, found, strict=False):
        ax.plot([0, 1], [0, 1], color="0.6", linestyle=":", label="perfect calibration")
        for label, (values, right) in _reliability_scores(m).items():
            bins = [b for b in sel.reliability_bins(values, right) if b.count]
            x, y = [b.confidence for b in bins], [b.accuracy for b in bins]
            (line,) = ax.plot(x, y, "-", label=label)
            # a bin of one answer and one of sixty look alike unless their size shows
            ax.scatter(x, y, s=[6 + 2 * b.count for b in bins], color=line.get_color())
        ax.set(title=_panel_title(m), xlabel="mean confidence in bin (marker: its items)")
        ax.set(ylabel="cover-EM in bin", xlim=(-0.02, 1.02), ylim=(-0.02, 1.02))
        ax.legend(fontsize=7)
    return _save(plt, fig, path)


def _panel_title(m: MethodConfidence) -> str:
    """The method and its run, on two lines when one would be wider than its panel."""
    one = f"{m.method} ({m.run})"
    return one if len(one) <= 40 else f"{m.method}\n{m.run}"


def _save(plt: Any, fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plots(runs: Sequence[RunRecords], out: str | Path) -> list[Path]:
    """``risk_coverage.png`` and ``reliability.png`` in ``out`` for the methods with
    confidences (nothing when none has one); the paths written."""
    found, _ = collect(runs)
    if not found:
        return []
    out = Path(out)
    return [
        _risk_coverage_png(found, out / "risk_coverage.png"),
        _reliability_png(found, out / "reliability.png"),
    ]
