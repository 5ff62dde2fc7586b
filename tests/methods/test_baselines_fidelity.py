"""The baselines as the SearChain paper ran them (issue 21): the task's label instruction on the
question (FEVER, StrategyQA), direct prompting with no demo, ReAct backing off to CoT-SC. Runs
replay recorded real outputs of the embedded model (``tests/data/recordings/baselines.jsonl``)
over the real HotpotQA index; re-record with ``SEARCHAIN_RECORD=1``."""

from __future__ import annotations

from collections import Counter

import pytest

from recordings import Observed, recorded_llm
from searchain import prompts
from searchain.eval.methods import describe
from searchain.methods.catalog import baselines, build_method, method_names, task_options
from searchain.methods.react import ReAct
from searchain.text import normalize_answer

CLAIM = "Telemundo is a English-language television network."  # FEVER paper_dev, REFUTES
YES_NO = "Is the language used in Saint Vincent and the Grenadines rooted in English?"
ASKED = {
    "factcheck": (CLAIM, f"Question: {CLAIM} (SUPPORTS or REFUTES)?\n"),
    "yesno": (YES_NO, f'Question: {YES_NO} (The answer can only be "Yes" or "No")\n'),
}


# -- 2. the task's label instruction ----------------------------------------------------------
@pytest.mark.parametrize("task", ["factcheck", "yesno"])
@pytest.mark.parametrize("name", [*baselines(), "retrieve-read"])
def test_every_baseline_asks_with_the_tasks_labels(name, task, index) -> None:
    """Recorded: each baseline on a FEVER claim and a StrategyQA question."""
    question, line = ASKED[task]
    llm = Observed(recorded_llm("baselines"))
    method = build_method(name, llm, index, task=task, **({"max_steps": 2} if name == "react"
                                                          else {}))  # fmt: skip
    trace = method.run(question)
    assert trace.question == question and trace.meta["task"] == task
    assert describe(method)["task"] == task  # what the run manifest records
    # The model is asked the question with the labels, as SearChain's prompts ask it; the
    # retrieval of Self-Ask and ReAct follows the model's own queries.
    first = llm.prompts[0]
    assert line in first + "\n", first[-300:]
    assert trace.answer.strip()


def test_an_open_question_is_asked_as_it_is(index) -> None:
    llm = Observed(recorded_llm("baselines"))
    build_method("direct-prompting", llm, index, demos=4).run(YES_NO)
    assert llm.prompts[0].endswith(f"Question: {YES_NO}\nAnswer:")
    with pytest.raises(ValueError, match=r"task is one of .*open, not 'poetry'"):
        build_method("cot", llm, index, task="poetry")


def test_task_options_route_the_data_sets_task_to_every_method() -> None:
    assert task_options("searchain", "factcheck") == {"task": "factcheck"}
    assert task_options("searchain-no-ir", "yesno") == {"task": "yesno"}
    assert task_options("searchain", "open") == {"task": "multihop"}  # its multi-hop prompt
    for name in (*baselines(), "retrieve-read", "direct-retrieval"):
        assert task_options(name, "factcheck") == {"task": "factcheck"}
        assert task_options(name, "list") == {"task": "list"}
    assert task_options("rebel", "factcheck") == task_options("thinkcite", "yesno") == {}
    assert task_options("cot", None) == {}
    assert set(method_names()) >= {"searchain", "retrieve-read", *baselines()}


# -- 6. direct prompting with no demo; ReAct's CoT-SC ------------------------------------------
def test_direct_prompting_asks_with_no_demo_by_default(index, hotpot) -> None:
    """Recorded: the paper's 0-demo direct prompting (Table 8) on three HotpotQA questions."""
    llm = Observed(recorded_llm("baselines"))
    method = build_method("direct-prompting", llm, index)
    d = describe(method)
    assert (d["demos"], d["template"]) == (0, "baselines/direct_zero_shot")
    for item in hotpot[:3]:
        q = item["question_text"]
        trace = method.run(q)
        assert llm.prompts[-1] == f"Question: {q}\nAnswer:"
        assert trace.meta["demos"] == 0 and trace.answer.strip()
    four = build_method("direct-prompting", llm, index, demos=4)
    assert describe(four)["demos"] == 4
    assert prompts.fill(four.template, question="Q").count("Question: ") == 5  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="demos"):
        build_method("direct-prompting", llm, index, demos=2)
    # The chat form too: the instruction and the question, no demo turns.
    chat = prompts.messages("baselines/direct_zero_shot", question="Q?")
    assert [m["role"] for m in chat] == ["system", "user"] and chat[1]["content"] == "Question: Q?"


def test_react_backs_off_to_cot_sc_when_the_steps_run_out(index, hotpot) -> None:
    """Recorded: ReAct does not finish hotpot[0] in one step; CoT-SC (3 samples, seeded)
    answers by majority, as ReAct → CoT-SC does with 21."""
    llm = recorded_llm("baselines")
    method = build_method("react", llm, index, k=1, max_steps=1, fallback="cot-sc",
                          sc_samples=3)  # fmt: skip
    d = describe(method)
    assert (d["fallback"], d["sc_samples"], d["sc_temperature"]) == ("cot-sc", 3, 0.7)
    trace = method.run(hotpot[0]["question_text"])
    backoff = trace.meta["backoff"]
    assert backoff["to"] == "cot-sc" and len(backoff["answers"]) == 3
    counts = Counter(normalize_answer(a) for a in backoff["answers"] if normalize_answer(a))
    assert backoff["votes"] == max(counts.values())
    assert counts[normalize_answer(trace.answer)] == backoff["votes"]
    assert trace.nodes[-1].meta["action"] == "CoT-SC" and trace.nodes[-1].answer == trace.answer
    assert any("backed off to CoT-SC (3 samples)" in e for e in trace.errors)
    assert trace.meta["fallback"] == "cot-sc"
    # The default keeps the forced Finish (one short call), and says so.
    plain = ReAct(llm, index, k=1, max_steps=1)
    assert describe(plain)["fallback"] == "finish"
    forced = plain.run(hotpot[0]["question_text"])
    assert "backoff" not in forced.meta and forced.nodes[-1].meta["forced"]
    with pytest.raises(ValueError, match="fallback"):
        ReAct(llm, index, fallback="cot")
