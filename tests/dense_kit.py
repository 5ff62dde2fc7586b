"""What the dense-index tests share: small corpora that encode in about a second, a reader
that dies mid-build, and the index's vectors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from searchain.retrieval import DenseIndex
from searchain.types import Passage

SRC = Path(__file__).resolve().parent.parent / "src"


def animals(n: int = 40) -> list[Passage]:
    """A small corpus that encodes in about a second."""
    kinds = ["cat", "dog", "owl", "eel", "fox", "yak", "bee", "ant"]
    return [
        Passage(
            id=f"p{i}",
            title=f"{kinds[i % 8].title()} {i}",
            text=f"Fact {i}: the {kinds[i % 8]} number {i} lives in zone {i % 5}.",
        )
        for i in range(n)
    ]


def failing_after(passages: list[Passage], n: int) -> Iterator[Passage]:
    """The passages, with the reader dying after ``n`` of them (a crash mid-build)."""
    for i, p in enumerate(passages):
        if i == n:
            raise RuntimeError("simulated crash")
        yield p


def vectors(index: DenseIndex) -> np.ndarray:
    return np.asarray(index._embeddings)
