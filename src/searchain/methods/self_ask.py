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

Chat models (``prompts/baselines/self_ask.chat.txt``) get the same demos as user questions and
assistant transcripts. With search, the model's turn stops before "Intermediate answer:"; the
answer comes back as a user message ("Intermediate answer: X."), and the model continues in a
new assistant turn with its next "Follow up:" or "So the final answer is:". (Demos split into
such turns instead made Qwen2.5-0.5B copy the last demo's final answer, "No", on 3 of 9
HotpotQA questions; whole transcripts: never.) Without search, one reply holds the whole
transcript. Replies are read through their markdown; a missing final answer is asked for in a
user message.

The question carries the task's label instruction (``task``: FEVER "(SUPPORTS or REFUTES)?",
StrategyQA Yes/No), as SearChain's prompts do.

Every follow-up becomes a node with its passages; an intermediate or final answer found in a
retrieved passage gets a ``[n]`` mark to it (origin "post-hoc": the method attaches it).
The final content is the intermediate answers and the final answer, without the follow-up
questions (they repeat the question's entities, which cover-EM would count as answers).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from searchain import prompts
from searchain.answers import short_answer
from searchain.citations import numbered_documents
from searchain.events import emit
from searchain.llm import LLM
from searchain.methods.base import Method, call_template, is_chat
from searchain.methods.baseline_util import (
    References,
    clean,
    final_answer,
    task_question,
    task_setting,
)
from searchain.methods.component import TakesTaskKind, needs_retriever, without_unset_k
from searchain.methods.settings import check_settings, config_from_options, setting
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
# A chat turn is one message: it may write "Intermediate answer:" mid-line.
CHAT_STOP_SEARCH = ("Intermediate answer:", "Intermediate Answer:", "\nQuestion:")
CHAT_STOP_ALONE = ("\nQuestion:",)
FINAL_REQUEST = (
    'No more follow up questions. Give the final answer as "So the final answer is: " '
    "followed by the short answer."
)
_MARKUP = re.compile(r"\*\*|__|`")
_BULLET = re.compile(r"^[ \t]*(?:[-*•]|\d+[.)])[ \t]+", re.M)
Message = dict[str, str]


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


def plain(text: str) -> str:
    """A chat reply without markdown emphasis and list bullets ("**Follow up:** X",
    "- Follow up: X"), so that its lines parse like a base model's."""
    return _BULLET.sub("", _MARKUP.sub("", text)).strip()


def chat_follow_up(reply: str) -> tuple[str, str] | None:
    """(the follow-up to answer, the turn through its line) of a chat reply, or ``None``.
    The reply stops right before "Intermediate answer:": a follow-up on its last line is the
    one asked; otherwise (a list of follow-ups, no answer marker) the first one is."""
    lines = reply.split("\n")
    found = [i for i, line in enumerate(lines) if follow_ups(line)]
    if not found:
        return None
    last = len(lines) - 1
    while last > 0 and not lines[last].strip():
        last -= 1
    i = last if last in found else found[0]
    return follow_ups(lines[i])[0], "\n".join(lines[: i + 1]).strip()


@dataclass
class SelfAskConfig:
    k: int = setting(3, "Passages per follow-up search.", ge=1, remote_le=20)
    max_follow_ups: int = setting(
        5, "Follow-up questions before the answer is asked for.", ge=1, remote_le=20
    )
    step_tokens: int = setting(64, "Tokens per follow-up step.", ge=1, remote_le=1024)
    read_tokens: int = setting(
        24, "Tokens of a follow-up's answer read from passages.", ge=1, remote_le=1024
    )
    max_tokens: int = setting(
        192, "Tokens of the whole chain (no-search form).", ge=1, remote_le=1024
    )
    task: str = task_setting()

    def __post_init__(self) -> None:
        check_settings(self)


class SelfAsk:
    def __init__(
        self,
        llm: LLM,
        retriever: Retriever | None,
        config: SelfAskConfig | None = None,
        **options: Any,
    ) -> None:
        self.name = "self-ask" if retriever is not None else "self-ask-no-search"
        cfg = config or config_from_options(SelfAskConfig, options, self.name)
        self.llm, self.retriever, self.config = llm, retriever, cfg

    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        emit("start", method=self.name, question=question)
        trace = Trace(question=question, method=self.name)
        refs = References()
        chat = is_chat(self.llm)
        trace.meta.update(prompt_form="chat" if chat else "completion", task=self.config.task)
        asked = task_question(question, self.config.task)
        if chat:
            text, answer = self._chat(asked, trace, refs)
        else:
            prompt = prompts.fill(TEMPLATE, question=asked)
            if self.retriever is None:
                text, found = self._alone(prompt, trace)
            else:
                text, found = self._with_search(prompt, trace, refs)
            if found is None:
                emit("llm", purpose="final answer")
                result = self.llm.complete(
                    prompt + text.rstrip() + FORCE, max_tokens=32, stop=("\n",)
                )
                trace.usage.add(result.usage)
                found = clean(result.text)
                text = text.rstrip() + FORCE + " " + found
            answer = found
        trace.answer = answer
        trace.meta["transcript"] = text
        self._final_content(trace, refs)
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=trace.answer)
        return trace

    def _alone(self, prompt: str, trace: Trace) -> tuple[str, str | None]:
        """The model writes follow-ups and their answers in one go."""
        emit("llm", purpose="self-ask")
        result = self.llm.complete(prompt, max_tokens=self.config.max_tokens, stop=STOP_ALONE)
        trace.usage.add(result.usage)
        trace.rounds = 1
        return self._parse_alone(result.text, trace)

    def _parse_alone(self, text: str, trace: Trace) -> tuple[str, str | None]:
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
            result = self.llm.complete(
                prompt + text, max_tokens=self.config.step_tokens, stop=STOP_SEARCH
            )
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
            if len(trace.nodes) >= self.config.max_follow_ups:
                trace.errors.append(
                    f"follow-up budget ({self.config.max_follow_ups}) reached; "
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
        emit("retrieve", query=question, k=self.config.k)
        passages = self.retriever.search(question, k=self.config.k)  # type: ignore[union-attr]
        refs.add(passages)
        emit("llm", purpose="read")
        if is_chat(self.llm):  # a chat reply is one turn: read its short answer
            result = call_template(
                self.llm,
                READ_TEMPLATE,
                max_tokens=self.config.read_tokens,
                chat_stop=(),
                documents=numbered_documents(passages),
                question=question,
            )
            answer = short_answer(result.text)
        else:
            read = prompts.fill(
                READ_TEMPLATE, documents=numbered_documents(passages), question=question
            )
            result = self.llm.complete(read, max_tokens=self.config.read_tokens, stop=("\n",))
            answer = clean(result.text)
        trace.usage.add(result.usage)
        node = Node(
            id=str(n),
            query=question,
            answer=answer,
            source="retrieval",
            passages=passages,
        )
        trace.nodes.append(node)
        emit("node", id=node.id, status="answered", source=node.source)
        return node

    # -- chat form -------------------------------------------------------------------------
    def _chat(self, question: str, trace: Trace, refs: References) -> tuple[str, str]:
        messages = prompts.messages(TEMPLATE, question=question)
        if self.retriever is None:
            emit("llm", purpose="self-ask")
            result = self.llm.chat(
                messages, max_tokens=self.config.max_tokens, stop=CHAT_STOP_ALONE
            )
            trace.usage.add(result.usage)
            trace.rounds = 1
            text, answer = self._parse_alone(plain(result.text) + "\n", trace)
            if answer is None:
                trace.meta["raw_reply"] = result.text
            dialogue = [*messages, {"role": "assistant", "content": text.strip()}]
        else:
            text, answer, dialogue = self._chat_with_search(messages, trace, refs)
        if answer is None:
            answer = self._chat_final(dialogue, trace)
            text = text.rstrip() + FORCE + " " + answer
        return text.strip(), answer

    def _chat_with_search(
        self, messages: list[Message], trace: Trace, refs: References
    ) -> tuple[str, str | None, list[Message]]:
        dialogue = list(messages)
        text = ""
        while True:
            emit("llm", purpose="self-ask")
            result = self.llm.chat(
                dialogue, max_tokens=self.config.step_tokens, stop=CHAT_STOP_SEARCH
            )
            trace.usage.add(result.usage)
            trace.rounds += 1
            reply = plain(result.text)
            answer = final_answer(reply)
            if answer:  # an empty one ("So the final answer is:" alone) is asked for again
                dialogue.append({"role": "assistant", "content": reply})
                return f"{text}{reply}", answer, dialogue
            asked = chat_follow_up(reply)
            if asked is None:
                trace.errors.append(
                    'the model asked no follow-up and gave no "So the final answer is:"; '
                    f"it was asked for one (its reply: {result.text.strip()[:200]!r})"
                )
                dialogue.append({"role": "assistant", "content": reply or "(no reply)"})
                return text + reply.split("\n")[0], None, dialogue
            if len(trace.nodes) >= self.config.max_follow_ups:
                trace.errors.append(
                    f"follow-up budget ({self.config.max_follow_ups}) reached; "
                    "the final answer was asked for"
                )
                return text, None, dialogue
            question, turn = asked
            node = self._answer(question, len(trace.nodes) + 1, trace, refs)
            said = f"Intermediate answer: {node.answer or 'unknown'}."
            dialogue += [{"role": "assistant", "content": turn}, {"role": "user", "content": said}]
            text += f"{turn}\n{said}\n"

    def _chat_final(self, dialogue: list[Message], trace: Trace) -> str:
        """Ask for the final answer in a user turn (appended to a last user turn)."""
        messages = [dict(m) for m in dialogue]
        if messages[-1]["role"] == "user":
            messages[-1]["content"] += "\n" + FINAL_REQUEST
        else:
            messages.append({"role": "user", "content": FINAL_REQUEST})
        emit("llm", purpose="final answer")
        result = self.llm.chat(messages, max_tokens=48, stop=CHAT_STOP_ALONE)
        trace.usage.add(result.usage)
        reply = plain(result.text)
        found = final_answer(reply)
        if found is None:
            trace.errors.append(
                f'no "So the final answer is:" in the reply to the request: {reply[:200]!r}'
            )
            found = short_answer(reply)
        return found

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


class SelfAskComponent(TakesTaskKind):
    name = "self-ask"
    summary = "follow-up questions answered by retrieve-then-read"
    config = SelfAskConfig
    rank = 70

    @classmethod
    def build(cls, llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
        return SelfAsk(llm, needs_retriever(cls.name, retriever), **without_unset_k(options))


class SelfAskNoSearchComponent(TakesTaskKind):
    name = "self-ask-no-search"
    summary = "follow-up questions the model answers itself"
    config = SelfAskConfig
    without = ("k",)
    rank = 80

    @classmethod
    def build(cls, llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
        return SelfAsk(llm, None, **options)
