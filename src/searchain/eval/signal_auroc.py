"""How well each free signal of a calibration run tells right answers from wrong ones: its
AUROC with a bootstrap 95 % interval (issue 51's refit was read with it; ``python -m
bench.confidence_check_signal signals RUN`` prints the table)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from searchain.eval.calibrate import calibration_rows
from searchain.scoring.confidence.calibration import auroc


def signal_aurocs(
    run_dir: Path, method: str, part: str, resamples: int = 2000, seed: int = 0
) -> tuple[int, int, dict[str, tuple]]:
    """Each signal's ``(AUROC, low, high, answers)`` on the ``part`` items (``fit`` or
    ``certify``) of a calibration run, the answers' signals as the calibrator reads them (an
    answer without a signal is left out of that signal's AUROC, not scored 0); the item count
    and how many were right."""
    items = calibration_rows([run_dir], method).part(part)
    right = np.array(items.right, dtype=bool)
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(right), len(right)) for _ in range(resamples)]
    found: dict[str, tuple] = {}
    for name in sorted({k for row in items.rows for k in row}):
        have = np.array([name in row for row in items.rows])
        x = np.array([row.get(name, 0.0) for row in items.rows])
        boots = [auroc(x[i][have[i]], right[i][have[i]]) for i in draws]
        lo, hi = np.nanpercentile(boots, [2.5, 97.5])
        found[name] = (auroc(x[have], right[have]), lo, hi, int(have.sum()))
    return len(right), int(right.sum()), found
