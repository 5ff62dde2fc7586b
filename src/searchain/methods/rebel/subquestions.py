"""Which subquestions of a split REBEL asks: near-copies of the question (the paper's guard
against unbounded recursion: the rest may then not split again) or of an earlier sibling are
dropped, and at most ``max_subquestions`` are kept; each one dropped is recorded with why."""

from __future__ import annotations

from typing import Any

import numpy as np

from searchain.text import normalize_answer


def cap_subquestions(kept: list[str], cap: int, removed: list) -> tuple[list[str], int]:
    """The first ``cap`` subquestions, the rest recorded in ``removed`` with why; and how
    many were dropped."""
    for s in kept[cap:]:
        removed.append({"text": s, "reason": "over max_subquestions"})
    return kept[:cap], max(0, len(kept) - cap)


def dedup_subquestions(
    parent: str, subs: list[str], removed: list, embedder: Any, threshold: float
) -> tuple[list[str], bool]:
    """Drop subquestions that copy the parent (then the rest may not split: the paper's
    guard against unbounded recursion) or an earlier sibling: cosine similarity of the
    ``embedder``'s vectors above ``threshold``, or with no embedder the same normalised
    text."""
    if not subs:
        return [], True
    if embedder is not None:
        vecs = embedder.encode([parent, *subs])
        sims = vecs[1:] @ vecs.T  # row i: sub i against parent (col 0) and subs
    else:
        norm = [normalize_answer(x) for x in [parent, *subs]]
        sims = np.array([[float(a == b) for b in norm] for a in norm[1:]])
    kept: list[int] = []
    allow = True
    for i, s in enumerate(subs):
        to_parent = float(sims[i, 0])
        if to_parent > threshold:
            removed.append({"text": s, "reason": "copies the question", "cosine": to_parent})
            allow = False
            continue
        dup = next((j for j in kept if float(sims[i, j + 1]) > threshold), None)
        if dup is not None:
            removed.append(
                {
                    "text": s,
                    "reason": f"copies subquestion {dup + 1}",
                    "cosine": float(sims[i, dup + 1]),
                }
            )
            continue
        kept.append(i)
    return [subs[i] for i in kept], allow
