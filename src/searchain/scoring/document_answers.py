"""How an answer over a folder of documents is scored (the real-documentation benches, issues
39, 50 and 62): against its question's gold answers and the files and pages that hold them.

A question (``bench/data/real_docs_questions.jsonl`` and its siblings) names its answer's
evidence quote (``answer``: one string, or one per part of a two-passage question), the short
answer's aliases (``answers``) and the sources the evidence is in (``source``: a package's
file, with a page for a PDF). Every arm of a bench is scored alike:

* ``cover_em``: cover-EM of the whole answer against each evidence quote (all parts needed);
* ``right_whole``/``right_short``/``right_derived``: :func:`~searchain.scoring.match.alias_match`
  of the whole answer, of the arm's short answer and of the short answer
  :func:`~searchain.answers.short_answer` reads in the whole answer;
* ``cite_file``/``cite_page``: a cited passage names each needed file or one of its
  ``file_twins`` (and, for a PDF, is on the answer's page or holds the answer);
  ``cite_source``: a cited passage is from any source file or twin (the git-doc set's rule);
* ``in_hand``: every needed passage was among what the answering step read (compared without
  case, markup and whitespace, so a PDF reading's glued words still count).
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

from searchain.answers import short_answer
from searchain.scoring.item import trace_text
from searchain.scoring.match import alias_match, cover_em
from searchain.scoring.trace_kind import chain_of_query
from searchain.trace_extras import ChainExtras, NodeExtras
from searchain.types import Passage, Trace

# A markup tag (<em>, </p>, <a href="…">), not an address in angle brackets (<me@example.org>).
TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")


def norm(text: str) -> str:
    """NFKC, case folded, whitespace collapsed: how an evidence quote is looked for."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def answer_sources(q: dict[str, Any]) -> list[dict[str, Any]]:
    """The sources that hold ``q``'s answer (parts): every one, but a bridge question's last
    (its first source states the intermediate fact, not the answer)."""
    sources = as_list(q["source"])
    return sources[-1:] if q.get("kind") == "bridge" else sources


def needs(q: dict[str, Any]) -> list[tuple[str, str]]:
    """``[(file in the corpus, answer)]``: the passages that hold question ``q``'s answer."""
    answers = as_list(q["answer"])
    sources = answer_sources(q)
    return [(f"{s['package']}/{s['file']}", norm(a)) for s, a in zip(sources, answers, strict=True)]


def found(need: tuple[str, str], hits: list[Passage]) -> bool:
    """Whether a passage of ``hits`` is from the needed file and holds its answer."""
    path, answer = need
    return any(p.id.rsplit("#", 1)[0] == path and answer in norm(p.text) for p in hits)


def source_type(q: dict[str, Any]) -> str:
    return "PDF" if all(path.endswith(".pdf") for path, _ in needs(q)) else "HTML"


def squash(text: str) -> str:
    """Text compared without markup, entities, case and whitespace."""
    return re.sub(r"\s+", "", norm(html.unescape(TAG.sub("", text))))


def holds(text: str, answer: str) -> bool:
    return squash(answer) in squash(text)


def alias_scores(q: dict[str, Any], whole: str, short: str | None) -> dict[str, float]:
    """The short-answer golds' scores (issue 62) of an answer: ``right_whole`` of the whole
    answer, ``right_short`` of the arm's short answer (``None``: it has none of its own, so
    its whole reply is its short answer), ``right_derived`` of ``answers.short_answer`` read
    in the whole answer. A question without ``answers`` gets none."""
    if "answers" not in q:
        return {}
    golds = q["answers"]
    return {
        "right_whole": float(alias_match(whole, golds)),
        "right_short": float(alias_match(whole if short is None else short, golds)),
        "right_derived": float(alias_match(short_answer(whole), golds)),
    }


def source_files(q: dict[str, Any]) -> set[str]:
    """Every file a citation may name to be from ``q``'s sources: each source (a bridge's first
    too) and its twins (``file_twins``: the other copy of the same page)."""
    files = {f"{s['package']}/{s['file']}" for s in as_list(q["source"])}
    twins = q.get("file_twins") or {}
    return files | {t for f in files for t in twins.get(f, ())}


def cite_source(q: dict[str, Any], cited: list[dict[str, Any]]) -> float:
    """The git-doc set's citation rule (its README): right when a cited passage comes from a
    source file or its twin. Laxer than ``cite_file`` (a cited passage of every file that holds
    an answer part), which the table reports beside it."""
    files = source_files(q)
    return float(any(c["file"] in files for c in cited))


def rescore(q: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """The record with the short-answer golds' scores of its recorded text and its citations'
    by the set's rule (a failed record as it is: it counts 0)."""
    if record["status"] != "ok":
        return record
    scored = record | alias_scores(q, record.get("answer") or "", record.get("short_answer"))
    if "cited" in record:
        scored["cite_source"] = cite_source(q, record["cited"])
    return scored


def view(file: str, page: int | None, text: str) -> dict[str, Any]:
    """A retrieved or cited passage as every arm is scored on it."""
    return {"file": file, "page": page, "text": text}


def score(q: dict[str, Any], text: str, retrieved: list[dict], cited: list[dict]) -> dict[str, Any]:
    """The answer's cover-EM, its citations' file and page, whether the evidence was in hand."""
    answers = as_list(q["answer"])
    pages = [s.get("page") for s in answer_sources(q)]
    wanted = [(path, a, page) for (path, _), a, page in zip(needs(q), answers, pages, strict=True)]
    parts = [cover_em(text, a) for a in answers]

    twins = q.get("file_twins") or {}  # another copy of a source counts as the source

    def named(c: dict, path: str) -> bool:
        return c["file"] == path or c["file"] in twins.get(path, ())

    def on_page(c: dict, path: str, answer: str, page: int | None) -> bool:
        return named(c, path) and (c["page"] == page or holds(c["text"], answer))

    return {
        "cover_em": float(all(parts)),
        "cover_em_parts": parts,
        "cite_file": float(all(any(named(c, p) for c in cited) for p, _, _ in wanted)),
        "cite_page": (
            float(all(any(on_page(c, p, a, pg) for c in cited) for p, a, pg in wanted))
            if source_type(q) == "PDF"
            else None
        ),
        "in_hand": all(
            any(named(r, p) and holds(r["text"], a) for r in retrieved) for p, a, _ in wanted
        ),
    }


def passage_view(p: Passage) -> dict[str, Any]:
    src = p.source or {}
    return view(str(src.get("path") or p.id.rsplit("#", 1)[0]), src.get("page"), p.text)


def first_read_record(q: dict[str, Any], trace: Trace) -> dict[str, Any]:
    """SearChain reading first (issue 62): the route taken, every trigger's signal, and the
    first read's answer scored like the final one (so a route rule is judged offline)."""
    route = ChainExtras.of(trace).route
    if route is None:
        return {}
    first = route.get("first_read") or {}
    text, short = first.get("final_content") or "", first.get("answer") or ""
    scored = {"answer": text, "short_answer": short, **alias_scores(q, text, short)}
    kept = {k: route.get(k) for k in ("rule", "taken", "why", "signals")}
    return {"route": {**kept, "first_read": scored}}


def trace_record(q: dict[str, Any], trace: Trace) -> dict[str, Any]:
    """The scored record of searchain's answer to ``q``: what it said, its scores, what it
    read and cited, and its costs."""
    extras = ChainExtras.of(trace)
    seen: dict[str, Passage] = {}
    for p in [*trace.references, *(p for n in trace.nodes for p in n.passages)]:
        seen.setdefault(p.id, p)
    retrieved = [passage_view(p) for p in seen.values()]
    read_ids = extras.final_read  # what the answering step read (issue 50)
    read = retrieved if read_ids is None else [passage_view(seen[i]) for i in read_ids if i in seen]
    cited = [passage_view(p) for p in trace.cited().values()]
    text = trace_text(trace)
    # The evidence step's passages that the user's own words retrieved (issue 50): a question
    # in hand only through the node queries' passages is one the chain itself answered.
    read_by = extras.evidence_read or []
    asked = {e["id"] for e in read_by if any(r.startswith("question") for r in e["roles"])}
    nodes = [n for n in trace.nodes if n.source != "question"]
    said = " ".join(str(x) for n in nodes for x in (n.answer, NodeExtras.of(n).llm_answer) if x)
    return {
        "answer": text,
        "short_answer": trace.answer,
        "cover_em_short": float(all(cover_em(trace.answer, a) for a in as_list(q["answer"]))),
        **alias_scores(q, text, trace.answer),
        **score(q, text, read, cited),
        "in_hand_retrieved": score(q, text, retrieved, cited)["in_hand"],
        "in_hand_question": (
            score(q, text, [passage_view(seen[i]) for i in asked if i in seen], cited)["in_hand"]
            if read_by
            else None
        ),
        "nodes": len(nodes),
        "chain_of_query": chain_of_query(trace),  # its nodes are a plan's
        **first_read_record(q, trace),
        "hops": extras.hops,  # answered nodes on the path; <= 1: one hop
        # a chain's reasoning nodes (retrieve-read's one node is its final answer)
        "node_had_answer": chain_of_query(trace)
        and bool(said)
        and all(cover_em(said, a) for a in as_list(q["answer"])),
        "cited": [{"file": c["file"], "page": c["page"]} for c in cited],
        "retrieved": [{"file": r["file"], "page": r["page"]} for r in retrieved],
        "llm_calls": trace.usage.llm_calls,
        "cached_calls": trace.usage.cached_calls,
        "prompt_tokens": trace.usage.prompt_tokens,
        "completion_tokens": trace.usage.completion_tokens,
        "errors": list(trace.errors),
    }
