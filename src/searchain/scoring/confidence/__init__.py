"""Confidence: how far to trust an answer, and the calibrators that say it (docs/confidence.md).

* :mod:`.assessment` — a trace's signals and its :class:`~searchain.types.Confidence`
  (``assess``), the words of an abstention;
* :mod:`.chain_signals`, :mod:`.evidence_signals`, :mod:`.maxprob` — the signals SearChain's
  chain, its evidence step and the writing call's token probabilities hold;
* :mod:`.checks` — the signals that cost model calls (``--confidence-check``);
* :mod:`.configuration` — the identity a calibrator is matched on;
* :mod:`.calibrator` — one calibrator file (load, which answers it maps, certificate, words);
  :mod:`.calibration` fits it, :mod:`.certification` certifies its threshold, :mod:`.reasons`
  says its largest terms;
* :mod:`.risk_bound` — ``--max-risk``; :mod:`.transfer` — a calibrator applied to answers
  unlike its own, labelled as such.

The names below are those of the module ``searchain.scoring.confidence`` was before it became
this package, so their importers read them from here as before.
"""

from searchain.scoring.confidence.assessment import (
    CHECKS_KEY,
    UNLIKELY_LOGPROB,
    abstention_text,
    answer_logprob,
    assess,
    checks_of,
    model_key,
    naive_logprob,
    searchain_signals,
    signals,
)

__all__ = [
    "CHECKS_KEY",
    "UNLIKELY_LOGPROB",
    "abstention_text",
    "answer_logprob",
    "assess",
    "checks_of",
    "model_key",
    "naive_logprob",
    "searchain_signals",
    "signals",
]
