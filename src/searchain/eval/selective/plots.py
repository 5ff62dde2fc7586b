"""The selective-answering section's two figures: ``risk_coverage.png`` (each method's
confidence, the naive confidence and the oracle on the same items) and ``reliability.png``
(the scores in [0, 1], in :data:`~searchain.eval.selective.metrics.BINS` equal-width bins).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searchain.eval import selective as sel
from searchain.eval.run_records import RunRecords
from searchain.eval.selective.method_confidence import MethodConfidence, collect, describe


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
        label = "confidence" if describe(m)[1] else "confidence (uncalibrated score)"
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
