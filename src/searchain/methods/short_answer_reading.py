"""The short answer of a reply that was asked to end with "So the answer is" and did not.

A small model sometimes answers in a sentence and stops ("The director of Big Stone Gap is
based in Greenwich Village, New York City [2]."). ``short_answer`` then returns that whole
sentence as the short answer — which scores as wrong, and which the confidence then finds "not
in the passages found" although the reply is right and cited. When the reply states no answer
marker and what it returns is longer than a short answer, the LLM reader copies the answer span
out of the reply itself (one short call, the reader's own prompt); the span is used only when
it occurs in the reply, so the short answer is always the model's own words. The whole reply
stays the final content, and the trace records what was done and why
(``meta.short_answer_read``), so nothing is replaced silently.
"""

from __future__ import annotations

from typing import Any

from searchain.answers import after_last_marker, clean_span
from searchain.citations import strip_marks
from searchain.llm import LLM, LLMError
from searchain.llm.cache import ReplayMiss
from searchain.llm.prompting import call_template
from searchain.methods.baseline_util import SHORT_ANSWER_ENDING, answer_ending
from searchain.text import normalize_answer
from searchain.trace_extras import SHORT_ANSWER_READ_KEY
from searchain.types import Trace

# A stated short answer of more words than this, with no marker before it, is the reply's
# sentence rather than an answer span ("Greenwich Village, New York City" is five).
SENTENCE_WORDS = 6
# The plan's mark for an answer the search did not confirm, which a reply may copy into its
# short answer ("... the /etc/aptitude directory (unchecked)").
UNCHECKED = "(unchecked)"


def asks_short_answer(task: str) -> bool:
    """Whether the prompt of ``task`` asks for a short answer a reader can copy out of the
    reply — not a label (FEVER's SUPPORTS / REFUTES, a yes or no), which no span holds."""
    return answer_ending(task) == SHORT_ANSWER_ENDING


def needs_reading(written: str, stated: str) -> bool:
    """Whether ``stated`` is the reply's sentence because the reply named no answer."""
    return not after_last_marker(written) and len(stated.split()) > SENTENCE_WORDS


def read_short_answer(llm: LLM, trace: Trace, written: str, stated: str) -> str:
    """The short answer of ``written`` (the reply as the model wrote it), given ``stated``,
    what the answer parser found in it: the reader's span of the reply where the reply named
    no answer and the span is in it, else ``stated``; the plan's unchecked mark dropped."""
    stated = stated.removesuffix(UNCHECKED).strip()
    if not needs_reading(written, stated):
        return stated
    record: dict[str, Any] = {
        "why": "the reply did not end with 'So the answer is': the reader read its short "
        "answer out of the reply",
        "stated": stated,
    }
    trace.meta[SHORT_ANSWER_READ_KEY] = record
    reply = " ".join(strip_marks(written).split())
    try:
        result = call_template(
            llm,
            "reader_extract",
            max_tokens=24,
            stop=("\n",),
            passage=reply,
            question=trace.question,
        )
    except ReplayMiss:  # a replay without this call: re-record, never pass it off as a failure
        raise
    except LLMError as e:  # the reply's sentence stays the short answer, and says why
        record.update(span="", used=False, failed=str(e))
        trace.errors.append(f"reading the short answer out of the reply failed: {e}")
        return stated
    trace.usage.add(result.usage)
    span = clean_span(result.text)
    used = bool(span) and normalize_answer(span) in normalize_answer(reply)
    record.update(span=span, used=used)
    if not used:
        record["why"] += "; its span is not in the reply, so the reply's sentence is kept"
    return span if used else stated
