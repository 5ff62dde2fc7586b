"""A confidence from a calibrator fit on answers unlike this one in a named way (issue 51): a
calibrator fit on another corpus applied as a labelled, uncalibrated score (the transfer), or
the calibrator of answers made without some opt-in checks (``--without maxprob``: that
check's signal is in the trace, shown, not used). ``python -m bench.confidence`` writes
both into runs' records."""

from __future__ import annotations

from searchain.scoring.confidence.assessment import assess, checks_of, model_key, signals
from searchain.scoring.confidence.calibrator import find_calibrator
from searchain.scoring.confidence.configuration import configuration, differences
from searchain.types import Confidence, Trace


def transferred(conf: Confidence, trace: Trace, model: str) -> Confidence:
    """``conf`` with the method's calibrator applied where it differs from the answer's
    configuration only in the corpus: an uncalibrated score whose note says it is a transfer
    (else ``conf`` as it is)."""
    key = model_key(model)
    calibrator = find_calibrator(trace.method, checks_of(trace), key)
    fit = None if calibrator is None else calibrator.fit_configuration
    if calibrator is None or fit is None or conf.calibrated:
        return conf
    now = configuration(trace, key)
    if differences({**fit, "corpus": now.get("corpus")}, now) or not differences(fit, now):
        return conf  # unlike in more than the corpus, or like it (over a corpus it pooled)
    conf.value = calibrator.probability(conf.signals or signals(trace))
    conf.calibrator = {"name": calibrator.name, "fit_on": calibrator.fit_on}
    conf.note = (
        f"transfer: the mapping of {calibrator.name}, fit on corpus {_corpora(fit['corpus'])}, "
        f"applied to an answer over {now['corpus']}: not a probability here"
    )
    return conf


def confidence_of(trace: Trace, model: str, without: tuple[str, ...] = ()) -> Confidence:
    """The answer's confidence, from the calibrator of answers made without the checks in
    ``without`` (their signals stay in the trace: shown, not used) where any are named."""
    if not without:
        return assess(trace, model)
    checks = tuple(c for c in checks_of(trace) if c not in without)
    key = model_key(model)
    found = find_calibrator(trace.method, checks, key, configuration(trace, key))
    return assess(trace, model, calibrator=found)


def _corpora(corpus: str | list[str]) -> str:
    return ", ".join(corpus) if isinstance(corpus, list) else str(corpus)
