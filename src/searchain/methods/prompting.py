"""The no-retrieval baselines: direct prompting and chain-of-thought (one LLM call each).

Direct prompting asks the bare question by default (``direct_zero_shot``): the SearChain
paper's Table 8 gives it 0 demos. ``demos=4`` is Press et al.'s form, Self-Ask's four
hand-written demos (``prompts/baselines/direct.txt``). Chain-of-thought has those four demos
with their reasoning (``cot.txt``); ``cot_sc`` samples it several times and takes the majority
answer (CoT-SC, Wang et al., 2023; ReAct's fallback). Every prompt has a chat form
(``*.chat.txt``). The question carries the task's label instruction (FEVER: "(SUPPORTS or
REFUTES)?", StrategyQA: Yes/No), as SearChain's prompts do. A base model's output stops at
the end of the answer line; a chat model's reply is one turn, and its short answer is read out
of its habits (markdown, "The answer is ...").
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from searchain import prompts
from searchain.answers import short_answer
from searchain.events import emit
from searchain.llm import LLM
from searchain.methods.base import Method, call_template, is_chat
from searchain.methods.baseline_util import (
    clean,
    final_answer,
    task_question,
    task_setting,
)
from searchain.methods.component import TakesTaskKind
from searchain.methods.settings import check_settings, config_from_options, setting
from searchain.text import normalize_answer
from searchain.types import Node, Trace, Usage

STOP = ("\n",)
# Direct prompting's templates by number of demos.
DIRECT = {0: "baselines/direct_zero_shot", 4: "baselines/direct"}
# With no demo a base model often puts its answer on the next line ("Answer:\n Paris"), which
# "\n" would cut to nothing: it stops at the next question instead, and the answer is its
# first non-empty line.
ZERO_SHOT_STOP = ("\nQuestion:",)
COT = "baselines/cot"


class PromptOnly:
    """Answer from the model's own knowledge with one prompt."""

    def __init__(
        self,
        llm: LLM,
        config: DirectConfig | CoTConfig,
        *,
        name: str,
        template: str,
        demos: int,
    ) -> None:
        self.llm, self.name, self.config = llm, name, config
        # What the name and config imply, recorded in the run manifest and traces.
        self.template, self.demos = template, demos
        self.stop = ZERO_SHOT_STOP if demos == 0 else STOP
        prompts.load(template)  # a missing template fails at construction, not per item

    def manifest_extra(self) -> dict[str, Any]:
        return {"template": self.template, "demos": self.demos}

    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        emit("start", method=self.name, question=question)
        trace = Trace(question=question, method=self.name, rounds=1)
        emit("llm", purpose="answer")
        chat = is_chat(self.llm)
        result = call_template(
            self.llm,
            self.template,
            max_tokens=self.config.max_tokens,
            stop=self.stop,
            chat_stop=(),
            question=task_question(question, self.config.task),
        )
        trace.meta.update(task=self.config.task, template=self.template, demos=self.demos)
        trace.usage.add(result.usage)
        # A base model's answer is its first line (the only one, with the demos' "\n" stop).
        lines = [line.strip() for line in result.text.splitlines() if line.strip()]
        text = result.text.strip() if chat else (lines[0] if lines else "")
        found = final_answer(text)
        if found is None and chat:
            found = short_answer(text) if text else None
        if found is None and self.name == "cot":
            trace.errors.append('no "So the final answer is:" in the output; answer = all of it')
        if result.completions and result.completions[0].finish_reason == "length":
            trace.errors.append(f"output cut at {self.config.max_tokens} tokens")
        trace.answer = found if found is not None else clean(text)
        trace.final_content = text
        trace.nodes = [Node(id="1", query=question, answer=trace.answer, source="llm")]
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=trace.answer)
        return trace


@dataclass
class DirectConfig:
    max_tokens: int = setting(32, "Tokens of the answer.", ge=1, remote_le=1024)
    demos: int = setting(0, "Demos: 0 (the SearChain paper's Table 8) or 4.", choices=(0, 4))
    task: str = task_setting()

    def __post_init__(self) -> None:
        check_settings(self)


@dataclass
class CoTConfig:
    max_tokens: int = setting(128, "Tokens of the reasoning and answer.", ge=1, remote_le=1024)
    task: str = task_setting()

    def __post_init__(self) -> None:
        check_settings(self)


def direct_prompting(llm: LLM, config: DirectConfig | None = None, **options: Any) -> PromptOnly:
    """Direct prompting with ``demos`` demos: 0 (the SearChain paper's Table 8) or 4."""
    cfg = config or config_from_options(DirectConfig, options, "direct-prompting")
    return PromptOnly(
        llm, cfg, name="direct-prompting", template=DIRECT[cfg.demos], demos=cfg.demos
    )


def chain_of_thought(llm: LLM, config: CoTConfig | None = None, **options: Any) -> PromptOnly:
    cfg = config or config_from_options(CoTConfig, options, "cot")
    return PromptOnly(llm, cfg, name="cot", template=COT, demos=4)


class DirectPromptingComponent(TakesTaskKind):
    name = "direct-prompting"
    summary = "the question alone, one answer"
    config = DirectConfig
    rank = 50

    @classmethod
    def build(cls, llm: LLM, retriever: Any, options: dict[str, Any]) -> Method:
        return direct_prompting(llm, **options)


class CoTComponent(TakesTaskKind):
    name = "cot"
    summary = "chain-of-thought, then the answer"
    config = CoTConfig
    rank = 60

    @classmethod
    def build(cls, llm: LLM, retriever: Any, options: dict[str, Any]) -> Method:
        return chain_of_thought(llm, **options)


@dataclass
class Vote:
    """CoT-SC's result: the majority answer and what each sample said."""

    answer: str
    answers: list[str]
    votes: int
    usage: Usage


def cot_sc(
    llm: LLM,
    question: str,
    *,
    samples: int,
    temperature: float,
    seed: int,
    max_tokens: int = 128,
) -> Vote:
    """Self-consistency over chain-of-thought: ``samples`` sampled CoT answers (fixed seed,
    so a run can be replayed and cached) and their majority, by normalised answer; a tie goes
    to the answer sampled first. ``question`` already carries any label instruction."""
    params = {"max_tokens": max_tokens, "n": samples, "temperature": temperature, "seed": seed}
    if is_chat(llm):
        result = llm.chat(prompts.messages(COT, question=question), **params)
    else:
        result = llm.complete(prompts.fill(COT, question=question), stop=STOP, **params)
    answers = []
    for c in result.completions:
        found = final_answer(c.text)
        if found is None:
            found = short_answer(c.text) if is_chat(llm) else clean(c.text)
        answers.append(found)
    counts = Counter(normalize_answer(a) for a in answers if normalize_answer(a))
    if not counts:
        return Vote("", answers, 0, result.usage)
    best = max(counts.values())
    answer = next(a for a in answers if counts.get(normalize_answer(a)) == best)
    return Vote(answer, answers, best, result.usage)
