"""REBEL on chat models: the chat forms of its six prompts, the parsers on chat habits (most
replies below are what Qwen2.5-Coder-0.5B-Instruct really wrote, noted "real"), the chat path
of ``Rebel._llm`` on scripted replies, and end to end with the real 0.5B chat model over the
BM25 demo index (in process, and through a real llama.cpp server's chat API).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from searchain import prompts
from searchain.llm import LLM, GenerationParams, make_llm
from searchain.methods.catalog import make_embedder
from searchain.methods.rebel import Rebel, RebelConfig
from searchain.methods.rebel.parse import (
    chat_answer,
    find_tool_number,
    find_yes_no,
    parse_json_object,
    parse_subquestions,
    parse_tool_number,
    parse_yes_no,
)
from searchain.retrieval import BM25Index
from searchain.tools import SearchTool
from searchain.tools.calculator import Calculator
from searchain.types import Completion, CompletionResult, Trace

STEPS = ("split", "memory_check", "pick_tool", "tool_input", "answer_tool", "answer_memory")


# -- the chat forms of the prompts -------------------------------------------------------------
@pytest.mark.parametrize("step", STEPS)
def test_every_step_has_a_chat_form_with_the_completion_forms_demos(step: str) -> None:
    name = f"rebel/{step}"
    assert prompts.has_chat(name)
    values = dict(tools="tool 1: X", memory="", question="QQQ?", tool="<TOOL>T</TOOL>",
                  tool_output="OUT", prefix='{"query": "')  # fmt: skip
    msgs = prompts.messages(name, **values)
    roles = [m["role"] for m in msgs]
    assert roles[0] == "system" and roles[-1] == "user"
    assert roles[1:] == ["user", "assistant"] * (len(roles) // 2 - 1) + ["user"]
    assert "QQQ?" in msgs[-1]["content"] and "{" + "question}" not in json.dumps(msgs)
    # The same demos: every demo answer of the chat form is written in the completion form.
    completion = prompts.fill(name, **values)
    for m in msgs:
        if m["role"] == "assistant":
            assert m["content"] in completion, m["content"]
    # ... and every demo question of the completion form is asked in a user turn.
    asked = re.findall(r'^Q: "?(.+?)"?(?: Is the answer.*)?$|<Q>(.+?)</Q>', completion, re.M)
    users = " ".join(m["content"] for m in msgs if m["role"] == "user")
    assert all((a or b) in users for a, b in asked)
    assert set(prompts.load_chat(name).fields) <= set(prompts.load(name).fields)


# -- parsing chat replies ------------------------------------------------------------------------
def test_chat_subquestions() -> None:
    real_fenced = '```json\n[\n  "What is the currency in the birthplace of Rumi? "\n]\n```'
    assert parse_subquestions(real_fenced, chat=True) == (
        ["What is the currency in the birthplace of Rumi?"], "json",
    )  # fmt: skip
    real_numbered = "1. Who won the Nobel Prize in Literature in Maggie Smith's birth year?"
    assert parse_subquestions(real_numbered, chat=True) == (
        ["Who won the Nobel Prize in Literature in Maggie Smith's birth year?"], "list",
    )  # fmt: skip
    real_json = '["In which country was Rumi born?", "What is the currency in that country?"]'
    assert parse_subquestions(real_json, chat=True)[1] == "json"
    sure = ("Sure, here are the subquestions:\n\n1. **In what year was Ada Lovelace born?**\n"
            "2. **Who was the mayor of Leipzig in that year?**")  # fmt: skip
    assert parse_subquestions(sure, chat=True) == (
        ["In what year was Ada Lovelace born?", "Who was the mayor of Leipzig in that year?"],
        "list",
    )
    labelled = "- **Subquestion 1:** Where was X born?\n- **Subquestion 2:** Its currency?"
    assert parse_subquestions(labelled, chat=True)[0] == ["Where was X born?", "Its currency?"]
    # Plain question lines count in chat replies only; never split on commas.
    assert parse_subquestions("Where was he born, and when?", chat=True) == (
        ["Where was he born, and when?"], "questions",
    )  # fmt: skip
    assert parse_subquestions("Where was he born, and when?") == ([], "unparsed")
    assert parse_subquestions("I cannot split this question.", chat=True) == ([], "unparsed")
    assert parse_subquestions("[]", chat=True) == ([], "json")


def test_chat_yes_no_tool_choice_input_and_answer() -> None:
    # yes/no: real replies first.
    kabul = "Yes. The population of Kabul today is approximately 1. 2 million."
    replies = [("no", False), ("yes", True), ("No.", False), (kabul, True), ("**No**", False),
               ("The answer is yes.", True), ("Answer: no", False)]  # fmt: skip
    for reply, yes in replies:
        got = parse_yes_no(reply)
        assert (got if got is not None else find_yes_no(reply)) is yes, reply
    assert find_yes_no("I am not sure.") is None
    # Tool choice: a real reply that echoes the tool list before choosing.
    names, descs = ["search", "calculator"], ["Search: finds encyclopedia passages.",
                                              "Calculator: evaluates arithmetic."]  # fmt: skip
    echo = (
        "Tool 1: Search: finds encyclopedia passages.\nTool 2: Calculator: evaluates "
        "arithmetic.\n\nTool {n} is best to answer: What is the currency of Afghanistan?"
    )
    assert find_tool_number(echo.format(n=1), names, descs) == 1
    assert find_tool_number(echo.format(n=2), names, descs) == 2
    assert parse_tool_number(echo.format(n=2), names) == 1  # what the plain reader would say
    assert find_tool_number("tool 1", names, descs) == 1  # real
    assert find_tool_number("1", names, descs) == 1  # real
    assert find_tool_number("**2**", names, descs) == 2
    # Tool input: real fenced JSON, and a real reply with a key the tool does not take.
    assert parse_json_object('```json\n{\n  "query": "Rumi born"\n}\n```') == (
        {"query": "Rumi born"}, "json",
    )  # fmt: skip
    extra = '{"query": "Maggie Smith birth year", "year": "1802"}'
    assert parse_json_object(extra)[0] == {"query": "Maggie Smith birth year", "year": "1802"}
    # Answers: real one-liners stay; preambles, markdown and labels go.
    assert chat_answer("In 1802.") == "In 1802."
    assert chat_answer("Rumi was born in Russia.") == "Rumi was born in Russia."
    assert chat_answer("Sure! Here is the answer:\n\n**Kabul is the capital.**") == (
        "Kabul is the capital."
    )
    assert chat_answer("A: Kabul is the capital.\n\nExplanation: ...") == "Kabul is the capital."
    assert chat_answer("Certainly, Kabul is the capital.") == "Kabul is the capital."
    assert chat_answer("Sure!\n\n") == ""


# -- the chat path of Rebel._llm, on scripted replies --------------------------------------------
MARKS = [
    ("Split Q into", "split"),
    ("knowledge base", "memory_check"),
    ("Which tool is best", "pick_tool"),
    ("input for tool 3", "tool_input"),
    ("using the tool output", "answer_tool"),
    ("using the facts", "answer_memory"),
]  # a phrase each step's prompt has, and no earlier one's


class Scripted(LLM):
    """A chat (or completion) client answering each REBEL step with a scripted reply and
    keeping what it was sent."""

    backend = "scripted"

    def __init__(self, replies: dict[str, str], form: str = "chat") -> None:
        super().__init__("scripted")
        self.form, self.replies, self.sent = form, replies, []

    def _step(self, text: str) -> str:
        for key, step in MARKS:
            if key in text:
                return step
        raise AssertionError(f"unknown step: {text[-200:]}")

    def _chat(self, messages, params: GenerationParams) -> CompletionResult:
        self.sent.append(("chat", messages, params))
        step = self._step(messages[0]["content"] + messages[-1]["content"])
        return CompletionResult([Completion(self.replies[step])])

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        self.sent.append(("completion", prompt, params))
        step = self._step(prompt[:300] + prompt[-300:])
        return CompletionResult([Completion(self.replies[step])])


HABITS = {
    "split": "Sure, here are the subquestions:\n\n1. **Where was Kevin Drew born?**\n"
    "2. **What band did Kevin Drew co-found?**",
    "memory_check": "**No**",
    "pick_tool": "Tool 1: Search: finds encyclopedia passages about a person.\nTool 2: "
    "Calculator: evaluates an arithmetic expression.\n\nTool 1 is best to answer Q.",
    "tool_input": '```json\n{\n  "query": "Kevin Drew"\n}\n```',
    "answer_tool": "Sure! Here is the answer:\n\n**Kevin Drew was born in Toronto.**",
    "answer_memory": "Certainly!\nA: Kevin Drew co-founded Broken Social Scene.",
}


def test_chat_path_sends_messages_and_reads_chat_habits(index: BM25Index) -> None:
    llm = Scripted(HABITS)
    cfg = RebelConfig(max_depth=1, max_llm_calls=20, split_prompt="empty")
    trace = Rebel(llm, [SearchTool(index), Calculator()], cfg).run("Who is Kevin Drew?")
    assert trace.meta["prompt_form"] == "chat" and not trace.errors
    assert {kind for kind, _, _ in llm.sent} == {"chat"}
    for _, msgs, params in llm.sent:
        assert msgs[0]["role"] == "system" and msgs[-1]["role"] == "user"
        assert params.stop == () and params.temperature == 0.0
    split = trace.nodes[0].meta["split"]
    assert split["parsed_as"] == "list" and len(split["subquestions"]) == 2
    assert [n.id for n in trace.nodes] == ["q", "q.1", "q.2"]
    for n in trace.nodes:
        assert n.meta["memory_check"]["decision"] == "tool"
        assert n.meta["tool"]["number"] == 1 and n.meta["tool"]["input"] == {"query": "Kevin Drew"}
        assert n.passages and n.answer == "Kevin Drew was born in Toronto."
        assert n.meta["reply"] == HABITS["answer_tool"]  # the whole reply is kept
    assert trace.answer == "Kevin Drew was born in Toronto."
    assert trace.nodes[2].meta["facts"][0] == ["Where was Kevin Drew born?", trace.nodes[1].answer]


def test_unreadable_chat_replies_are_recorded_not_guessed(index: BM25Index) -> None:
    llm = Scripted({**HABITS, "split": "I cannot split this question.",
                    "memory_check": "I am not sure.", "pick_tool": "The best tool."})  # fmt: skip
    trace = Rebel(llm, [SearchTool(index), Calculator()], RebelConfig(split_prompt="empty")).run(
        "Who is Kevin Drew?"
    )
    root = trace.nodes[0]
    assert root.meta["split"]["reply"] == "I cannot split this question."
    assert root.meta["memory_check"]["decision"] == "tool"  # not sure: look it up
    assert root.meta["tool"]["pick"] == "unreadable reply: using tool 1"
    assert [e.split(":")[1].strip() for e in trace.errors] == [
        "split reply not read as subquestions", "memory check reply not yes/no",
        "tool choice unreadable",
    ]  # fmt: skip
    assert trace.answer == "Kevin Drew was born in Toronto."


def test_completion_clients_still_get_the_completion_prompts(index: BM25Index) -> None:
    llm = Scripted({**{k: " no" for k in STEPS}, "split": " []", "tool_input": 'Kevin"}',
                    "answer_tool": " Toronto.\n"}, form="completion")  # fmt: skip
    trace = Rebel(llm, [SearchTool(index)], RebelConfig()).run("Where was Kevin Drew born?")
    assert trace.meta["prompt_form"] == "completion" and trace.answer == "Toronto."
    assert {kind for kind, _, _ in llm.sent} == {"completion"}
    assert llm.sent[0][1] == prompts.fill(
        "rebel/split", tools=Rebel(llm, [SearchTool(index)]).tool_list, memory="",
        question="Where was Kevin Drew born?",
    )  # fmt: skip
    assert llm.sent[0][2].stop == ("\n",) and llm.sent[0][2].max_tokens == 96
    assert trace.nodes[0].meta["tool"]["input"] == {"query": "Kevin"}  # the prefix + reply


# -- the real 0.5B chat model -------------------------------------------------------------------
CELEBRITIES = [
    "What is the currency in the birthplace of Rumi?",
    "Who won the Nobel Prize in Literature in the year Maggie Smith was born?",
    "Who was the President of the United States when Maggie Smith was born?",
]


def check_tree(trace: Trace) -> None:
    ids = {n.id for n in trace.nodes}
    assert trace.meta["prompt_form"] == "chat"
    assert trace.nodes[0].query == trace.question and all(n.parent in ids for n in trace.nodes[1:])
    assert trace.answer.strip() and trace.answer == trace.nodes[0].answer
    assert not trace.answer.startswith(("**", "Sure", "A:", "```"))
    assert Trace.from_dict(json.loads(json.dumps(trace.to_dict()))) == trace


@pytest.fixture(scope="module")
def embedder():
    return make_embedder("embedding")


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_real_chat_model_on_compositional_celebrities(chat_llm, index, embedder, data_dir: Path):
    records = json.loads(
        (data_dir / "compositional_celebrities" / "compositional_celebrities.json").read_text()
    )["data"]
    asked = {r["Question"] for r in records}
    cfg = RebelConfig(max_depth=1, max_llm_calls=10, max_tool_calls=3, split_prompt="empty")
    method = Rebel(chat_llm, [SearchTool(index)], cfg, embedder=embedder)
    traces = []
    for question in CELEBRITIES:
        assert question in asked
        trace = method.run(question)
        check_tree(trace)
        root = trace.nodes[0]
        # The format was followed: the split reply is a list, yes/no replies are read, the
        # tool input is a JSON object; no reply went unread.
        assert root.meta["split"]["parsed_as"] in ("json", "list"), root.meta["split"]
        assert not [e for e in trace.errors if "not read" in e or "not yes/no" in e], trace.errors
        subs = [n for n in trace.nodes if n.parent == "q"]
        tools = [n for n in trace.nodes if n.source == "tool"]
        assert subs or tools, "neither a subquestion nor a tool call"
        for n in tools:
            assert isinstance(n.meta["tool"]["input"]["query"], str) and n.meta["tool"]["output"]
            assert n.passages and n.answer
        if len(subs) == 2:  # a later subquestion sees the earlier one's answer as a fact
            assert subs[1].meta["facts"][0] == [subs[0].query, subs[0].answer]
        traces.append(trace)
    assert sum(t.meta["tool_calls"] for t in traces) >= 1
    assert sum(1 for t in traces for n in t.nodes if n.parent == "q") >= 3


@pytest.mark.slow
def test_real_chat_server_answers_a_hotpotqa_question_with_the_tool(chat_server, index, hotpot):
    llm = make_llm("openai", model="qwen2.5-coder-0.5b", base_url=chat_server, api="chat",
                   cache=False)  # fmt: skip
    cfg = RebelConfig(max_depth=0, memory_check="never", split_prompt="empty")
    trace = Rebel(llm, [SearchTool(index)], cfg).run(hotpot[0]["question_text"])
    check_tree(trace)
    info = trace.nodes[0].meta["tool"]
    assert trace.meta["tool_calls"] == 1 and "error" not in info, info
    assert info["input"]["query"].strip() and trace.nodes[0].passages
    assert trace.meta["llm_calls"] == 2  # tool input, answer
