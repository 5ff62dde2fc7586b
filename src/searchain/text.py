"""Text normalisation and overlap measures shared by methods and metrics."""

from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "‘’“”…–—")


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def contains_answer(text: str, answer: str) -> bool:
    """Cover-EM for one gold answer: the normalised answer occurs in the normalised text, as
    whole words: not next to a letter or digit ("1844" is not found in "18445"). A symbol
    that normalisation keeps (it drops ASCII punctuation, curly quotes and dashes) ends a
    word, so "53" is in "53° N"."""
    a, t = normalize_answer(answer), normalize_answer(text)
    if not a:
        return False
    return re.search(rf"(?<!\w){re.escape(a)}(?!\w)", t) is not None


def answers_agree(a: str, b: str) -> bool:
    """Two answers say the same: one holds the other (:func:`contains_answer` either way;
    never for an answer that normalises to nothing)."""
    return contains_answer(a, b) or contains_answer(b, a)


def _lcs(a: list[str], b: list[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F-measure over normalised tokens (as ``rouge-score`` without stemming)."""
    c, r = normalize_answer(candidate).split(), normalize_answer(reference).split()
    if not c or not r:
        return 0.0
    lcs = _lcs(c, r)
    if lcs == 0:
        return 0.0
    p, rec = lcs / len(c), lcs / len(r)
    return 2 * p * rec / (p + rec)
