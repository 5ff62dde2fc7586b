"""Answer correctness, per item (0.0 or 1.0 unless stated), each citing its definition:

* :func:`cover_em` — SearChain's metric: a gold answer, SQuAD-normalised, occurs in the
  normalised output as whole words (:func:`searchain.text.contains_answer`).
* :func:`exact_match`, :func:`token_f1` — the SQuAD v1.1 evaluation script.
* :func:`label_accuracy` — yes/no (StrategyQA) and SUPPORTS/REFUTES/NOT ENOUGH INFO (FEVER)
  read from free text, "So the (final) answer is X" first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Literal

from searchain.text import contains_answer, normalize_answer

Golds = str | Iterable[str]
"""One gold answer or several (``None`` entries are skipped)."""


def as_golds(golds: Golds) -> list[str]:
    """The gold answers as a list: a bare string is one answer."""
    return [golds] if isinstance(golds, str) else [g for g in golds if g is not None]


def cover_em(prediction: str, golds: Golds) -> float:
    """Cover-EM (SearChain, Xu et al. 2024, §4.1): 1.0 if any SQuAD-normalised gold answer is
    contained in the normalised prediction as whole words ("1844" is not in "18445")."""
    return float(any(contains_answer(prediction, g) for g in as_golds(golds)))


def exact_match(prediction: str, golds: Golds) -> float:
    """SQuAD v1.1 exact match: the normalised prediction equals a normalised gold answer."""
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(g) for g in as_golds(golds)))


def _f1(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)  # SQuAD v2: an empty answer scores 1 only against empty
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


def token_f1(prediction: str, golds: Golds) -> float:
    """SQuAD token F1: bag-of-normalised-tokens overlap, the best over the gold answers."""
    return max((_f1(prediction, g) for g in as_golds(golds)), default=0.0)


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
    label = extract_label(prediction, kind)  # type: ignore[arg-type]
    want = gold.strip().lower() if kind == "yesno" else " ".join(gold.upper().split())
    return float(label == want)
