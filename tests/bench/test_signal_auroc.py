"""``searchain.eval.signal_auroc`` (``python -m bench.confidence_check_signal signals``): how
well each free signal of a calibration run tells right answers from wrong ones (issue 51's
refit was read with it), on the real run."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchain.eval.calibrate import calibration_rows
from searchain.eval.signal_auroc import signal_aurocs

RUN = Path(__file__).resolve().parents[2] / (
    "results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration-default"
)


def test_each_signals_auroc_on_the_fit_items() -> None:
    n, right, found = signal_aurocs(RUN, "retrieve-read", "fit")
    items = calibration_rows([RUN], "retrieve-read").part("fit")
    assert (n, right) == (len(items.right), sum(items.right)) and 0 < right < n
    labelled = list(zip(items.rows, items.right, strict=True))
    pos = [r["answer_in_references"] for r, ok in labelled if ok]
    neg = [r["answer_in_references"] for r, ok in labelled if not ok]
    pairs = [(p > q) + 0.5 * (p == q) for p in pos for q in neg]
    value, lo, hi, count = found["answer_in_references"]
    assert value == pytest.approx(sum(pairs) / len(pairs)) and lo <= value <= hi and count == n
    assert found["has_answer"][:3] == (0.5, 0.5, 0.5)  # every answer has one: no ranking
    # an answer without MaxProb (none written) is left out of MaxProb's AUROC, not scored 0
    missing = sum("answer_maxprob" not in r for r in items.rows)
    assert missing > 0 and found["answer_maxprob"][3] == n - missing
