"""The no-retrieval baselines: direct prompting and chain-of-thought (one LLM call each).

Both are few-shot prompts (``prompts/baselines/direct.txt``, ``cot.txt``, and their chat
forms ``*.chat.txt``) with Self-Ask's hand-written demos, as in Press et al.'s comparison. A
base model's output stops at the end of the answer line; a chat model's reply is one turn,
and its short answer is read out of its habits (markdown, "The answer is ...").
"""

from __future__ import annotations

import time

from searchain import prompts
from searchain.answers import short_answer
from searchain.events import emit
from searchain.llm import LLM
from searchain.methods.base import call_template, is_chat
from searchain.methods.baseline_util import clean, final_answer
from searchain.types import Node, Trace

STOP = ("\n",)


class PromptOnly:
    """Answer from the model's own knowledge with one few-shot prompt."""

    def __init__(self, llm: LLM, *, name: str, template: str, max_tokens: int) -> None:
        self.llm, self.name, self.template, self.max_tokens = llm, name, template, max_tokens
        prompts.load(template)  # a missing template fails at construction, not per item

    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        emit("start", method=self.name, question=question)
        trace = Trace(question=question, method=self.name, rounds=1)
        emit("llm", purpose="answer")
        chat = is_chat(self.llm)
        result = call_template(
            self.llm, self.template, max_tokens=self.max_tokens, stop=STOP, chat_stop=(),
            question=question,
        )  # fmt: skip
        trace.usage.add(result.usage)
        text = result.text.strip()
        found = final_answer(text)
        if found is None and chat:
            found = short_answer(text) if text else None
        if found is None and self.name == "cot":
            trace.errors.append('no "So the final answer is:" in the output; answer = all of it')
        if result.completions and result.completions[0].finish_reason == "length":
            trace.errors.append(f"output cut at {self.max_tokens} tokens")
        trace.answer = found if found is not None else clean(text)
        trace.final_content = text
        trace.nodes = [Node(id="1", query=question, answer=trace.answer, source="llm")]
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=trace.answer)
        return trace


def direct_prompting(llm: LLM, max_tokens: int = 32) -> PromptOnly:
    return PromptOnly(
        llm, name="direct-prompting", template="baselines/direct", max_tokens=max_tokens
    )


def chain_of_thought(llm: LLM, max_tokens: int = 128) -> PromptOnly:
    return PromptOnly(llm, name="cot", template="baselines/cot", max_tokens=max_tokens)
