"""ReAct (Yao et al., 2023): interleaved Thought / Action / Observation over a search engine.

The prompt is the paper's HotpotQA instruction and demos (``prompts/baselines/react.txt``),
with two actions: ``Search[query]`` (the retriever's top-k passages become the observation)
and ``Finish[answer]``. Each step the model writes "Thought i: ... Action i: ..." and stops
before "Observation i:"; a thought without an action gets a second call that asks for
"Action i:" alone, as the paper's code does. Anything else is an invalid action, answered
with an observation saying so. After ``max_steps`` steps without Finish, the method writes
"Action n: Finish[" and lets the model fill in the answer, and notes that in ``errors``.

A search repeated word for word returns the next passages not shown yet (base models loop
on one query). Every search is a node with its passages; the final answer gets a ``[n]``
mark to the first retrieved passage that contains it (origin "post-hoc").
"""

from __future__ import annotations

import re
import time

from searchain import prompts
from searchain.events import emit
from searchain.llm import LLM
from searchain.methods.baseline_util import References, clean
from searchain.retrieval.base import Retriever
from searchain.text import normalize_answer
from searchain.types import Node, Passage, Trace

TEMPLATE = "baselines/react"
_ACTION_LINE = re.compile(r"\n\s*Action\s*\d*\s*:", re.I)
_ACTION = re.compile(r"^\s*(\w+)\s*\[(.*?)(?:\]|$)", re.S)
MAX_QUERY_CHARS = 300  # a query is model output: bounded before it reaches the retriever
INVALID = "Invalid action. Valid actions are Search[query] and Finish[answer]."


def parse_action(text: str) -> tuple[str, str]:
    """``("search", "X")`` for "Search[X]"; ``("", text)`` when the line is no action.
    Only the first line counts, and a missing "]" ends the argument at the line's end."""
    line = text.strip().split("\n")[0]
    m = _ACTION.match(line)
    if not m:
        return "", line
    return m.group(1).lower(), m.group(2).strip()


def observation(passages: list[Passage], words: int) -> str:
    parts = []
    for p in passages:
        body = " ".join(p.text.split()[:words])
        parts.append(f"{p.title}: {body}" if p.title else body)
    return " ".join(parts)


class ReAct:
    name = "react"

    def __init__(
        self,
        llm: LLM,
        retriever: Retriever,
        *,
        k: int = 1,
        max_steps: int = 7,
        step_tokens: int = 96,
        observation_words: int = 100,
    ) -> None:
        self.llm, self.retriever, self.k = llm, retriever, k
        self.max_steps, self.step_tokens = max_steps, step_tokens
        self.observation_words = observation_words

    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        emit("start", method=self.name, question=question)
        trace = Trace(question=question, method=self.name)
        refs = References()
        prompt = prompts.fill(TEMPLATE, question=question)
        shown: dict[str, list[str]] = {}  # normalised query -> passage ids shown for it
        answer: str | None = None
        for i in range(1, self.max_steps + 1):
            emit("round", n=i)
            trace.rounds = i
            thought, kind, arg = self._step(prompt, i, trace)
            prompt += f"\nThought {i}: {thought}\nAction {i}: {_render(kind, arg)}"
            node = Node(
                id=str(i),
                query=arg,
                source="llm",
                meta={"thought": thought, "action": _render(kind, arg)},
            )
            trace.nodes.append(node)
            if kind == "finish":
                answer = clean(arg)
                node.answer, node.query = answer, question
                break
            if kind == "search" and arg:
                node.source = "retrieval"
                node.passages = self._search(arg[:MAX_QUERY_CHARS], shown)
                refs.add(node.passages)
                obs = observation(node.passages, self.observation_words)
                obs = obs or f"No new results for {arg[:MAX_QUERY_CHARS]}."
            else:
                obs = INVALID
            node.meta["observation"] = obs
            emit("node", id=node.id, status=kind or "invalid", source=node.source)
            prompt += f"\nObservation {i}: {obs}"
        if answer is None:
            n = self.max_steps + 1
            trace.errors.append(
                f"step budget ({self.max_steps}) reached without Finish[]; the answer was "
                f'forced with "Action {n}: Finish["'
            )
            emit("llm", purpose="forced finish")
            result = self.llm.complete(
                f"{prompt}\nAction {n}: Finish[", max_tokens=32, stop=("]", "\n")
            )
            trace.usage.add(result.usage)
            answer = clean(result.text)
            trace.nodes.append(
                Node(
                    id=str(n),
                    query=question,
                    answer=answer,
                    source="llm",
                    meta={"action": f"Finish[{answer}]", "forced": True},
                )
            )
        trace.answer = answer
        trace.final_content, cite = refs.cite(f"{answer}.", answer) if answer else ("", None)
        trace.citations = [cite] if cite else []
        trace.references = refs.passages
        trace.meta["transcript"] = prompt[prompt.rfind("\nQuestion: ") + 1 :]
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=trace.answer)
        return trace

    def _step(self, prompt: str, i: int, trace: Trace) -> tuple[str, str, str]:
        """One Thought/Action: (thought, action kind, argument)."""
        emit("llm", purpose="thought")
        stop = (f"\nObservation {i}:", f"\nThought {i + 1}:", "\nQuestion:", "\n\n")
        result = self.llm.complete(
            f"{prompt}\nThought {i}:", max_tokens=self.step_tokens, stop=stop
        )
        trace.usage.add(result.usage)
        gen = result.text
        parts = _ACTION_LINE.split(gen, maxsplit=1)
        thought = " ".join(parts[0].split())
        if len(parts) == 2:
            action = parts[1]
        else:  # a thought alone: ask for the action
            emit("llm", purpose="action")
            result = self.llm.complete(
                f"{prompt}\nThought {i}: {thought}\nAction {i}:", max_tokens=32, stop=("\n",)
            )
            trace.usage.add(result.usage)
            action = result.text
        kind, arg = parse_action(action)
        if kind not in ("search", "finish"):
            raw = action.strip().split("\n")[0][:MAX_QUERY_CHARS]
            trace.meta.setdefault("invalid_actions", []).append(f"{i}: {raw}")
            return thought, "", raw
        return thought, kind, arg

    def _search(self, query: str, shown: dict[str, list[str]]) -> list[Passage]:
        key = normalize_answer(query)
        seen = shown.setdefault(key, [])
        emit("retrieve", query=query, k=self.k)
        hits = self.retriever.search(query, k=self.k + len(seen))
        new = [p for p in hits if p.id not in seen][: self.k]
        seen.extend(p.id for p in new)
        return new


def _render(kind: str, arg: str) -> str:
    return f"{kind.capitalize()}[{arg}]" if kind else arg
