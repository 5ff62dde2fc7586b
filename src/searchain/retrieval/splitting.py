"""Split long documents into ~100-word passages, the retrieval unit of DPR-style corpora.

Passages of at most ``max_words`` words keep their id; longer documents become
``<doc id>#0``, ``<doc id>#1``, ... with the title repeated on every piece, so a passage shown
to an LLM still says which article it came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from searchain.types import Passage

# A word together with the whitespace after it, so pieces keep their original line breaks.
_WORD = re.compile(r"\S+\s*")
# Sentence-final punctuation, optionally followed by closing quotes or brackets.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s*$")


def split_text(text: str, max_words: int = 100) -> list[str]:
    """Split ``text`` into pieces of at most ``max_words`` whitespace-separated words.

    Cuts are made on word boundaries; within the second half of a window the last sentence
    end (or line break) is preferred, so most pieces are whole sentences. Joining the words
    of the pieces gives back exactly the words of ``text``.
    """
    if max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    words = _WORD.findall(text)
    if len(words) <= max_words:
        stripped = text.strip()
        return [stripped] if stripped else []
    pieces: list[str] = []
    start, n = 0, len(words)
    earliest = max(1, max_words // 2)  # never cut a piece shorter than half a window
    while n - start > max_words:
        end = start + max_words
        cut = end
        for j in range(end - 1, start + earliest - 1, -1):
            word = words[j]
            if "\n" in word or _SENTENCE_END.search(word):
                cut = j + 1
                break
        pieces.append("".join(words[start:cut]).strip())
        start = cut
    pieces.append("".join(words[start:]).strip())
    return pieces


def split_passage(passage: Passage, max_words: int = 100) -> list[Passage]:
    """Split one document; a short one comes back unchanged (same object, same id)."""
    # Fast path for the common case (already passage-sized): str.split runs in C.
    if len(passage.text.split()) <= max_words:
        return [passage]
    return [
        Passage(id=f"{passage.id}#{i}", text=piece, title=passage.title)
        for i, piece in enumerate(split_text(passage.text, max_words))
    ]


def split_passages(docs: Iterable[Passage], max_words: int | None = 100) -> Iterator[Passage]:
    """Stream ``docs`` through :func:`split_passage`; ``max_words=None`` disables splitting."""
    if max_words is None:
        yield from docs
        return
    if max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    for doc in docs:
        if len(doc.text.split()) <= max_words:
            yield doc
        else:
            yield from split_passage(doc, max_words)
