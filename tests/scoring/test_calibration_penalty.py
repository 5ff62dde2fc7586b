"""The calibrator's penalty is chosen by cross-validated log-loss
(scoring/confidence/calibration)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from searchain.scoring.confidence.calibration import L2_GRID, auroc, choose_l2, fit_logistic


def _rows(signal: np.ndarray) -> list[dict[str, float]]:
    return [{"s": float(v)} for v in signal]


def test_a_signal_unrelated_to_the_answer_gets_the_strongest_penalty() -> None:
    rng = np.random.default_rng(1)
    right = list(rng.random(60) < 0.3)
    noise = rng.normal(size=60)
    l2, losses = choose_l2(_rows(noise), right, ["s"])
    assert l2 >= 10.0  # predictions pulled towards the base rate
    assert set(losses) == set(L2_GRID)
    fitted = fit_logistic(_rows(noise), right, ["s"], l2=l2)
    assert abs(fitted["weights"][0]) < 0.3 and fitted["l2"] == l2


def test_a_signal_that_tells_right_from_wrong_keeps_a_light_penalty() -> None:
    rng = np.random.default_rng(2)
    right = list(rng.random(60) < 0.4)
    signal = np.array(right, dtype=float) * 3 + rng.normal(scale=0.7, size=60)
    l2, losses = choose_l2(_rows(signal), right, ["s"])
    assert l2 <= 3.0
    assert losses[l2] < losses[max(L2_GRID)]


def test_the_choice_is_reproducible() -> None:
    rng = np.random.default_rng(3)
    right = list(rng.random(40) < 0.5)
    signal = rng.normal(size=40) + np.array(right, dtype=float)
    assert choose_l2(_rows(signal), right, ["s"]) == choose_l2(_rows(signal), right, ["s"])


def test_auroc_counts_ties_half_and_needs_both_kinds() -> None:
    assert auroc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert auroc([1.0, 1.0, 1.0, 0.0], [True, False, False, False]) == pytest.approx(2 / 3)
    assert math.isnan(auroc([0.3, 0.4], [True, True]))
