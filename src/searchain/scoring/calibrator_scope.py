"""Where a calibrator's values are shown as probabilities: on answers of exactly the
configuration it was fit on (``scoring/configuration.py``), and only when its fit predicted
better than the share right. Elsewhere an answer's confidence is an uncalibrated score, and
these are the words that say why, everywhere it is shown."""

from __future__ import annotations

from typing import Any

from searchain.scoring.configuration import configuration, differences
from searchain.types import Trace

UNCALIBRATED = (
    "uncalibrated score: no calibrator was fit for {method} on {model}; `searchain calibrate` "
    "fits one from an evaluation run"
)


def fit_differences(calibrator: dict[str, Any], trace: Trace, model: str) -> list[str] | None:
    """Where the answer's configuration is not the one ``calibrator`` was fit on, in words
    ([]: the same); None for a calibrator fit before configurations were recorded (it maps
    by its name alone)."""
    fit = (calibrator.get("certification") or {}).get("configuration")
    return None if fit is None else differences(fit, configuration(trace, model))


def not_a_probability(calibrator: dict[str, Any]) -> str:
    """Why a calibrator's values are not shown as probabilities ("" when they are): on its
    fit items, its signals predicted no better than the share right — which is then the one
    measured figure of how far to trust such an answer, so it is said too."""
    chosen = calibrator.get("l2_chosen_by") or {}
    if calibrator.get("probability", True):
        return ""
    loss = (chosen.get("cv_log_loss") or {}).get(f"{calibrator.get('l2', 0):g}")
    bar = chosen.get("base_rate_log_loss")
    return (
        f"uncalibrated score: the calibrator fit for {calibrator.get('method')} on "
        f"{calibrator.get('model')} predicts no better than the share right in "
        f"cross-validation (log-loss {loss} against {bar}), so it is not shown as a "
        f"probability{share_right(calibrator.get('fit_on') or {})}"
    )


def share_right(fit_on: dict[str, Any]) -> str:
    """The share right on the calibration items, as the note's last clause ("; answers of
    this configuration were right in 94 of its 240 calibration items (39%)"); "" where the
    file does not say."""
    items, right = fit_on.get("items"), fit_on.get("right")
    if not items or right is None:
        return ""
    return (
        f"; answers of this configuration were right in {right} of its {items} calibration "
        f"items ({right / items:.0%})"
    )


def mismatch(calibrator: dict[str, Any], trace: Trace, model: str) -> str:
    """Why ``calibrator`` does not map this answer ("" when it does): its configuration is
    not the answer's (``scoring/configuration.py``)."""
    said = fit_differences(calibrator, trace, model)
    if said is None:
        return ""  # a calibrator fit before configurations were recorded: by name alone
    if not said:
        return not_a_probability(calibrator)
    return (
        f"uncalibrated score: the calibrator for {calibrator.get('method')} on "
        f"{calibrator.get('model')} was fit on another configuration ({'; '.join(said)}); "
        "`searchain calibrate` on a few dozen labelled questions of this configuration fits one"
    )
