"""ALCE metrics of one trace, as ``searchain eval`` records them for ALCE datasets.

Answer quality by family — ASQA: STR-EM; QAMPARI: precision, recall-5 and F1-5; ELI5: claim
recall (NLI of the gold claims against the whole answer) — and, with an NLI judge, citation
recall and precision of the final content against the trace's numbered references (for any
dataset's items, when ``searchain eval --nli`` names a judge). The whole answer is scored,
every paragraph of it (ALCE's scorer kept only the first line).
"""

from __future__ import annotations

from typing import Any

from searchain.scoring.attribution import NLI, citation_scores, parse_cited_sentences
from searchain.scoring.longform import claim_recall, qampari_scores, str_em
from searchain.types import Trace


def alce_gold(example: Any) -> dict[str, Any]:
    """What the ALCE metrics need from a dataset example (empty for other datasets)."""
    meta = getattr(example, "meta", {}) or {}
    family = meta.get("alce")
    if family is None:
        return {}
    out: dict[str, Any] = {"alce": family}
    if meta.get("answer_groups"):
        out["answer_groups"] = meta["answer_groups"]
    if getattr(example, "claims", None):
        out["claims"] = list(example.claims)
    return out


def alce_scores(trace: Trace, gold: dict[str, Any], nli: NLI | None) -> dict[str, float]:
    """ALCE's metrics for an ALCE item; for any other item, with a judge, its citation
    recall and precision alone (a cited answer to a HotpotQA question is judged the same way:
    bench/quality.py's hotpotqa-attribution)."""
    family = gold.get("alce")
    if family is None and nli is None:
        return {}
    text = trace.final_content or trace.answer
    out: dict[str, float] = {}
    groups = gold.get("answer_groups") or []
    if family == "asqa" and groups:
        out["str_em"] = str_em(text, groups)
    if family == "qampari" and groups:
        q = qampari_scores(text, groups)
        out.update(
            qampari_precision=q["precision"],
            qampari_recall_5=q["recall_top5"],
            qampari_f1_5=q["f1_top5"],
        )
    if nli is None:
        return out
    if family == "eli5" and gold.get("claims"):
        out["claim_recall"] = claim_recall(text, gold["claims"], nli)
    sentences = parse_cited_sentences(
        text, question=trace.question, list_answer=family == "qampari"
    )
    s = citation_scores(sentences, trace.references, nli)
    out.update(citation_recall=s.recall, citation_precision=s.precision)
    return out
