"""Retrieval scores: :func:`has_answer` (DPR's answer matching over DPR ``SimpleTokenizer``
tokens) and :func:`recall_at_k` (answer recall or gold passage recall of the top k)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from searchain.scoring.match import Golds, as_golds
from searchain.types import Passage

_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")


def dpr_tokenize(text: str) -> list[str]:
    """Lower-cased tokens of DPR's ``SimpleTokenizer`` after NFD normalisation: runs of
    letters, digits and combining marks (``[\\p{L}\\p{N}\\p{M}]+``), else any single
    character that is neither a separator nor a control character (``[^\\p{Z}\\p{C}]``)."""
    text = unicodedata.normalize("NFD", text)
    if text.isascii():
        return [t.lower() for t in _ASCII_TOKEN.findall(text)]
    tokens: list[str] = []
    run: list[str] = []
    for ch in text:
        cat = unicodedata.category(ch)[0]
        if cat in "LNM":
            run.append(ch)
            continue
        if run:
            tokens.append("".join(run))
            run = []
        if cat not in "ZC":
            tokens.append(ch)
    if run:
        tokens.append("".join(run))
    return [t.lower() for t in tokens]


def has_answer(answers: Golds, text: str | Passage) -> bool:
    """DPR's ``has_answer`` (string match type): some answer's token sequence occurs in the
    passage's token sequence (:func:`dpr_tokenize`, uncased). A :class:`Passage` is matched
    on its text, not its title, as DPR does. Empty answers never match (DPR's loop would
    count an empty answer as found)."""
    body = text.text if isinstance(text, Passage) else text
    tokens = dpr_tokenize(body)
    for answer in as_golds(answers):
        want = dpr_tokenize(answer)
        n = len(want)
        if n and any(tokens[i : i + n] == want for i in range(len(tokens) - n + 1)):
            return True
    return False


PassageLike = Passage | Mapping[str, Any] | str


def _pid(p: PassageLike) -> str:
    if isinstance(p, Passage):
        return p.id
    if isinstance(p, str):
        return p
    return str(p.get("id", ""))


def _ptext(p: PassageLike) -> str:
    if isinstance(p, Passage):
        return p.text
    if isinstance(p, str):
        return p
    return str(p.get("text", ""))


def recall_at_k(
    passages: Sequence[PassageLike],
    golds: Golds,
    k: int,
    *,
    by: Literal["answer", "id"] = "answer",
) -> float:
    """Recall@k of a ranked list.

    ``by="answer"``: DPR's top-k retrieval accuracy — 1.0 if any of the first ``k`` passages
    :func:`has_answer` for one of the gold answers (strings are passage texts).
    ``by="id"``: the fraction of gold passage ids found among the first ``k`` passages
    (strings are passage ids). A retrieved id ``<gold>#<n>`` — a piece of a gold document
    split into passages — counts as that gold id. Raises ValueError without gold ids.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    top = list(passages)[:k]
    if by == "answer":
        answers = as_golds(golds)
        return float(any(has_answer(answers, _ptext(p)) for p in top))
    if by != "id":
        raise ValueError(f'by must be "answer" or "id", got {by!r}')
    gold_ids = list(dict.fromkeys(as_golds(golds)))
    if not gold_ids:
        raise ValueError("recall_at_k(by='id') needs at least one gold passage id")
    ids = [_pid(p) for p in top]
    found = sum(any(i == g or i.startswith(g + "#") for i in ids) for g in gold_ids)
    return found / len(gold_ids)
