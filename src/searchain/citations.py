"""``[n]`` citation marks: find them, resolve them against the numbered references, and
report the ones that point nowhere (never keep an unresolved mark silently)."""

from __future__ import annotations

import re

from searchain.types import Citation, Passage

# "[1]", "[1][2]", "[1, 2]", "[1,2,3]"
_MARK = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def split_sentences(text: str) -> list[str]:
    """A light sentence splitter that keeps trailing citation marks with their sentence."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def numbered_documents(passages: list[Passage]) -> str:
    """Passages as a prompt shows them, numbered for ``[n]`` marks: "[n] Title: text" (with
    "(Title: ...)" small models copy documents instead of answering)."""
    return "\n".join(f"[{i}] {p.title}: {p.text}" for i, p in enumerate(passages, 1))


def marks(text: str) -> list[int]:
    return [int(n) for group in _MARK.findall(text) for n in re.split(r"\s*,\s*", group)]


def strip_marks(text: str) -> str:
    return re.sub(r"\s*" + _MARK.pattern, "", text).strip()


def resolve(text: str, references: list[Passage]) -> tuple[list[Citation], list[str]]:
    """Every mark in ``text`` as a :class:`Citation` (with the sentence that carries it) and
    a list of problems: marks outside ``1..len(references)``."""
    citations: list[Citation] = []
    errors: list[str] = []
    for sentence in split_sentences(text):
        for n in marks(sentence):
            if 1 <= n <= len(references):
                citations.append(Citation(n, references[n - 1].id, sentence))
            else:
                citations.append(Citation(n, None, sentence))
                errors.append(
                    f"citation [{n}] points to no reference (there are {len(references)})"
                )
    return citations, errors


_WORD = re.compile(r"\w+")
_STOP = frozenset(
    "a an the of in on at to for from by with and or is was were are be been it its as that "
    "this which who what when where how did does do so answer".split()
)


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def post_cite(text: str, references: list[Passage]) -> tuple[str, list[Citation]]:
    """Attach a citation to every sentence that has none: the reference sharing the most
    content words with it (ALCE's "post-hoc citation" baseline). Sentences that share no
    word with any reference stay uncited. Returns the new text and the added citations."""
    if not references:
        return text, []
    # A reference without an id (a step that found no passage) cannot support anything.
    ref_terms = [_terms(p.title + " " + p.text) if p.id else set() for p in references]
    out, added = [], []
    for sentence in split_sentences(text):
        if not marks(sentence):
            words = _terms(sentence)
            overlaps = [len(words & r) for r in ref_terms]
            best = max(range(len(references)), key=lambda i: overlaps[i])
            if overlaps[best] > 0:
                body, end = (
                    (sentence[:-1], sentence[-1]) if sentence[-1] in ".!?" else (sentence, "")
                )
                sentence = f"{body} [{best + 1}]{end}"
                added.append(Citation(best + 1, references[best].id, sentence, origin="post-hoc"))
        out.append(sentence)
    return " ".join(out), added
