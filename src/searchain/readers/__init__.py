"""Readers: extract an answer span and a confidence from one passage (SearChain's ``g``, ``f``).

``HFExtractiveReader`` (local DPR reader or SQuAD-style QA model) imports torch and
transformers only when one is built, so importing this package needs neither.
"""

from searchain.readers.base import Reader, ReaderOutput, read_passages
from searchain.readers.hf_reader import HFExtractiveReader, ReaderInput, best_span

__all__ = [
    "HFExtractiveReader",
    "Reader",
    "ReaderInput",
    "ReaderOutput",
    "best_span",
    "read_passages",
]
