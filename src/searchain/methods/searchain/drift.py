"""Whether the chain's queries kept to the user's question (issue 50, build 2).

A plan may drift from the question into sub-questions about something else (on Debian
documentation, a question about the installer became one about a person). A node's query is
*on topic* when it shares a key term (a content word) with the user's question or with an
answer or query earlier in the chain (a bridge entity: "Who directed Jaws?" -> "Steven
Spielberg" -> "Where was Steven Spielberg born?"); otherwise it drifted. The check makes no
call and changes no answer: each searched node records what was searched
(``meta.searched``) and, when it drifted, why (``meta.drift``); ``meta.drifted`` lists them.
"""

from __future__ import annotations

import re

from searchain.types import Node, Trace

# Function words and the question words every query has: they never make a query on topic.
_STOP = frozenset(
    "a an the and or but of in on at to for from by with about as into than then that this "
    "these those there their its it is are was were be been being do does did done has have had "
    "not no yes which what who whom whose when where why how many much one ones any some all "
    "also same other another more most can could would should will shall may might must "
    "his her he she they them we you your our i me my first last name named called".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def key_terms(text: str) -> set[str]:
    """The content words of ``text``: lower case, a plural's "s" dropped, no function word,
    at least three characters (or a number)."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in _STOP or (len(w) < 3 and not w.isdigit()):
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def flag_drift(trace: Trace, question: str) -> list[str]:
    """Mark every searched node whose query left the question (module doc); returns their
    ids, also kept in ``trace.meta["drifted"]``."""
    known = key_terms(question)
    drifted = []
    for node in _chain_nodes(trace):
        searched = "reader" in node.meta or node.meta.get("status") == "no-passage"
        if searched:
            node.meta["searched"] = node.query
            shared = key_terms(node.query) & known
            if not shared:
                node.meta["drift"] = (
                    "its query shares no key term with the question or the chain so far"
                )
                drifted.append(node.id)
        known |= key_terms(node.query) | key_terms(node.answer or "")
        known |= key_terms(str(node.meta.get("llm_answer") or ""))
    trace.meta["drifted"] = drifted
    return drifted


def _chain_nodes(trace: Trace) -> list[Node]:
    """The chain's nodes in the order they were written (the question root left out)."""
    return [n for n in trace.nodes if n.source != "question" and n.id != "q"]
