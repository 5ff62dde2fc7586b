"""SearChain's tracing step on an instruct model: what the model sees, and what happens when
it copies the tracing turn back instead of answering it.

The echoes checked here are real: Qwen2.5-Coder-1.5B-Instruct wrote them in the committed
chat runs (``results/chat-hotpotqa/chat``); they are replayed through :func:`tracing`, and
every other committed tracing output is checked not to be taken for one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchain.llm.base import LLM, GenerationParams, Message
from searchain.methods.searchain import SearChain, SearChainConfig
from searchain.methods.searchain.rounds import ChatRounds
from searchain.methods.searchain.tracing import (
    echoes_tracing_prompt,
    final_content_of,
    tracing,
)
from searchain.readers.llm_reader import LLMReader
from searchain.types import Completion, CompletionResult, Node, Trace

RESULTS = Path(__file__).resolve().parents[3] / "results"
CHAT_RUN = RESULTS / "chat-hotpotqa" / "chat" / "results.jsonl"
# The items of the committed chat run whose tracing reply restated the tracing turn.
ECHOED = {"5abd94525542992ac4f382d2", "5a7166395542994082a3e814", "5ab3b0bf5542992ade7c6e39"}
# The same replies in the other committed runs made before the fallback existed: the same
# three questions among the demo questions, and one HotpotQA tune item.
ECHOED_ELSEWHERE = ECHOED | {"5a8e3dc05542995085b37401"}


def _searchain_records(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if r["method"].startswith("searchain") and r.get("trace")]


def _content(trace: dict) -> str:
    out = trace["meta"].get("tracing_output", "")
    return final_content_of(out) if trace["meta"].get("prompt_form") == "chat" else out.strip()


class Replay(LLM):
    """Answers every chat call with one recorded real reply; keeps the messages it got."""

    backend = "replay"

    def __init__(self, reply: str) -> None:
        super().__init__("qwen2.5-coder-1.5b")
        self.form, self.reply, self.sent = "chat", reply, []  # type: ignore[var-annotated]

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        raise AssertionError("a chat model's tracing is a chat call")

    def _chat(self, messages: list[Message], params: GenerationParams) -> CompletionResult:
        self.sent.append(messages)
        return CompletionResult([Completion(self.reply)])


def test_the_recorded_echoes_are_found_and_nothing_else_is() -> None:
    chat = {r["id"] for r in _searchain_records(CHAT_RUN) if echoes_tracing_prompt(
        _content(r["trace"]))}  # fmt: skip
    assert chat == ECHOED
    checked, fallbacks = 0, 0
    for path in RESULTS.rglob("results.jsonl"):
        for r in _searchain_records(path):
            meta = r["trace"]["meta"]
            if "tracing_output" not in meta:
                continue
            checked += 1
            if meta.get("tracing_fallback") == "echo" or meta.get("tracing_retry"):
                fallbacks += 1  # made with the fallback or the retry: the echo is recorded
                assert echoes_tracing_prompt(final_content_of(meta["tracing_output"]))
            elif echoes_tracing_prompt(_content(r["trace"])):
                assert r["id"] in ECHOED_ELSEWHERE, (path, r["id"])
    assert checked > 50  # the HotpotQA quality runs and the completion-form runs
    assert fallbacks >= 1  # the tune item's echo, answered from the path since the fix


@pytest.mark.parametrize("item", sorted(ECHOED))
def test_an_echoed_tracing_reply_is_answered_from_the_verified_path(item: str) -> None:
    record = next(r for r in _searchain_records(CHAT_RUN) if r["id"] == item)
    recorded = Trace.from_dict(record["trace"])
    nodes = {n.id: n for n in recorded.nodes}
    path = [nodes[i] for i in recorded.meta["path"]]
    reply = recorded.meta["tracing_output"]
    llm = Replay(reply)
    rounds = ChatRounds(llm, recorded.question, "searchain/coq_multihop")
    trace = Trace(question=recorded.question, method="searchain")
    tracing(trace, path, rounds, "chat", SearChainConfig())

    answered = [n for n in path if n.answer]
    assert trace.meta["tracing_fallback"] == "echo"
    assert trace.meta["tracing_output"] == reply  # what the model wrote is kept
    assert any("copied its prompt" in e for e in trace.errors)
    assert trace.answer == answered[-1].answer.strip().rstrip(".").strip()
    assert "search engine" not in trace.answer and "[Query" not in trace.final_content
    # Each verified answer is a sentence marked with its pair's passage.
    marks = {c.mark for c in trace.citations if c.passage_id}
    assert marks == {k for k, n in enumerate(answered, 1) if n.passages}


def _pairs() -> list[Node]:
    return [Node("r1.1", "Who directed Jaws?", "Steven Spielberg", "ir-corrected", "q")]


def test_tracing_after_the_demos_sends_no_round_of_the_dialogue() -> None:
    llm = Replay("[Final Content]: Jaws was directed by Steven Spielberg [1]. So the answer "
                 "is Steven Spielberg.")  # fmt: skip
    rounds = ChatRounds(llm, "Who directed Jaws?", "searchain/coq_multihop")
    rounds.messages = [*rounds.messages, {"role": "assistant", "content": "[Query 1]: stale"}]
    rounds.last = "[Query 1]: Who directed Jaws?\n[Answer 1]: George Lucas."
    rounds.trace_final(_pairs(), 64, "demos")
    rounds.trace_final(_pairs(), 64, "dialogue")
    rounds.trace_final(_pairs(), 64, "alone")
    demos, dialogue, alone = llm.sent
    assert alone == demos[-1:]  # the tracing turn and nothing else
    assert demos[:-1] == rounds.first[:-1]  # system + the demo turns, not the question's turn
    assert demos[-1]["role"] == "user" and "Steven Spielberg" in demos[-1]["content"]
    assert not any("George Lucas" in m["content"] or "stale" in m["content"] for m in demos)
    assert any("George Lucas" in m["content"] for m in dialogue)  # the latest chain is there


def test_an_unknown_tracing_context_is_refused() -> None:
    with pytest.raises(ValueError, match="tracing_context"):
        SearChainConfig(tracing_context="everything").validate()


@pytest.mark.slow
def test_real_chat_searchain_traces_after_the_demos(chat_llm, index, hotpot) -> None:
    method = SearChain(chat_llm, index, LLMReader(chat_llm),
                       SearChainConfig(r_max=2, final_step="tracing",
                                       tracing_context="demos"))  # fmt: skip
    trace = method.run(hotpot[1]["question_text"])
    assert trace.meta["tracing_context"] == "demos"
    assert trace.answer.strip() and trace.final_content.strip()
    if trace.meta.get("tracing_fallback"):
        assert any("copied its prompt" in e for e in trace.errors)
    else:
        assert not echoes_tracing_prompt(trace.final_content)
    refs = {p.id for p in trace.references}
    assert all(c.passage_id in refs for c in trace.citations if c.passage_id)


class EchoFirst(LLM):
    """The recorded echo for the first tracing call, then ``then`` (a replay of recorded real
    calls of the same model, or the echo again); keeps the messages it got."""

    backend = "replay"

    def __init__(self, echo: str, then: LLM | None = None) -> None:
        super().__init__("qwen2.5-coder-1.5b")
        self.form, self.echo, self.then, self.sent = "chat", echo, then, []  # type: ignore[var-annotated]

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        raise AssertionError("a chat model's tracing is a chat call")

    def _chat(self, messages: list[Message], params: GenerationParams) -> CompletionResult:
        self.sent.append(messages)
        if len(self.sent) == 1 or self.then is None:
            return CompletionResult([Completion(self.echo)])
        return self.then.chat(messages, params)


def _echoed(item: str) -> tuple[Trace, list[Node]]:
    record = next(r for r in _searchain_records(CHAT_RUN) if r["id"] == item)
    recorded = Trace.from_dict(record["trace"])
    nodes = {n.id: n for n in recorded.nodes}
    return recorded, [nodes[i] for i in recorded.meta["path"]]


@pytest.mark.parametrize("item", sorted(ECHOED))
def test_an_echo_is_asked_again_alone_when_configured(item: str) -> None:
    """``echo_retry=alone``: the tracing turn is sent again on its own; the 1.5B model's real
    second replies (recorded) are final contents, so the answer is written, not the last
    pair's. Both replies stay in the trace."""
    from recordings import recorded_llm

    recorded, path = _echoed(item)
    real = recorded_llm("searchain_echo_retry", "qwen2.5-coder-1.5b")
    llm = EchoFirst(recorded.meta["tracing_output"], real)
    rounds = ChatRounds(llm, recorded.question, "searchain/coq_multihop")
    trace = Trace(question=recorded.question, method="searchain")
    tracing(trace, path, rounds, "chat", SearChainConfig(echo_retry="alone"))

    first, again = llm.sent
    assert len(again) == 1 and again[0] == first[-1]  # the tracing turn alone
    retry = trace.meta["tracing_retry"]
    assert retry["context"] == "alone" and retry["output"].strip()
    assert any("asked again" in e for e in trace.errors)
    assert "tracing_fallback" not in trace.meta  # the second reply answered the turn
    assert not echoes_tracing_prompt(trace.final_content)
    assert trace.answer and trace.answer.lower() in trace.final_content.lower()


def test_a_second_echo_falls_back_to_the_verified_path() -> None:
    recorded, path = _echoed(sorted(ECHOED)[0])
    echo = recorded.meta["tracing_output"]
    llm = EchoFirst(echo)  # it copies the turn back both times
    rounds = ChatRounds(llm, recorded.question, "searchain/coq_multihop")
    trace = Trace(question=recorded.question, method="searchain")
    tracing(trace, path, rounds, "chat", SearChainConfig(echo_retry="alone"))
    assert len(llm.sent) == 2 and trace.meta["tracing_fallback"] == "echo"
    answered = [n for n in path if n.answer]
    assert trace.answer == answered[-1].answer.strip().rstrip(".").strip()
    with pytest.raises(ValueError, match="echo_retry"):
        SearChainConfig(echo_retry="again").validate()
    with pytest.raises(ValueError, match="repeats the tracing call"):
        SearChainConfig(echo_retry="dialogue").validate()


@pytest.mark.parametrize(("task", "label"), [("factcheck", "(SUPPORTS or REFUTES)?"),
                                             ("yesno", 'only be "Yes" or "No"')])  # fmt: skip
def test_the_tracing_turn_asks_the_question_with_its_label(task: str, label: str) -> None:
    """The paper's FEVER question is the claim plus "(SUPPORTS or REFUTES)?": the tracing turn
    asks it so too (asked the bare claim, the 1.5B model named an entity: "A 1993 American
    legal political thriller ..."); ``label_in_tracing=False`` is the earlier turn."""
    from searchain.methods.baseline_util import SHORT_ANSWER_ENDING
    from searchain.methods.searchain.rounds import make_rounds

    claim = "The Pelican Brief is based solely on a television series."
    for on in (True, False):
        config = SearChainConfig(task=task, label_in_tracing=on)
        llm = Replay("[Final Content]: It is based on a novel [1]. So the answer is REFUTES.")
        labels_of = config.task if config.label_in_tracing else None
        rounds = make_rounds(llm, claim, config.template_name(), "chat", labels_of=labels_of)
        rounds.trace_final(_pairs(), 64, "dialogue")
        turn = llm.sent[-1][-1]["content"]
        assert claim in turn and (label in turn) == on
        # the last line names the labels, or asks for a short answer as before
        assert turn.endswith(SHORT_ANSWER_ENDING) != on
        assert ("REFUTES" in turn.splitlines()[-1] or "No." in turn.splitlines()[-1]) == on
    assert SearChainConfig().label_in_tracing  # on by default
    # a span task's turn is the one the committed runs recorded, word for word
    span = make_rounds(Replay("x"), "Who directed Jaws?", "searchain/coq_multihop", "chat",
                       labels_of="multihop")  # fmt: skip
    span.trace_final(_pairs(), 64, "alone")
    assert span.llm.sent[0][-1]["content"].endswith(SHORT_ANSWER_ENDING)  # type: ignore[attr-defined]
