"""How the selective-answering tables write a statistic: the rows they show, in which order
and words, and each cell (a point estimate with its bootstrap interval, in % or on its own
scale) — one place, so the naive and the MaxProb baselines' tables read alike."""

from __future__ import annotations

import math

from searchain.eval import selective as sel

ROWS = (
    ("aurc", "AURC (lower is better)"),
    ("ece", f"ECE ({sel.BINS} bins)"),
    ("brier", "Brier score (lower is better)"),
    ("brier_base_rate", "Brier of always predicting the share right"),
    (
        "log_loss",
        f"log-loss (nats, p clipped to [{sel.LOG_LOSS_CLIP:g}, 1 − {sel.LOG_LOSS_CLIP:g}])",
    ),
    ("accuracy@0.5", "cover-EM at 50 % coverage"),
    ("accuracy@0.8", "cover-EM at 80 % coverage"),
    ("accuracy@1", "cover-EM at 100 % coverage"),
    ("lift@0.5", "cover-EM at 50 % ÷ at 100 % (×)"),
)
UNCAL = " (uncalibrated score)"
AS_PROBABILITY = ("ece", "brier", "log_loss")  # read the confidence as a probability
DECIMAL = ("brier", "brier_base_rate", "log_loss")  # on their own scale, not in %
RATIO = ("lift@0.5",)  # a ratio, two decimals
# Differences worth a paired interval (at 100 % coverage, and for the base rate, both
# confidences answer the same items: no difference).
PAIRED = ("aurc", "ece", "brier", "log_loss", "accuracy@0.5", "accuracy@0.8", "lift@0.5")


def cell(e: sel.Estimate, key: str, probability: bool = True) -> str:
    """A statistic's cell; one that reads a score as a probability says when it is not one."""
    if math.isnan(e.value):
        return "–"
    note = UNCAL if key in AS_PROBABILITY and not probability else ""
    if key in RATIO:
        return f"{e.value:.2f} [{e.lo:.2f}, {e.hi:.2f}]"
    return (e.decimal() if key in DECIMAL else str(e)) + note


def diff(e: sel.Estimate, key: str) -> str:
    """A paired difference's cell ("–" where no difference is worth one)."""
    if key not in PAIRED or math.isnan(e.value):
        return "–"
    if key in RATIO:
        return f"{e.value:+.2f} [{e.lo:+.2f}, {e.hi:+.2f}]"
    return e.decimal("+") if key in DECIMAL else e.signed()


# One row of the report's selective.csv: a (run, method, score) statistic with its interval.
CSV_FIELDS = ("run", "method", "score", "items", "metric", "value", "lo", "hi")


def csv_rows(
    sink: list[dict[str, object]] | None,
    run: str,
    method: str,
    score: str,
    items: int,
    estimates: dict[str, sel.Estimate],
    *,
    paired: bool = False,
) -> None:
    """Append a score's statistics (the table's rows; a paired difference's only where the
    table shows one) to ``sink``, the same estimates the Markdown shows (None: not asked)."""
    if sink is None:
        return
    for key, _ in ROWS:
        e = estimates.get(key)
        if e is None or math.isnan(e.value) or (paired and key not in PAIRED):
            continue
        sink.append(
            {
                "run": run,
                "method": method,
                "score": score,
                "items": items,
                "metric": key,
                "value": round(e.value, 6),
                "lo": round(e.lo, 6),
                "hi": round(e.hi, 6),
            }
        )
