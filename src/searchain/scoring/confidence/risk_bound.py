"""``--max-risk``: withhold an answer below the threshold certified for its own calibrator.

The threshold is certified per calibrator (``certification.py``), so it is looked up for the
calibrator that mapped *this* answer — ``searchain+likelihood``'s for an answer checked with
``likelihood`` — never for another score. An answer whose confidence is not a calibrated
probability for its configuration has no certified threshold: it is withheld, and its terms
say why, in words; so is every answer when no threshold is certified at the risk asked.
"""

from __future__ import annotations

from searchain.scoring.confidence.calibrator import (
    calibrator_named,
    family_calibrators,
    find_calibrator,
)
from searchain.scoring.confidence.certification import Certificate
from searchain.types import Confidence


def check_risk_bound(
    method: str, checks: tuple[str, ...], model: str, max_risk: float, delta: float
) -> None:
    """Refuse, before anything runs (``ValueError``, in words), a risk bound that no answer of
    ``method`` on ``model`` can be held to: no calibrator, or one that is no probability."""
    if not 0 < max_risk < 1 or not 0 < delta < 1:
        raise ValueError("the maximum risk (--max-risk) and δ (--risk-delta) are between 0 and 1")
    calibrator = find_calibrator(method, checks, model)
    family = [c for c in family_calibrators(method, model) if c.shown_as_probability]
    if (calibrator is None or not calibrator.shown_as_probability) and family:
        calibrator = family[0]  # a family's probability (documentation indexes) may hold
    if calibrator is None:
        raise ValueError(
            f"a maximum risk (--max-risk, max_risk) needs a calibrated confidence, and no "
            f"calibrator was fit for {method} on {model} (`searchain calibrate` fits one); a "
            "plain threshold (--abstain-below, abstain_below) needs none"
        )
    why = calibrator.why_not_probability()
    if why:
        raise ValueError(
            f"a maximum risk (--max-risk, max_risk) needs a calibrated confidence: {why}"
        )


class RiskBound:
    """A maximum risk and δ, applied to each answer with its own calibrator's threshold
    (certified once per calibrator and kept)."""

    def __init__(self, max_risk: float, delta: float) -> None:
        self.max_risk, self.delta = max_risk, delta
        self._certified: dict[tuple[str, str], Certificate] = {}

    def certificate(self, conf: Confidence) -> Certificate:
        """The threshold certified for the calibrator that mapped ``conf`` (None with the
        reason when the confidence is not a calibrated probability)."""
        if not conf.calibrated or not conf.calibrator:
            return Certificate(
                None,
                self.max_risk,
                self.delta,
                0,
                reason=f"this answer's confidence is not a calibrated probability ({conf.note})",
            )
        method, model = str(conf.calibrator.get("method")), str(conf.calibrator.get("model"))
        name = str(conf.calibrator.get("name") or f"{method}--{model}")
        key = (name, model)
        if key not in self._certified:
            # the provenance names the calibrator itself (its checks and family included)
            calibrator = calibrator_named(name)
            self._certified[key] = (
                calibrator.certificate(self.max_risk, self.delta)
                if calibrator is not None
                else Certificate(
                    None, self.max_risk, self.delta, 0, reason="its calibrator is gone"
                )
            )
        return self._certified[key]

    def apply(self, conf: Confidence) -> None:
        """Mark ``conf`` withheld below its certified threshold (always, when none is), with
        the threshold (None: none certified) and the terms."""
        found = self.certificate(conf)
        conf.threshold = found.threshold
        conf.abstained = found.threshold is None or conf.value < found.threshold
        conf.terms = found.terms()
