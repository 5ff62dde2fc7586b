"""``searchain report``: methods × metrics with 95 % bootstrap confidence intervals, as
Markdown, CSV and a PNG bar chart."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from searchain.eval.bootstrap import bootstrap_ci
from searchain.eval.runner import read_results


@dataclass(slots=True)
class Cell:
    mean: float
    lo: float
    hi: float

    def __str__(self) -> str:
        return f"{100 * self.mean:.1f} [{100 * self.lo:.1f}, {100 * self.hi:.1f}]"


@dataclass(slots=True)
class Row:
    run: str
    method: str
    items: int
    failed: int
    metrics: dict[str, Cell]


def summarize(run_dirs: list[str | Path], seed: int = 0) -> list[Row]:
    """One row per (run, method). Failed items count as 0 in every metric: a method that
    crashes must not look better than one that answers wrongly."""
    rows = []
    for run_dir in run_dirs:
        by_method: dict[str, list[dict]] = {}
        for r in read_results(run_dir):
            by_method.setdefault(r["method"], []).append(r)
        for method, records in by_method.items():
            names = sorted({k for r in records for k in r.get("metrics", {})})
            cells = {}
            for name in names:
                values = [float(r.get("metrics", {}).get(name, 0.0)) for r in records]
                cells[name] = Cell(*bootstrap_ci(values, seed=seed))
            failed = sum(r["status"] != "ok" for r in records)
            rows.append(Row(Path(run_dir).name, method, len(records), failed, cells))
    return rows


def _metric_names(rows: list[Row]) -> list[str]:
    return sorted({m for r in rows for m in r.metrics})


def markdown(rows: list[Row]) -> str:
    names = _metric_names(rows)
    lines = [
        "| run | method | items | failed | " + " | ".join(names) + " |",
        "|---|---|---|---|" + "---|" * len(names),
    ]
    for r in rows:
        cells = [str(r.metrics[n]) if n in r.metrics else "–" for n in names]
        lines.append(
            f"| {r.run} | {r.method} | {r.items} | {r.failed} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n\nValues in %, with 95 % bootstrap confidence intervals.\n"


def to_csv(rows: list[Row]) -> str:
    names = _metric_names(rows)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        ["run", "method", "items", "failed"]
        + [f"{n}{s}" for n in names for s in ("", "_lo", "_hi")]
    )
    for r in rows:
        vals = []
        for n in names:
            c = r.metrics.get(n)
            vals += [f"{c.mean:.4f}", f"{c.lo:.4f}", f"{c.hi:.4f}"] if c else ["", "", ""]
        w.writerow([r.run, r.method, r.items, r.failed, *vals])
    return buf.getvalue()


def bar_chart(rows: list[Row], path: str | Path) -> Path:
    """Grouped bars (one group per metric, one bar per run/method) with CI error bars."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt
    import numpy as np

    names = _metric_names(rows)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(names) * max(1, len(rows)) / 2), 4))
    width = 0.8 / max(1, len(rows))
    x = np.arange(len(names))
    for i, r in enumerate(rows):
        means = [100 * r.metrics[n].mean if n in r.metrics else 0 for n in names]
        errs = [
            [100 * (r.metrics[n].mean - r.metrics[n].lo) if n in r.metrics else 0 for n in names],
            [100 * (r.metrics[n].hi - r.metrics[n].mean) if n in r.metrics else 0 for n in names],
        ]
        ax.bar(x + i * width, means, width, yerr=errs, capsize=3, label=f"{r.method} ({r.run})")
    ax.set_xticks(x + width * (len(rows) - 1) / 2, names)
    ax.set_ylabel("%")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
