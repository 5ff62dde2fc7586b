"""Answer correctness, per item (0.0 or 1.0 unless stated), each citing its definition:

* :func:`cover_em` — SearChain's metric: a gold answer, SQuAD-normalised, occurs in the
  normalised output as whole words (:func:`searchain.text.contains_answer`).
* :func:`exact_match`, :func:`token_f1` — the SQuAD v1.1 evaluation script; F1 with the
  HotpotQA script's yes/no rule (``hotpot_evaluate_v1.py``: 0 when either side normalises to
  yes, no or noanswer and they differ).
* :func:`label_accuracy` — yes/no (StrategyQA) and SUPPORTS/REFUTES/NOT ENOUGH INFO (FEVER)
  read from free text, "So the (final) answer is X" first.
* :func:`alias_match` — alias golds (the real-doc questions' ``answers``, the frozen set's
  rule): an alias, lower-cased without punctuation and whitespace, is a substring of the
  answer read the same way; a multi-part gold needs one alias of every part.

Every function reads the prediction without its ``[n]`` citation marks
(:func:`searchain.citations.strip_marks`): normalisation drops the brackets, so a mark would
otherwise read as a number and a gold answer "1"–"9" would match any cited sentence.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Literal

from searchain.citations import strip_marks
from searchain.text import contains_answer, normalize_answer

Golds = str | Iterable[str]
"""One gold answer or several (``None`` entries are skipped)."""


def as_golds(golds: Golds) -> list[str]:
    """The gold answers as a list: a bare string is one answer."""
    return [golds] if isinstance(golds, str) else [g for g in golds if g is not None]


def cover_em(prediction: str, golds: Golds) -> float:
    """Cover-EM (SearChain, Xu et al. 2024, §4.1): 1.0 if any SQuAD-normalised gold answer is
    contained in the normalised prediction (citation marks removed) as whole words ("1844"
    is not in "18445")."""
    text = strip_marks(prediction)
    return float(any(contains_answer(text, g) for g in as_golds(golds)))


def exact_match(prediction: str, golds: Golds) -> float:
    """SQuAD v1.1 exact match: the normalised prediction (citation marks removed) equals a
    normalised gold answer."""
    p = normalize_answer(strip_marks(prediction))
    return float(any(p == normalize_answer(g) for g in as_golds(golds)))


# hotpot_evaluate_v1.py's f1_score: a yes/no (or "noanswer") answer is right or wrong, with
# no partial credit for sharing a token with a longer answer ("yes it is" vs "yes").
_HOTPOT_ZERO = frozenset({"yes", "no", "noanswer"})


def _f1(prediction: str, gold: str) -> float:
    p_norm, g_norm = normalize_answer(prediction), normalize_answer(gold)
    if p_norm != g_norm and (p_norm in _HOTPOT_ZERO or g_norm in _HOTPOT_ZERO):
        return 0.0
    pred, ref = p_norm.split(), g_norm.split()
    if not pred or not ref:
        return float(pred == ref)  # SQuAD v2: an empty answer scores 1 only against empty
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


def token_f1(prediction: str, golds: Golds) -> float:
    """Token F1: bag-of-normalised-tokens overlap (SQuAD), the best over the gold answers,
    citation marks removed. As HotpotQA's official script (``hotpot_evaluate_v1.py``) does,
    F1 is 0 when the prediction or the gold normalises to yes, no or noanswer and the two
    differ; applied to every dataset (one F1 everywhere: outside HotpotQA a gold answer is
    rarely yes or no, and partial credit against one is meaningless)."""
    text = strip_marks(prediction)
    return max((_f1(text, g) for g in as_golds(golds)), default=0.0)


YES_NO = ("yes", "no")
FEVER_LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
_FINAL_ANSWER = re.compile(r"(?:\bso,?\s+)?\bthe\s+(?:final\s+)?answer\s+is\s*:?", re.I)
_LABEL_PATTERNS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    "yesno": [("yes", re.compile(r"\byes\b", re.I)), ("no", re.compile(r"\bno\b", re.I))],
    "fever": [
        ("NOT ENOUGH INFO", re.compile(r"\bnot\s+enough\s+info(?:rmation)?\b|\bNEI\b", re.I)),
        ("SUPPORTS", re.compile(r"\bsupport(?:s|ed)?\b", re.I)),
        ("REFUTES", re.compile(r"\brefut(?:es|ed|e)\b", re.I)),
    ],
}


def _label_kind(gold: str) -> str:
    g = " ".join(gold.split())
    if g.lower() in YES_NO:
        return "yesno"
    if g.upper() in FEVER_LABELS:
        return "fever"
    raise ValueError(f"not a yes/no or FEVER label: {gold!r}")


def extract_label(text: str, kind: Literal["yesno", "fever"] = "yesno") -> str | None:
    """The label a free-text answer gives, or None.

    The text after the last "(So) the (final) answer is" is read first, up to the end of
    its line, taking the first label mentioned there. Without that phrase (or without a label
    after it), the whole text is read: a label it starts with, else the last one it
    mentions. Negation is not interpreted ("not supported" reads as SUPPORTS).
    """
    patterns = _LABEL_PATTERNS[kind]

    def found(span: str) -> list[tuple[int, str]]:
        hits = []
        for label, pattern in patterns:
            hits += [(m.start(), label) for m in pattern.finditer(span)]
        # At one position the longer label wins ("not enough info" before "no").
        return sorted(hits, key=lambda h: (h[0], [lb for lb, _ in patterns].index(h[1])))

    finals = list(_FINAL_ANSWER.finditer(text))
    if finals:
        after = text[finals[-1].end() :].lstrip()
        span = after.split("\n", 1)[0]
        hits = found(span)
        if hits:
            return hits[0][1]
    hits = found(text)
    if not hits:
        return None
    return hits[0][1] if hits[0][0] == len(text) - len(text.lstrip()) else hits[-1][1]


def label_accuracy(prediction: str, gold: str) -> float:
    """1.0 if the label read from ``prediction`` (:func:`extract_label`) is ``gold``.
    ``gold`` is ``yes``/``no`` (StrategyQA) or a FEVER label, in any case."""
    kind = _label_kind(gold)
    label = extract_label(strip_marks(prediction), kind)  # type: ignore[arg-type]
    want = gold.strip().lower() if kind == "yesno" else " ".join(gold.upper().split())
    return float(label == want)


_SQUASH = str.maketrans("", "", string.punctuation)


def squash(text: str) -> str:
    """``text`` lower-cased, without punctuation (ASCII, and any Unicode punctuation: curly
    quotes, dashes, ellipses) or whitespace: "Debian-Mentors @ lists" -> "debianmentorslists"."""
    text = text.lower().translate(_SQUASH)
    return "".join(c for c in text if not (c.isspace() or unicodedata.category(c)[0] == "P"))


def alias_match(answer: str, answers: list[str] | list[list[str]]) -> bool:
    """Whether ``answer`` holds the gold ``answers``: a flat list of aliases needs any one of
    them; a list of alias lists (one per part of a multi-part gold) needs one alias of every
    part. An alias holds when its :func:`squash` is a substring of the answer's (citation
    marks removed first, so "[10]" does not read as 10). There are no word boundaries:
    "30 char" holds in "30-characters", and also in "130 characters". An alias that squashes
    to nothing never holds, and an empty gold (or part) is never met."""
    if all(isinstance(a, str) for a in answers):
        parts: list[list[str]] = [list(answers)]  # type: ignore[arg-type]
    elif all(isinstance(a, list) for a in answers):
        parts = list(answers)  # type: ignore[arg-type]
    else:
        raise TypeError(f"answers: a list of aliases or a list of alias lists, got {answers!r}")
    text = squash(strip_marks(answer))

    def holds(aliases: list[str]) -> bool:
        return any(a and a in text for a in map(squash, aliases))

    return all(holds(part) for part in parts)
