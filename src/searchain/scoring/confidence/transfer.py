"""A confidence from a calibrator fit on answers unlike this one in a named way (issue 51): a
calibrator fit on another corpus applied as a labelled, uncalibrated score (the transfer), or
the calibrator of answers made without some opt-in checks (``--without maxprob``: that
check's signal is in the trace, shown, not used). ``python -m bench.confidence`` writes
both into runs' records."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from searchain.scoring.confidence.assessment import (
    assess,
    checks_of,
    model_key,
    signals,
    uncalibrated_score,
)
from searchain.scoring.confidence.calibration import auroc
from searchain.scoring.confidence.calibrator import (
    Calibrator,
    family_calibrators,
    find_calibrator,
)
from searchain.scoring.confidence.configuration import (
    alike_but_the_corpus,
    configuration,
    corpora_said,
    differences,
)
from searchain.types import Confidence, Trace


def transferred(conf: Confidence, trace: Trace, model: str) -> Confidence:
    """``conf`` with a calibrator of the method applied where it differs from the answer's
    configuration only in the corpus (the method's own, or a family's: documentation
    questions' over another documentation index): an uncalibrated score whose note says it
    is a transfer (else ``conf`` as it is)."""
    if conf.calibrated:
        return conf
    key = model_key(model)
    now = configuration(trace, key)
    calibrator = _only_the_corpus_differs(trace, key, now)
    if calibrator is None:
        return conf
    fit = calibrator.fit_configuration or {}
    conf.value = calibrator.probability(conf.signals or signals(trace))
    conf.calibrator = {"name": calibrator.name, "fit_on": calibrator.fit_on}
    conf.note = (
        f"transfer: the mapping of {calibrator.name}, fit on corpus {corpora_said(fit['corpus'])}, "
        f"applied to an answer over {now['corpus']}: not a probability here"
    )
    return conf


def _only_the_corpus_differs(trace: Trace, key: str, now: dict) -> Calibrator | None:
    """The first of the method's calibrators (a family's first) fit on the answer's
    configuration in every field but the corpus."""
    own = find_calibrator(trace.method, checks_of(trace), key)
    for calibrator in [*family_calibrators(trace.method, key), *([own] if own else [])]:
        fit = calibrator.fit_configuration
        if fit is None:
            continue
        if alike_but_the_corpus(fit, now) and differences(fit, now):
            return calibrator
    return None


def confidence_of(trace: Trace, model: str, without: tuple[str, ...] = ()) -> Confidence:
    """The answer's confidence, from the calibrator of answers made without the checks in
    ``without`` (their signals stay in the trace: shown, not used) where any are named."""
    if not without:
        return assess(trace, model)
    checks = tuple(c for c in checks_of(trace) if c not in without)
    key = model_key(model)
    found = find_calibrator(trace.method, checks, key, configuration(trace, key))
    return assess(trace, model, calibrator=found)


TRANSFER_RULE = (
    "on the certification items, the mapping's AUROC above the uncalibrated score's "
    "(registered 2026-12-02, docs/confidence.md)"
)


def transfer_record(
    calibrator: Calibrator, rows: Sequence[dict[str, float]], right: Sequence[bool]
) -> dict[str, Any]:
    """Whether a documentation family's mapping is applied, as a labelled transfer score, to
    answers over other documentation indexes (``calibrator.transfer_family``): where it
    ranks its certification items (``rows``, ``right``: held out of the fit) better than
    the uncalibrated score an answer would show otherwise (the rule, fixed before the fit)."""
    mapped = auroc([calibrator.probability(r) for r in rows], right)
    plain = auroc([uncalibrated_score(r) for r in rows], right)
    known = not (math.isnan(mapped) or math.isnan(plain))
    return {
        "to": "answers over other documentation indexes, as a score that is not a probability",
        "rule": TRANSFER_RULE,
        "certification_items": len(rows),
        "auroc": None if math.isnan(mapped) else round(mapped, 3),
        "uncalibrated_auroc": None if math.isnan(plain) else round(plain, 3),
        "applies": bool(known and mapped > plain),
    }
