"""Scoring: pure functions that judge answers, retrieval and citations, each citing the
definition it implements. Methods use them at run time (Think&Cite's attribution reward,
SearChain's SKC), LLM-URL's evaluation and ``searchain eval`` record them, so they sit below
``retrieval``, ``methods`` and ``eval`` (see docs/architecture.md).

* :mod:`.match` — cover-EM, EM, token F1, yes/no and FEVER label accuracy;
* :mod:`.longform` — ALCE's ROUGE-L, ASQA STR-EM, QAMPARI scores, ELI5 claim recall;
* :mod:`.recall` — DPR ``has_answer`` and Recall@k;
* :mod:`.attribution` — cited-sentence parsing, ALCE citation recall and precision over a
  pluggable NLI judge;
* :mod:`.skc` — SearChain's Scope of Knowledge Coverage;
* :mod:`.item` — the per-item scores of ``searchain eval`` (every method on its final
  answer, the final content beside); :mod:`.alce` — ALCE's of one trace;
* :mod:`.confidence` — how far to trust an answer: its signals, the calibrators that map them
  to a probability, their certification (a package of its own).
"""

from searchain.scoring.attribution import (
    NLI,
    CitationScores,
    CitedSentence,
    citation_precision,
    citation_recall,
    citation_scores,
    format_document,
    parse_cited_sentences,
    trace_citation_scores,
)
from searchain.scoring.item import ANSWER_METRICS, score_item, score_trace, trace_text
from searchain.scoring.longform import (
    claim_recall,
    qampari_precision,
    qampari_recall_5,
    qampari_scores,
    rouge_l,
    str_em,
)
from searchain.scoring.match import (
    FEVER_LABELS,
    YES_NO,
    Golds,
    as_golds,
    cover_em,
    exact_match,
    extract_label,
    label_accuracy,
    token_f1,
)
from searchain.scoring.recall import PassageLike, dpr_tokenize, has_answer, recall_at_k
from searchain.scoring.sentences import split_sentences
from searchain.scoring.skc import skc, supported_knowledge_count, supported_sentence_count

__all__ = [
    "ANSWER_METRICS",
    "FEVER_LABELS",
    "NLI",
    "YES_NO",
    "CitationScores",
    "CitedSentence",
    "Golds",
    "PassageLike",
    "as_golds",
    "citation_precision",
    "citation_recall",
    "citation_scores",
    "claim_recall",
    "cover_em",
    "dpr_tokenize",
    "exact_match",
    "extract_label",
    "format_document",
    "has_answer",
    "label_accuracy",
    "parse_cited_sentences",
    "qampari_precision",
    "qampari_recall_5",
    "qampari_scores",
    "recall_at_k",
    "rouge_l",
    "score_item",
    "score_trace",
    "skc",
    "split_sentences",
    "str_em",
    "supported_knowledge_count",
    "supported_sentence_count",
    "token_f1",
    "trace_citation_scores",
    "trace_text",
]
