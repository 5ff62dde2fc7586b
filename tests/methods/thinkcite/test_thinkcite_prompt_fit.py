"""Think&Cite's prompt as the paper writes it (issue 29, T5): the instruction without a task
line, "Here are some examples:", four ALCE demos with whole documents — and, where a local
model's context cannot hold them, a fallback that the trace states (60-word documents, then
fewer demos), never a silent cut."""

from __future__ import annotations

import pytest

from searchain.llm.local import LocalLLM
from searchain.methods.thinkcite import AgentConfig, ProgressReward, RewardConfig, ThinkCiteProblem
from searchain.methods.thinkcite import prompting as tp
from searchain.retrieval.demo import default_index


class NoLimit:
    """A backend that says nothing of its context (an API): the prompt is the paper's."""

    backend, model, defaults, form = "openai", "remote", None, "completion"


def problem(llm, **agent) -> ThinkCiteProblem:
    judge = type("J", (), {"entails": lambda *a: True, "name": "j"})()
    reward = ProgressReward(RewardConfig(use_rg=False), judge=judge)  # type: ignore[arg-type]
    return ThinkCiteProblem("Who?", llm, default_index(), reward, AgentConfig(**agent))


def test_the_default_prompt_is_the_papers() -> None:
    instruction, demos = tp.header_parts("asqa", 4, None)
    assert len(demos) == 4 and instruction.endswith("\n\nHere are some examples:")
    assert "cite them properly. Use an unbiased" in instruction  # no task line
    assert not any(line in instruction for line in tp.TASK_LINE.values())
    # Whole demo documents: the longest demo document appears in full.
    docs = [d["text"] for d in tp.alce_prompt_file("asqa")["demos"][0]["docs"]]
    assert any(" ".join(t.split()) in "\n".join(demos) for t in docs if len(t.split()) > 60)
    p = problem(NoLimit())
    assert p.prompt == {"n_demos": 4, "demo_doc_words": None, "style": "paper"}
    assert p.prompt_notes == [] and p.header == tp.header("asqa", 4, None)


def test_the_earlier_prompt_is_a_setting() -> None:
    instruction, _ = tp.header_parts("eli5", 2, 60, "task-line")
    assert tp.TASK_LINE["eli5"] in instruction and tp.EXAMPLES not in instruction
    assert "properly. " + tp.TASK_LINE["eli5"] + " Use an unbiased" in instruction
    with pytest.raises(ValueError, match="prompt_style"):
        AgentConfig(prompt_style="mine")


@pytest.mark.parametrize("family", tp.FAMILIES)
def test_a_4k_local_model_gets_fewer_demos_and_the_trace_says_so(family: str) -> None:
    llm = LocalLLM(n_ctx=4096)
    p = problem(llm, family=family)
    assert p.prompt["n_demos"] < 4 and p.prompt["demo_doc_words"] == tp.FALLBACK_DOC_WORDS
    (note,) = p.prompt_notes
    assert note.startswith("4 demos with whole documents take") and "demo_budget" in note
    assert len(llm.tokenize(p.header)) <= int(4096 * 0.35)  # within the share it may take
    # One more demo would not have fitted.
    bigger = tp.header(family, p.prompt["n_demos"] + 1, tp.FALLBACK_DOC_WORDS)
    assert len(llm.tokenize(bigger)) > int(4096 * 0.35)


def test_a_larger_context_holds_the_papers_four_whole_demos() -> None:
    p = problem(LocalLLM(n_ctx=8192), family="asqa")
    assert p.prompt == {"n_demos": 4, "demo_doc_words": None, "style": "paper"}
    assert p.prompt_notes == []


def test_max_prompt_chars_counts_the_questions_part_not_the_demos() -> None:
    """Four whole demos are ~11,000 characters: a limit on the whole prompt would stop every
    reflection before it began; the limit is on what follows the demos."""
    from thinkcite_kit import DOCS, ListRetriever, ScriptedChat

    replies = ["Search: Kiss and Tell", "Reflexion: not enough.", "Search: Shirley Temple",
               "Output: Shirley Temple played Corliss Archer [2]."]  # fmt: skip
    long_question = "Who? " + "Which actress played Corliss Archer in Kiss and Tell? " * 25
    for question, reflected in (("Who?", True), (long_question, False)):
        llm = ScriptedChat(list(replies))
        reward = ProgressReward(RewardConfig(use_rg=False), judge=type("J", (), {})())  # type: ignore[arg-type]
        cfg = AgentConfig(max_reflections=1, k=1, max_prompt_chars=1_000)
        p = ThinkCiteProblem(question, llm, ListRetriever(DOCS), reward, cfg)
        assert len(p.header) > 7_000  # the paper's demos alone are far past the limit
        step = p.child([tp.Step("root")], seed=0)
        assert (len(step.searches) == 2) is reflected, step.notes
        assert ("reflection stopped: the prompt reached max_prompt_chars" in step.notes) is (
            not reflected
        )
