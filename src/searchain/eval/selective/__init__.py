"""Selective answering: how well a confidence tells right answers from wrong ones.

A method that may abstain answers only its most confident items. From per-item
``(confidence, correct)`` pairs this module gives

* the **risk–coverage curve**: items sorted by confidence, highest first; at coverage k/n
  (the k most confident answered) the selective risk is the error rate among those k;
* **AURC**, the area under that curve as Geifman & El-Yaniv (2017) and UniCR compute it: the
  mean of the n selective risks (lower is better; a perfect ranking reaches the least area its
  error rate allows, a constant confidence the error rate itself);
* **selective accuracy** at a coverage c: the accuracy on the ⌈c·n⌉ most confident items;
* **ECE**, the expected calibration error over equal-width bins of [0, 1] (each bin's
  |accuracy − mean confidence|, weighted by its share of the items), and the bins of a
  reliability diagram. ECE reads the confidence as a probability: for an uncalibrated score
  it is only a description of the score. Its value depends on the bin count (:data:`BINS`),
  so a report states it;
* the **Brier score**, the mean of (confidence − correct)², beside the Brier score of always
  predicting the share right (p·(1 − p), the bar a confidence must clear to say anything),
  and the **log-loss**, −mean(correct·ln p + (1 − correct)·ln(1 − p)) with p clipped to
  [:data:`LOG_LOSS_CLIP`, 1 − :data:`LOG_LOSS_CLIP`] (a confident 0 or 1 that is wrong would
  be infinite). Both are proper scoring rules: unlike ECE, they need no bins and reward
  ranking and calibration together. Like ECE they read the confidence as a probability
  (NaN for a score outside [0, 1]).

**Ties** are deterministic and order-free: items of equal confidence are answered together
or not at all, so inside a block of ties the curve takes the expectation over the block's
orders (its errors spread evenly over its places). A constant confidence therefore has the
flat curve at the overall error rate, whatever order the items came in.

Bootstrap intervals resample items (:func:`searchain.eval.bootstrap.resample_indices`);
:func:`compare` computes every statistic of two confidences on the *same* resamples, which
gives the paired interval of their difference (e.g. AURC(calibrated) − AURC(naive)).

The statistics live in :mod:`.metrics` (curves, ECE, Brier, log-loss) and :mod:`.intervals`
(all of them at once, with bootstrap intervals); the report's section in :mod:`.report` (its
items collected by :mod:`.method_confidence`, its cells written by :mod:`.cells`, its
Platt-scaled baselines fit by :mod:`.naive_platt` and :mod:`.maxprob_baseline`) and its plots
in :mod:`.plots`. The names of the first two are this package's.
"""

from searchain.eval.selective.intervals import (
    COVERAGES,
    Comparison,
    Estimate,
    bootstrap,
    compare,
    statistic_names,
    statistics,
)
from searchain.eval.selective.metrics import (
    BINS,
    LOG_LOSS_CLIP,
    SENSITIVITY_BINS,
    Bin,
    aurc,
    base_rate_brier,
    brier,
    ece,
    log_loss,
    naive_probability,
    reliability_bins,
    risk_coverage,
    selective_accuracy,
)

__all__ = [
    "BINS",
    "COVERAGES",
    "LOG_LOSS_CLIP",
    "SENSITIVITY_BINS",
    "Bin",
    "Comparison",
    "Estimate",
    "aurc",
    "base_rate_brier",
    "bootstrap",
    "brier",
    "compare",
    "ece",
    "log_loss",
    "naive_probability",
    "reliability_bins",
    "risk_coverage",
    "selective_accuracy",
    "statistic_names",
    "statistics",
]
