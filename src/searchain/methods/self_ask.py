"""Self-Ask (Press et al., 2023), with and without a search engine.

The model is shown the paper's demos and asks itself follow-up questions::

    Are follow up questions needed here: Yes.
    Follow up: Who was the founder of craigslist?
    Intermediate answer: Craigslist was founded by Craig Newmark.
    So the final answer is: ...

* ``self-ask`` (with search): generation stops before each "Intermediate answer:"; the
  follow-up is answered by retrieve-then-read (top-k passages, a short-answer reading prompt),
  the answer is appended, and the model continues. At most ``max_follow_ups`` follow-ups
  are answered; then, or when the model stops without a final answer, the method appends
  "So the final answer is:" and lets the model finish (the paper's own fallback), noting why.
* ``self-ask-no-search``: one completion; the model answers its own follow-ups.

Every follow-up becomes a node with its passages; an intermediate or final answer found in a
retrieved passage gets a ``[n]`` mark to it (origin "post-hoc": the method attaches it).
The final content is the intermediate answers and the final answer, without the follow-up
questions (they repeat the question's entities, which cover-EM would count as answers).
"""

from __future__ import annotations

import re
import time

from searchain import prompts
from searchain.events import emit
from searchain.llm import LLM
from searchain.methods.baseline_util import References, clean, final_answer
from searchain.methods.retrieve_read import render_documents
from searchain.retrieval.base import Retriever
from searchain.types import Node, Trace

TEMPLATE = "baselines/self_ask"
READ_TEMPLATE = "baselines/read_short"
_IA = ("\nIntermediate answer:", "\nIntermediate Answer:")
STOP_SEARCH = (*_IA, "\nQuestion:", "\n\n")
STOP_ALONE = ("\nQuestion:", "\n\n")
FORCE = "\nSo the final answer is:"
_FOLLOW_UP = re.compile(r"^\s*follow[ -]?up\s*:\s*(.*)$", re.I | re.M)
_INTERMEDIATE = re.compile(r"^\s*intermediate answer\s*:\s*(.*)$", re.I | re.M)


def follow_ups(text: str) -> list[str]:
    """The non-empty follow-up questions in ``text``, in order."""
    return [q.strip() for q in _FOLLOW_UP.findall(text) if q.strip()]


def pairs(text: str) -> list[tuple[str, str]]:
    """(follow-up, intermediate answer) pairs of a transcript the model wrote by itself; a
    follow-up without an answer gets ``""``."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        if m := _FOLLOW_UP.match(line):
            out.append((m.group(1).strip(), ""))
        elif (m := _INTERMEDIATE.match(line)) and out and not out[-1][1]:
            out[-1] = (out[-1][0], clean(m.group(1)))
    return [(q, a) for q, a in out if q]


class SelfAsk:
    def __init__(
        self,
        llm: LLM,
        retriever: Retriever | None,
        *,
        k: int = 3,
        max_follow_ups: int = 5,
        step_tokens: int = 64,
        read_tokens: int = 24,
        max_tokens: int = 192,
    ) -> None:
        self.llm, self.retriever, self.k = llm, retriever, k
        self.name = "self-ask" if retriever is not None else "self-ask-no-search"
        self.max_follow_ups, self.step_tokens = max_follow_ups, step_tokens
        self.read_tokens, self.max_tokens = read_tokens, max_tokens

    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        emit("start", method=self.name, question=question)
        trace = Trace(question=question, method=self.name)
        refs = References()
        prompt = prompts.fill(TEMPLATE, question=question)
        if self.retriever is None:
            text, answer = self._alone(prompt, trace)
        else:
            text, answer = self._with_search(prompt, trace, refs)
        if answer is None:
            emit("llm", purpose="final answer")
            result = self.llm.complete(prompt + text.rstrip() + FORCE, max_tokens=32, stop=("\n",))
            trace.usage.add(result.usage)
            answer = clean(result.text)
            text = text.rstrip() + FORCE + " " + answer
        trace.answer = answer
        trace.meta["transcript"] = text
        self._final_content(trace, refs)
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=trace.answer)
        return trace

    def _alone(self, prompt: str, trace: Trace) -> tuple[str, str | None]:
        """The model writes follow-ups and their answers in one go."""
        emit("llm", purpose="self-ask")
        result = self.llm.complete(prompt, max_tokens=self.max_tokens, stop=STOP_ALONE)
        trace.usage.add(result.usage)
        trace.rounds = 1
        text = result.text
        answered = [(q, a) for q, a in pairs(text) if a]  # a follow-up cut off unanswered: no node
        for i, (q, a) in enumerate(answered, 1):
            emit("subquestion", depth=i, text=q)
            trace.nodes.append(Node(id=str(i), query=q, answer=a, source="llm"))
        answer = final_answer(text)
        if answer is None:
            trace.errors.append('the model gave no "So the final answer is:"; it was asked for one')
            # Keep the transcript up to the last answered follow-up (or the "Yes."/"No." line):
            # what follows may be half a sentence or a follow-up without its answer.
            lines = text.split("\n")
            keep = [i for i, line in enumerate(lines) if _INTERMEDIATE.match(line)]
            text = "\n".join(lines[: (keep[-1] if keep else 0) + 1]) + "\n"
        return text, answer

    def _with_search(self, prompt: str, trace: Trace, refs: References) -> tuple[str, str | None]:
        text = ""
        while True:
            emit("llm", purpose="self-ask")
            result = self.llm.complete(prompt + text, max_tokens=self.step_tokens, stop=STOP_SEARCH)
            trace.usage.add(result.usage)
            trace.rounds += 1
            gen = result.text
            answer = final_answer(gen)
            if answer is not None:
                return text + gen, answer
            asked = follow_ups(gen)
            if not asked:
                trace.errors.append(
                    'the model asked no follow-up and gave no "So the final answer is:"; '
                    "it was asked for one"
                )
                return text + gen.split("\n")[0], None
            if len(trace.nodes) >= self.max_follow_ups:
                trace.errors.append(
                    f"follow-up budget ({self.max_follow_ups}) reached; "
                    "the final answer was asked for"
                )
                return text, None
            # Answer the last follow-up (the one right before "Intermediate answer:").
            question = asked[-1]
            node = self._answer(question, len(trace.nodes) + 1, trace, refs)
            text += _through_last_follow_up(gen)
            text += f"\nIntermediate answer: {node.answer or 'unknown'}.\n"

    def _answer(self, question: str, n: int, trace: Trace, refs: References) -> Node:
        emit("subquestion", depth=n, text=question)
        emit("retrieve", query=question, k=self.k)
        passages = self.retriever.search(question, k=self.k)  # type: ignore[union-attr]
        refs.add(passages)
        emit("llm", purpose="read")
        read = prompts.fill(READ_TEMPLATE, documents=render_documents(passages), question=question)
        result = self.llm.complete(read, max_tokens=self.read_tokens, stop=("\n",))
        trace.usage.add(result.usage)
        node = Node(
            id=str(n),
            query=question,
            answer=clean(result.text),
            source="retrieval",
            passages=passages,
        )
        trace.nodes.append(node)
        emit("node", id=node.id, status="answered", source=node.source)
        return node

    def _final_content(self, trace: Trace, refs: References) -> None:
        sentences = []
        # The answers only: a follow-up repeats the question's entities ("A or B?"), which
        # would count as the answer under cover-EM.
        for node in trace.nodes:
            if not node.answer:
                continue
            sentence, cite = refs.cite(f"{node.answer}.", node.answer, node.passages)
            sentences.append(sentence)
            if cite:
                trace.citations.append(cite)
        sentence, cite = refs.cite(f"So the final answer is: {trace.answer}.", trace.answer)
        sentences.append(sentence)
        if cite:
            trace.citations.append(cite)
        trace.final_content = " ".join(sentences)
        trace.references = refs.passages


def _through_last_follow_up(gen: str) -> str:
    """``gen`` up to the end of its last "Follow up:" line (whatever came after is dropped)."""
    lines = gen.rstrip().split("\n")
    last = max(i for i, line in enumerate(lines) if follow_ups(line))
    return "\n".join(lines[: last + 1])
