"""Self-Ask and ReAct on chat models: the chat prompts carry the completion prompts' demos,
the parsers read the replies Qwen2.5-Coder-0.5B-Instruct really wrote (and its habits), the
dialogue mechanics on scripted replies, and the real 0.5B model on three HotpotQA questions
over the BM25 demo index (slow)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from searchain import prompts
from searchain.eval.datasets import load_dataset
from searchain.llm.base import LLM, GenerationParams
from searchain.methods.baseline_util import final_answer
from searchain.methods.react import (
    CHAT_INVALID,
    ReAct,
    parse_chat_action,
    split_reply,
)
from searchain.methods.self_ask import FINAL_REQUEST, SelfAsk, chat_follow_up, plain
from searchain.retrieval import BM25Index
from searchain.types import Completion, CompletionResult, Trace, Usage

Q_ARCHER = (
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?"
)


class Scripted(LLM):
    """A chat client that replies with given texts (replies the real 0.5B model wrote) and
    keeps the messages it was sent."""

    backend, form = "scripted", "chat"

    def __init__(self, replies: list[str]) -> None:
        super().__init__("scripted")
        self.replies = list(replies)
        self.sent: list[list[dict[str, str]]] = []

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        raise AssertionError("a chat client is sent messages, never a completion prompt")

    def _chat(self, messages: Any, params: GenerationParams) -> CompletionResult:
        self.sent.append([dict(m) for m in messages])
        return CompletionResult([Completion(self.replies.pop(0))], Usage(0, 0, 10, 5))


# -- the chat prompts are the completion prompts' demos ------------------------------------
def test_self_ask_chat_demos_are_the_completion_demos() -> None:
    chat = prompts.messages("baselines/self_ask", question="Q?")
    assert chat[0]["role"] == "system" and chat[-1] == {"role": "user", "content": "Question: Q?"}
    demos = [(u["content"], a["content"]) for u, a in zip(chat[1:-1:2], chat[2:-1:2], strict=True)]
    assert all(u.startswith("Question: ") for u, _ in demos) and len(demos) == 4
    body = prompts.load("baselines/self_ask").fill(question="Q?")
    assert "\n\n".join(f"{u}\n{a}" for u, a in demos) + "\n\nQuestion: Q?" == body.removesuffix(
        "\nAre follow up questions needed here:"
    )


def test_react_chat_demos_are_the_completion_demos() -> None:
    chat = prompts.messages("baselines/react", question="Q?")
    assert chat[0]["role"] == "system" and chat[-1] == {"role": "user", "content": "Question: Q?"}
    for m in chat[1:]:  # the model's turns are Thought/Action, the user's Question/Observation
        first = m["content"].split(" ", 1)[0]
        assert first in (("Thought",) if m["role"] == "assistant" else ("Question:", "Observation"))
    body = prompts.load("baselines/react").fill(question="Q?")
    demos = body[body.index("Question: ") :]
    assert "\n".join(m["content"] for m in chat[1:]) == demos
    instruction = chat[0]["content"].split("\n")[:3]  # then a line for chat replies
    assert "\n".join(instruction) in body and "(2) Finish[answer]" in instruction[2]


# -- parsers, on what the real model wrote -------------------------------------------------
def test_self_ask_reads_real_and_markdown_replies() -> None:
    real = (
        "Are follow up questions needed here: Yes.\nFollow up: Who was the woman who portrayed "
        "Corliss Archer in the film Kiss and Tell?\n"
    )
    assert chat_follow_up(plain(real)) == (
        "Who was the woman who portrayed Corliss Archer in the film Kiss and Tell?",
        real.strip(),
    )
    assert chat_follow_up(plain("Follow up: Where is Adriana Trigiani from?")) == (
        "Where is Adriana Trigiani from?",
        "Follow up: Where is Adriana Trigiani from?",
    )
    assert final_answer(plain("So the final answer is: Shirley Temple.")) == "Shirley Temple"
    # A reply that is neither (the model wrote prose): no follow-up, no final answer.
    prose = 'Christopher Coppola is the screenwriter with credits for "Evolution".'
    assert chat_follow_up(plain(prose)) is None and final_answer(prose) is None
    # Chat habits: markdown and bullets; a list of follow-ups asks the first.
    md = "**Are follow up questions needed here:** Yes.\n- **Follow up:** Who directed Jaws?"
    assert chat_follow_up(plain(md)) == (
        "Who directed Jaws?",
        "Are follow up questions needed here: Yes.\nFollow up: Who directed Jaws?",
    )
    listed = "1. Follow up: Who directed Jaws?\n2. Follow up: Where is he from?\nLet me look."
    assert chat_follow_up(plain(listed)) == ("Who directed Jaws?", "Follow up: Who directed Jaws?")
    assert final_answer(plain("So the final answer is: **Joseph Ball**")) == "Joseph Ball"


def test_react_reads_real_and_markdown_replies() -> None:
    real = (
        "Thought 1: I need to search Corliss Archer and Kiss and Tell, find her position, then "
        "find what government position she held.\nAction 1: Search[Corliss Archer]"
    )
    thought, action = split_reply(real)
    assert thought.startswith("I need to search Corliss Archer") and thought.endswith("held.")
    assert parse_chat_action(action) == ("search", "Corliss Archer")
    # Replies the model really wrote: an action alone; a misnumbered thought with an action
    # in it; the instruction's placeholder (the method refuses it); a thought alone.
    assert parse_chat_action(split_reply("Action 2: Finish[Animorphs]")[1]) == (
        "finish",
        "Animorphs",
    )
    thought, action = split_reply("Thought 3: Search[Animorphs horror war]")
    assert (thought, parse_chat_action(action)) == ("", ("search", "Animorphs horror war"))
    assert parse_chat_action(split_reply("Thought 8: Finish[answer]")[1]) == ("finish", "answer")
    alone = "Thought 2: Animorphs is a science fantasy series. I need to search first person."
    assert split_reply(alone) == (
        "Animorphs is a science fantasy series. I need to search first person.",
        "",
    )
    # Chat habits: markdown, "Search: X", a missing bracket, quotes, Finish(X).
    md = "**Thought 1:** I should look up Milhouse.\n**Action 1:** `Search[Milhouse]`"
    assert split_reply(md) == ("I should look up Milhouse.", "Search[Milhouse]")
    assert parse_chat_action("Search: Leonid Levin") == ("search", "Leonid Levin")
    assert parse_chat_action("Search[Milhouse named after") == ("search", "Milhouse named after")
    assert parse_chat_action('Finish["Richard Nixon"]') == ("finish", "Richard Nixon")
    assert parse_chat_action("Finish(Richard Nixon)") == ("finish", "Richard Nixon")
    assert parse_chat_action("I think we are done.") == ("", "I think we are done.")


# -- the dialogue, on scripted replies (real ones) -----------------------------------------
def test_self_ask_dialogue_answers_a_follow_up_in_a_user_turn(index: BM25Index) -> None:
    follow = "Who was the woman who portrayed Corliss Archer in the film Kiss and Tell?"
    llm = Scripted([
        f"Are follow up questions needed here: Yes.\nFollow up: {follow}\n",
        "Shirley Temple",  # the reader
        "So the final answer is: Shirley Temple.",
    ])  # fmt: skip
    trace = SelfAsk(llm, index, k=3).run(Q_ARCHER)
    assert trace.answer == "Shirley Temple" and trace.meta["prompt_form"] == "chat"
    assert [(n.query, n.answer, n.source) for n in trace.nodes] == [
        (follow, "Shirley Temple", "retrieval")
    ]
    assert [p.id for p in trace.nodes[0].passages] == [p.id for p in index.search(follow, k=3)]
    last = llm.sent[-1]
    assert last[-2] == {
        "role": "assistant",
        "content": f"Are follow up questions needed here: Yes.\nFollow up: {follow}",
    }
    assert last[-1] == {"role": "user", "content": "Intermediate answer: Shirley Temple."}
    assert llm.sent[1][-1]["content"].endswith(f"Question: {follow}")  # the read prompt
    assert trace.meta["transcript"].endswith(
        "Intermediate answer: Shirley Temple.\nSo the final answer is: Shirley Temple."
    )
    assert not trace.errors


def test_self_ask_budget_and_prose_ask_for_the_final_answer(index: BM25Index) -> None:
    llm = Scripted([
        "Are follow up questions needed here: Yes.\nFollow up: Who directed Jaws?",
        "Steven Spielberg",
        "Follow up: Where is Steven Spielberg from?",  # over the budget: not answered
        "So the final answer is: Steven Spielberg.",
    ])  # fmt: skip
    trace = SelfAsk(llm, index, k=3, max_follow_ups=1).run("Who directed Jaws?")
    assert len(trace.nodes) == 1 and trace.answer == "Steven Spielberg"
    assert any("follow-up budget (1) reached" in e for e in trace.errors)
    asked = llm.sent[-1][-1]  # the request joins the last user turn
    assert asked["role"] == "user"
    assert asked["content"] == f"Intermediate answer: Steven Spielberg.\n{FINAL_REQUEST}"
    assert "Where is Steven Spielberg from" not in trace.meta["transcript"]
    # Prose instead of a follow-up: recorded with the reply, and the answer asked for; a
    # reply to that without the marker is read for its short answer, and recorded too.
    llm = Scripted(["Jaws was directed by Steven Spielberg.", "**Steven Spielberg**"])
    trace = SelfAsk(llm, index, k=3).run("Who directed Jaws?")
    assert trace.answer == "Steven Spielberg" and len(trace.errors) == 2
    assert "Jaws was directed by Steven Spielberg." in trace.errors[0]
    assert llm.sent[-1][-1] == {"role": "user", "content": FINAL_REQUEST}


def test_self_ask_no_search_is_one_reply(index: BM25Index) -> None:
    reply = (
        "Are follow up questions needed here: Yes.\nFollow up: Who directed Jaws?\n"
        "Intermediate answer: Steven Spielberg.\nSo the final answer is: Steven Spielberg"
    )
    llm = Scripted([reply])
    trace = SelfAsk(llm, None).run("Who directed Jaws?")
    assert trace.method == "self-ask-no-search" and trace.answer == "Steven Spielberg"
    assert [(n.query, n.answer, n.source) for n in trace.nodes] == [
        ("Who directed Jaws?", "Steven Spielberg", "llm")
    ]
    assert len(llm.sent) == 1 and not trace.errors


def test_react_dialogue_invalid_actions_and_forced_finish(index: BM25Index) -> None:
    llm = Scripted([
        "Thought 1: I need to search Kiss and Tell.\nAction 1: Search[Kiss and Tell]",
        "Thought 2: Kiss and Tell is a 1945 film.",  # a thought alone: the action is asked
        "Action 2: Search[query]",  # the instruction's placeholder: invalid
        "Thought 8: Finish[Shirley Temple]",  # the forced finish
    ])  # fmt: skip
    trace = ReAct(llm, index, k=1, max_steps=2).run(Q_ARCHER)
    assert trace.meta["prompt_form"] == "chat" and trace.answer == "Shirley Temple"
    search, invalid, forced = trace.nodes
    assert search.meta["action"] == "Search[Kiss and Tell]"
    assert [p.id for p in search.passages] == [p.id for p in index.search("Kiss and Tell", k=1)]
    assert invalid.meta["observation"] == CHAT_INVALID.format(i=2) and not invalid.passages
    assert forced.meta["forced"] and forced.answer == "Shirley Temple"
    assert any("step 2: a placeholder action" in e for e in trace.errors)
    assert any("step budget (2) reached" in e for e in trace.errors)
    sent = llm.sent
    assert sent[1][-2:] == [
        {"role": "assistant", "content": "Thought 1: I need to search Kiss and Tell.\n"
         "Action 1: Search[Kiss and Tell]"},
        {"role": "user", "content": f"Observation 1: {search.meta['observation']}"},
    ]  # fmt: skip
    assert sent[2][-1] == {"role": "user", "content": "Thought 2 has no action. Write Action 2."}
    assert sent[3][-1]["content"].startswith(f"Observation 2: {CHAT_INVALID.format(i=2)}\n")
    assert "Finish[" in sent[3][-1]["content"]
    assert trace.meta["transcript"].startswith(f"Question: {Q_ARCHER}\nThought 1: ")


# -- the real 0.5B instruct model, three HotpotQA questions --------------------------------
@pytest.fixture(scope="module")
def questions(data_dir) -> list[str]:
    return [e.question for e in load_dataset("hotpotqa", limit=3, seed=None)]


@pytest.fixture(scope="module")
def self_ask_runs(chat_llm, index, questions) -> list[Trace]:
    return [SelfAsk(chat_llm, index, k=3).run(q) for q in questions]


@pytest.fixture(scope="module")
def react_runs(chat_llm, index, questions) -> list[Trace]:
    return [ReAct(chat_llm, index, k=1).run(q) for q in questions]


@pytest.mark.slow
def test_real_chat_model_self_asks_follow_ups_answered_from_retrieval(self_ask_runs, index) -> None:
    for trace in self_ask_runs:
        assert trace.meta["prompt_form"] == "chat" and trace.answer.strip()
        assert trace.nodes, trace.meta["transcript"]
        for node in trace.nodes:
            assert node.source == "retrieval" and node.passages and node.answer
            assert [p.id for p in node.passages] == [p.id for p in index.search(node.query, k=3)]
            assert (
                f"Follow up: {node.query}\nIntermediate answer: {node.answer}."
                in (trace.meta["transcript"])
            )
        assert trace.meta["transcript"].startswith("Are follow up questions needed here: Yes.")
        assert re.search(r"So the final answer is: .+$", trace.meta["transcript"])
    # The format is followed: at most one of the three needed its final answer asked for.
    assert sum(bool(t.errors) for t in self_ask_runs) <= 1


@pytest.mark.slow
def test_real_chat_model_react_searches_and_finishes(react_runs) -> None:
    for trace in react_runs:
        assert trace.meta["prompt_form"] == "chat" and trace.answer.strip()
        searches = [n for n in trace.nodes if n.meta["action"].startswith("Search[")]
        assert searches and all(n.passages and n.source == "retrieval" for n in searches)
        for n in searches:
            assert f"Observation {n.id}: {n.meta['observation']}" in trace.meta["transcript"]
        assert trace.references
    # The model finishes by itself (no forced Finish) on at least two of the three.
    finished = [t for t in react_runs if not any(n.meta.get("forced") for n in t.nodes)]
    assert len(finished) >= 2
    for trace in finished:
        action = trace.nodes[-1].meta["action"]
        assert action.startswith("Finish[") and trace.answer in action


@pytest.mark.slow
def test_real_chat_model_self_asks_without_search(chat_llm, questions) -> None:
    trace = SelfAsk(chat_llm, None).run(questions[2])
    assert trace.meta["prompt_form"] == "chat" and trace.answer.strip()
    assert trace.nodes and all(n.source == "llm" and n.answer for n in trace.nodes)
    assert not trace.references and trace.usage.llm_calls in (1, 2)
