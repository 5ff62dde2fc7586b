"""Sentences as ALCE splits them, for ROUGE-L and for citation parsing."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

_ABBREVIATIONS = tuple(
    "mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e u.s u.k u.n no vol fig jan feb mar apr jun "
    "jul aug sep sept oct nov dec inc ltd co corp gen col lt sgt gov sen rep rev ave approx ca "
    "c".split()
)


@functools.cache
def _sentence_splitter() -> Callable[[str], list[str]]:
    try:
        from nltk.tokenize import sent_tokenize
    except ImportError:
        raise ImportError(
            "sentence splitting for ROUGE-L and citations needs nltk: pip install rouge-score"
        ) from None
    try:
        sent_tokenize("One. Two.")
        return sent_tokenize  # the trained Punkt model ALCE uses
    except LookupError:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

        log.warning(
            "nltk's Punkt model is not installed (python -m nltk.downloader punkt_tab); "
            "splitting sentences with untrained Punkt and a list of common abbreviations"
        )
        params = PunktParameters()
        params.abbrev_types = set(_ABBREVIATIONS)
        return PunktSentenceTokenizer(params).tokenize


def split_sentences(text: str) -> list[str]:
    """Sentences as ALCE splits them (nltk ``sent_tokenize``; without the Punkt model
    installed, untrained Punkt with common English abbreviations)."""
    return [s for s in _sentence_splitter()(text) if s.strip()]
