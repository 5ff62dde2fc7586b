"""SearChain's question_position=last: the CoQ instruction and demos as one static prefix
(the same for every question), the question only after them — in both prompt forms."""

from __future__ import annotations

import pytest

from searchain import prompts
from searchain.methods.searchain.config import TASKS, SearChainConfig

Q1, Q2 = "Who directed Jaws?", "In which city was Kevin Drew born?"


@pytest.mark.parametrize("task", sorted(TASKS))
def test_completion_form_shares_everything_before_the_question(task: str) -> None:
    name = SearChainConfig(task=task, question_position="last").template_name()
    a, b = prompts.fill(name, question=Q1), prompts.fill(name, question=Q2)
    shared = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    assert a[shared:].startswith(Q1) and Q1 not in a[:shared] and shared > 500
    assert a.count(Q1) == 1 and "given after the examples" in a[:300]
    paper = prompts.fill(TASKS[task], question=Q1)
    assert paper.count(Q1) == 2 and paper.index(Q1) < 200  # the paper: inline, at the top


@pytest.mark.parametrize("task", sorted(TASKS))
def test_chat_form_keeps_the_question_out_of_the_system_message(task: str) -> None:
    name = SearChainConfig(task=task, question_position="last").template_name()
    a, b = prompts.messages(name, question=Q1), prompts.messages(name, question=Q2)
    assert a[:-1] == b[:-1]  # every turn but the last is static
    assert Q1 in a[-1]["content"] and a[-1]["role"] == "user"
    assert all(Q1 not in m["content"] for m in a[:-1])


def test_a_template_without_an_inline_question_is_refused(tmp_path) -> None:
    own = tmp_path / "coq.txt"
    own.write_text('# fields: question\nAnswer step by step.\n[Question]: "{question}"\n')
    with pytest.raises(ValueError, match="question-last"):
        prompts.load(str(own) + prompts.QUESTION_LAST)


def test_an_unknown_position_is_refused() -> None:
    with pytest.raises(ValueError, match="question_position"):
        SearChainConfig(question_position="first").validate()
