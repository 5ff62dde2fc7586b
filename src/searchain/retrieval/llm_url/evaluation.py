"""Retrieval metrics of one trace, as the LLM-URL paper reports them (DPR ``has_answer``).

* ``passage_recall@k`` — some of the first k ranked passages contains a gold answer;
* ``doc_recall@k`` — some of the first k *documents* contains one. For LLM-URL the documents
  are the fetched pages in the order the model named them (full page text, recorded when the
  retriever runs with ``keep_documents``); for an index retriever they are the distinct titles
  of the ranked passages, in rank order, with the text retrieved for each (the paper maps
  retrieved passages back to their documents the same way);
* ``valid_url_share`` — fetched articles / m; ``urls_named`` — distinct usable URLs written.

Only traces with one ranked list (retrieve-read's: ``scoring.trace_kind.ranked_list``) get
recall metrics, and a metric at k only when the method asked for at least k passages
(``RetrievalReports.k``): a list of 5 is not scored "@10" (it would be @5 under another name). A
method that asked for k and got fewer back (LLM-URL naming pages that do not exist) is scored
at k: the shortfall is its own. Traces recorded before the request was kept get @1 and @10
as they always did.

The two kinds of document are not the same size: LLM-URL's are whole fetched pages, an index
retriever's are the passages it returned, grouped by title. So document recall favours LLM-URL
a little (a page holds more text than its retrieved passages); passage recall compares both on
passages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from searchain.scoring import has_answer, recall_at_k
from searchain.scoring.trace_kind import ranked_list
from searchain.trace_extras import RetrievalReports
from searchain.types import Passage, Trace

LLM_URL = "llm-url"  # the retriever name its reports carry (retriever.py)


def _documents(trace: Trace, ranked: list[Passage]) -> list[str] | None:
    reports = RetrievalReports.of(trace).of_retriever(LLM_URL)
    if reports:
        docs = reports[0].get("documents", [])
        if docs and "text" not in docs[0]:
            return None  # texts were not kept: document recall cannot be computed
        return [d["text"] for d in docs]
    by_title: dict[str, list[str]] = {}
    for p in ranked:
        by_title.setdefault(p.title or p.id, []).append(p.text)
    return ["\n".join(texts) for texts in by_title.values()]


KS = (1, 10, 100)  # Recall@100: the LLM-URL paper's Table 2
OLD_KS = (1, 10)  # traces without a recorded request


def retrieval_metrics(
    trace: Trace, answers: Sequence[str], ks: Sequence[int] = KS
) -> dict[str, float]:
    out: dict[str, float] = {}
    retrieval = RetrievalReports.of(trace)
    reports = retrieval.of_retriever(LLM_URL)
    if reports:
        out["valid_url_share"] = sum(r["valid_url_share"] for r in reports) / len(reports)
        out["urls_named"] = sum(
            sum(u.get("url") is not None for u in r["urls"]) for r in reports
        ) / len(reports)
    answers = [a for a in answers if a]
    ranked = ranked_list(trace)
    if ranked is None or not answers:
        return out
    asked = retrieval.k
    ks = [k for k in ks if (k <= asked if isinstance(asked, int) else k in OLD_KS)]
    for k in ks:
        out[f"passage_recall@{k}"] = recall_at_k(ranked, answers, k)
    docs = _documents(trace, ranked)
    if docs is not None:
        for k in ks:
            out[f"doc_recall@{k}"] = float(any(has_answer(answers, d) for d in docs[:k]))
    return out


def summarize(metrics: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean of each metric over items that have it."""
    keys = sorted({k for m in metrics for k in m})
    return {k: sum(m[k] for m in metrics if k in m) / sum(k in m for m in metrics) for k in keys}
