"""The short answer of a reply that named none: read out of the reply by the LLM reader, only
where the reader's span is in the reply, and said so in the trace. The replies are what the
1.5B model wrote as SearChain's evidence step on the real-documentation questions
(results/real-docs/qwen2.5-coder-1.5b/searchain-plan.traces.jsonl); the reader's calls are
recorded real calls of the same model, and one slow test re-runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recordings import RECORD, recorded_llm
from searchain.llm import LLM, LLMError
from searchain.llm.base import GenerationParams
from searchain.methods import RetrieveRead
from searchain.methods.short_answer_reading import (
    asks_short_answer,
    needs_reading,
    read_short_answer,
)
from searchain.retrieval import BM25Index
from searchain.trace_extras import AnswerExtras
from searchain.types import Completion, CompletionResult, Passage, Trace, Usage

MODEL = "qwen2.5-coder-1.5b"
# (question, the reply as written, what the answer parser returns of it)
REPLIES = [
    (
        "Which free software license does the Debian Administrator's Handbook call the least "
        "restrictive?",
        "The Debian Administrator's Handbook calls the least restrictive the GNU General Public "
        "License (GPL) [3].",
        "The Debian Administrator's Handbook calls the least restrictive the GNU General "
        "Public License (GPL)",
    ),
    (
        'The director of the romantic comedy "Big Stone Gap" is based in what New York city?',
        'The director of the romantic comedy "Big Stone Gap" is Adriana Trigiani, who is based '
        "in Greenwich Village, New York City [2].",
        'The director of the romantic comedy "Big Stone Gap" is Adriana Trigiani, who is based '
        "in Greenwich Village, New York City",
    ),
]


def test_a_label_is_never_read_out_of_the_reply() -> None:
    # FEVER's SUPPORTS / REFUTES and a yes or no are labels, which no span of the reply holds
    assert asks_short_answer("open") and asks_short_answer("multihop")
    assert not asks_short_answer("yesno") and not asks_short_answer("factcheck")


def test_only_a_sentence_without_an_answer_marker_is_read() -> None:
    assert needs_reading(REPLIES[0][1], REPLIES[0][2])
    said = "The handbook calls it the GPL [3]. So the answer is GNU General Public License."
    assert not needs_reading(said, "the GNU General Public License, version 2 or later")
    assert not needs_reading(
        "Greenwich Village, New York City [2].", "Greenwich Village, New York City"
    )


@pytest.mark.parametrize(("question", "written", "stated"), REPLIES)
def test_the_reader_reads_the_answer_out_of_the_reply(
    question: str, written: str, stated: str
) -> None:
    trace = Trace(question=question, method="searchain")
    answer = read_short_answer(recorded_llm("short_answer_reading", MODEL), trace, written, stated)
    read = AnswerExtras.of(trace).short_answer_read
    assert read is not None and read["stated"] == stated and read["used"]
    assert answer == read["span"] and answer.lower() in written.lower()
    assert len(answer.split()) < len(stated.split())  # a span, not the sentence
    assert AnswerExtras.of(trace).note() == (
        "the reply named no short answer; it was read out of the reply"
    )
    if not RECORD:
        assert trace.usage.cached_calls == 1


def test_the_answers_of_the_readme_and_the_handbook() -> None:
    llm = recorded_llm("short_answer_reading", MODEL)
    answers = [read_short_answer(llm, Trace(question=q, method="m"), w, s) for q, w, s in REPLIES]
    assert answers[0] in ("GPL", "GNU General Public License", "GNU General Public License (GPL)")
    assert "greenwich village" in answers[1].lower()


def test_the_plans_unchecked_mark_never_ends_a_short_answer() -> None:
    trace = Trace(question="Where does aptitude keep its configuration?", method="searchain")
    stated = 'the "/etc/aptitude" directory (unchecked)'
    assert read_short_answer(Refusing(), trace, stated, stated) == 'the "/etc/aptitude" directory'
    assert AnswerExtras.of(trace).short_answer_read is None  # short: nothing was read


class Scripted(LLM):
    """Replies with a given text, or raises: the reader's span outside the reply and a failing
    call cannot be had from the real model on demand (fault injection)."""

    backend, form = "scripted", "chat"

    def __init__(self, reply: str | LLMError) -> None:
        super().__init__("scripted")
        self.reply, self.calls = reply, 0

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        raise AssertionError("a chat client is sent messages, never a completion prompt")

    def _chat(self, messages: Any, params: GenerationParams) -> CompletionResult:
        self.calls += 1
        if isinstance(self.reply, LLMError):
            raise self.reply
        return CompletionResult([Completion(self.reply)], Usage(0, 0, 10, 5))


class Refusing(Scripted):
    def __init__(self) -> None:
        super().__init__(LLMError("never called"))


def test_a_span_not_in_the_reply_is_not_used() -> None:
    question, written, stated = REPLIES[0]
    trace = Trace(question=question, method="searchain")
    assert read_short_answer(Scripted("the MIT License"), trace, written, stated) == stated
    read = AnswerExtras.of(trace).short_answer_read
    assert read and read["span"] == "the MIT License" and not read["used"]
    assert "not in the reply" in read["why"]
    assert AnswerExtras.of(trace).note() == (
        "the reply named no short answer; its sentence is shown as the answer"
    )


def test_a_failing_reader_call_keeps_the_sentence_and_says_so() -> None:
    question, written, stated = REPLIES[0]
    trace = Trace(question=question, method="searchain")
    assert read_short_answer(Scripted(LLMError("HTTP 503")), trace, written, stated) == stated
    assert any("HTTP 503" in e for e in trace.errors)
    assert AnswerExtras.of(trace).short_answer_read["failed"] == "HTTP 503"


PASSAGES = [Passage(id="p1", title="Licenses", text="The BSD license is the least restrictive.")]


class AnswersThenReads(Scripted):
    """The answering call replies without the ending it was asked for; the reader's call
    copies a span."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__("")
        self.replies = replies

    def _chat(self, messages: Any, params: GenerationParams) -> CompletionResult:
        self.calls += 1
        return CompletionResult([Completion(self.replies.pop(0))], Usage(0, 0, 10, 5))


def test_retrieve_read_reads_only_when_its_prompt_asked_for_the_ending(tmp_path: Path) -> None:
    index = BM25Index.build(PASSAGES, tmp_path / "index", show_progress=False)
    reply = "The handbook calls the BSD license the least restrictive one of them [1]."
    question = "Which license is the least restrictive?"
    asked = RetrieveRead(AnswersThenReads([reply, "BSD license"]), index, k=1).run(question)
    assert asked.answer == "BSD license" and asked.final_content.startswith(reply[:40])
    assert AnswerExtras.of(asked).short_answer_read["used"]
    legacy = RetrieveRead(AnswersThenReads([reply]), index, k=1, template="retrieve_read")
    trace = legacy.run(question)  # one sentence, no ending asked: the sentence is the answer
    assert trace.answer.startswith("The handbook calls") and not AnswerExtras.of(trace).note()


@pytest.mark.slow
def test_recordings_match_the_real_model() -> None:
    from searchain.llm.local import LocalLLM
    from searchain.llm.models import model_path

    live = LocalLLM(model_path(MODEL), api="chat")
    for question, written, stated in REPLIES:
        replayed = read_short_answer(
            recorded_llm("short_answer_reading", MODEL),
            Trace(question=question, method="m"),
            written,
            stated,
        )
        fresh = read_short_answer(live, Trace(question=question, method="m"), written, stated)
        assert fresh == replayed
