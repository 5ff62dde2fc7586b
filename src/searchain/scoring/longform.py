"""Long-form and list answers, as ALCE scores them:

* :func:`rouge_l` — ALCE's ROUGE-L (``rougeLsum`` of ``rouge-score``, Porter stemmer, lower
  case, one sentence per line), the best over the references.
* :func:`str_em` — ALCE ASQA's STR-EM, :func:`qampari_scores` — ALCE QAMPARI precision,
  recall(-5) and F1, :func:`claim_recall` — ALCE ELI5 claim recall.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from searchain.citations import strip_marks
from searchain.scoring.attribution import NLI
from searchain.scoring.match import Golds, as_golds
from searchain.scoring.sentences import split_sentences
from searchain.text import normalize_answer


@functools.cache
def _rouge_scorer() -> Any:
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        raise ImportError(
            "rouge_l needs the rouge-score package: pip install rouge-score"
        ) from None
    return rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)


def rouge_l(prediction: str, references: Golds) -> float:
    """ROUGE-L F1 as ALCE computes it (``eval.py: compute_rouge``): citation marks removed,
    lower-cased, one sentence per line, ``rougeLsum`` with the Porter stemmer; the best score
    over the references (ASQA has two). Requires ``rouge-score``; there is no fallback.
    A bare string is one reference."""
    refs = as_golds(references)
    if not refs:
        raise ValueError("rouge_l needs at least one reference")
    scorer = _rouge_scorer()

    def prep(text: str) -> str:
        return "\n".join(split_sentences(text.strip().lower()))

    hyp = prep(strip_marks(prediction))
    return max(scorer.score(prep(r), hyp)["rougeLsum"].fmeasure for r in refs)


def str_em(prediction: str, answer_groups: Sequence[Sequence[str]]) -> float:
    """ALCE ASQA STR-EM (``compute_str_em``): the fraction of answer groups (the
    disambiguated sub-questions) with a short answer present in the prediction. Presence is
    ALCE's plain substring test on SQuAD-normalised text, not cover-EM's whole words."""
    if not answer_groups:
        raise ValueError("str_em needs at least one answer group")
    text = normalize_answer(strip_marks(prediction))
    hits = [any(normalize_answer(a) in text for a in group) for group in answer_groups]
    return sum(hits) / len(hits)


def qampari_scores(prediction: str, answer_groups: Sequence[Sequence[str]]) -> dict[str, float]:
    """ALCE QAMPARI scores (``compute_qampari_f1``) of a comma-separated answer list:

    * ``precision`` — predicted items equal (normalised) to some gold alias / items;
    * ``recall`` — gold answers (alias groups) with an alias among the predictions / answers;
    * ``recall_top5`` — min(5, hits) / min(5, answers): full recall at 5 correct answers;
    * ``f1`` and ``f1_top5`` — harmonic means of precision with those recalls.
    """
    if not answer_groups:
        raise ValueError("qampari_scores needs at least one answer group")
    text = strip_marks(prediction)
    preds = [normalize_answer(x.strip()) for x in text.rstrip().rstrip(".").rstrip(",").split(",")]
    preds = [p for p in preds if p]
    groups = [[normalize_answer(a) for a in g] for g in answer_groups]
    flat = {a for g in groups for a in g}
    precision = sum(p in flat for p in preds) / len(preds) if preds else 0.0
    hits = sum(any(a in preds for a in g) for g in groups)
    recall = hits / len(groups)
    recall5 = min(5, hits) / min(5, len(groups))

    def f1(p: float, r: float) -> float:
        return 2 * p * r / (p + r) if p + r else 0.0

    return {
        "precision": precision,
        "recall": recall,
        "recall_top5": recall5,
        "f1": f1(precision, recall),
        "f1_top5": f1(precision, recall5),
        "num_preds": float(len(preds)),
    }


def qampari_precision(prediction: str, answer_groups: Sequence[Sequence[str]]) -> float:
    """ALCE QAMPARI precision (see :func:`qampari_scores`)."""
    return qampari_scores(prediction, answer_groups)["precision"]


def qampari_recall_5(prediction: str, answer_groups: Sequence[Sequence[str]]) -> float:
    """ALCE QAMPARI recall-5 (see :func:`qampari_scores`)."""
    return qampari_scores(prediction, answer_groups)["recall_top5"]


def claim_recall(output: str, claims: Sequence[str], nli: NLI) -> float:
    """ALCE ELI5 claim recall (``compute_claims``): the fraction of the gold claims that the
    output, citation marks removed, entails."""
    if not claims:
        raise ValueError("claim_recall needs at least one gold claim")
    premise = strip_marks(output)
    return sum(bool(nli(premise, c)) for c in claims) / len(claims)
