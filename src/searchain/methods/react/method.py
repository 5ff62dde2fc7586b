"""ReAct (Yao et al., 2023): interleaved Thought / Action / Observation over a search engine.

The prompt is the paper's HotpotQA instruction and demos (``prompts/baselines/react.txt``),
with two actions: ``Search[query]`` (the retriever's top-k passages become the observation)
and ``Finish[answer]``. Each step the model writes "Thought i: ... Action i: ..." and stops
before "Observation i:"; a thought without an action gets a second call that asks for
"Action i:" alone, as the paper's code does. Anything else is an invalid action, answered
with an observation saying so. After ``max_steps`` steps without Finish, the method writes
"Action n: Finish[" and lets the model fill in the answer, and notes that in ``errors``.

Chat models (``prompts/baselines/react.chat.txt``) get the same instruction and demos as a
dialogue: each Thought/Action is an assistant turn (stopped before any "Observation"), each
"Observation i: ..." a user turn. The action is read through chat habits (markdown, an action
without "Action i:", "Search: X" or a missing bracket); a reply without one is recorded in
``errors``. The forced Finish is a user request appended to the last observation.

``fallback="cot-sc"`` is the paper's ReAct → CoT-SC instead (Yao et al., §3.3; the setting
the SearChain paper compares with): when the step budget ends without Finish, the answer is
the majority of ``sc_samples`` sampled chain-of-thought answers (21 at temperature 0.7 in
the paper). The default stays the forced Finish (one short call, not 21 long ones); the trace
says which ran (``meta.fallback``, ``meta.backoff``). The question carries the task's label
instruction (``task``), as SearChain's prompts do.

A search repeated word for word returns the next passages not shown yet (base models loop
on one query). Every search is a node with its passages; the final answer gets a ``[n]``
mark to the first retrieved passage that contains it (origin "post-hoc").
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from searchain import prompts
from searchain.answers import short_answer
from searchain.events import emit
from searchain.llm import LLM
from searchain.methods.base import is_chat
from searchain.methods.baseline_util import References, clean, task_question, task_setting
from searchain.methods.prompting import cot_sc
from searchain.methods.settings import check_settings, config_from_options, setting
from searchain.retrieval.base import Retriever
from searchain.text import normalize_answer
from searchain.types import Node, Passage, Trace

TEMPLATE = "baselines/react"
_ACTION_LINE = re.compile(r"\n\s*Action\s*\d*\s*:", re.I)
_ACTION = re.compile(r"^\s*(\w+)\s*\[(.*?)(?:\]|$)", re.S)
MAX_QUERY_CHARS = 300  # a query is model output: bounded before it reaches the retriever
INVALID = "Invalid action. Valid actions are Search[query] and Finish[answer]."
# A chat model copies INVALID's "Search[query]" into its next action ("Search[Invalid action]").
CHAT_INVALID = (
    "Invalid action: Action {i} must be Search[...] with a query, or Finish[...] with the answer."
)
_MARKUP = re.compile(r"\*\*|__|`")
_THOUGHT = re.compile(r"^\s*Thought\s*\d*\s*:\s*", re.I)
_CHAT_ACTION_LINE = re.compile(r"(?:^|\s)Action\s*\d*\s*:", re.I)
_BARE_ACTION = re.compile(r"\b(Search|Finish)\s*\[", re.I)
_LOOSE = re.compile(r"^\s*(search|finish)\b\s*(?:[:(]\s*)?(.*?)\s*\)?\s*$", re.I)
Message = dict[str, str]
# The instruction's own placeholders: a small chat model copies "Search[query]" from it.
PLACEHOLDERS = ("query", "answer", "...", "")
# After the step budget: "finish" forces "Action n: Finish["; "cot-sc" backs off to CoT-SC.
FALLBACKS = ("finish", "cot-sc")


def parse_action(text: str) -> tuple[str, str]:
    """``("search", "X")`` for "Search[X]"; ``("", text)`` when the line is no action.
    Only the first line counts, and a missing "]" ends the argument at the line's end."""
    line = text.strip().split("\n")[0]
    m = _ACTION.match(line)
    if not m:
        return "", line
    return m.group(1).lower(), m.group(2).strip()


def split_reply(reply: str) -> tuple[str, str]:
    """(thought, action text) of a chat reply: the action after "Action i:", else from the
    first "Search[" / "Finish[" anywhere; ``""`` when the reply has none. Markdown goes."""
    text = _MARKUP.sub("", reply).strip()
    m = _CHAT_ACTION_LINE.search(text) or _BARE_ACTION.search(text)
    if m is None:
        thought, action = text, ""
    else:
        start = m.end() if m.re is _CHAT_ACTION_LINE else m.start()
        thought, action = text[: m.start()], text[start:].strip()
    thought = " ".join(_THOUGHT.sub("", thought.strip()).split())
    return thought, action


def parse_chat_action(text: str) -> tuple[str, str]:
    """``parse_action`` with the liberties chat models take: "Search: X", "Search X",
    "Finish(X)", quotes and markdown around the argument."""
    text = _MARKUP.sub("", text).strip()
    kind, arg = parse_action(text)
    if kind not in ("search", "finish") and (m := _LOOSE.match(text.split("\n")[0])):
        kind, arg = m.group(1).lower(), m.group(2)
    if kind in ("search", "finish"):
        arg = arg.strip().strip("\"'“”").strip()
    return kind, arg


def observation(passages: list[Passage], words: int) -> str:
    parts = []
    for p in passages:
        body = " ".join(p.text.split()[:words])
        parts.append(f"{p.title}: {body}" if p.title else body)
    return " ".join(parts)


@dataclass
class ReActConfig:
    k: int = setting(1, "Passages per Search[...].", ge=1, remote_le=20)
    max_steps: int = setting(7, "Thought/Action steps before the fallback.", ge=1, remote_le=20)
    step_tokens: int = setting(96, "Tokens per step.", ge=1, remote_le=1024)
    observation_words: int = setting(100, "Words of an observation shown.", ge=1, remote_le=1000)
    task: str = task_setting()
    fallback: str = setting(
        "finish",
        "After the step budget: finish (force Finish[) or cot-sc (back off to CoT-SC).",
        choices=FALLBACKS,
    )
    sc_samples: int = setting(21, "CoT-SC samples of the cot-sc fallback.", ge=1, remote_le=40)
    sc_temperature: float = setting(0.7, "CoT-SC sampling temperature.", ge=0, le=2)
    seed: int = setting(0, "Seed of the CoT-SC samples.", ge=0, le=2**31 - 1)

    def __post_init__(self) -> None:
        check_settings(self)


@dataclass(slots=True)
class _Transcript:
    """What the model has seen: ``prompt``, the text a base model continues (for a chat
    model, the record of the dialogue), and a chat model's ``messages``."""

    chat: bool
    prompt: str
    messages: list[Message]

    @classmethod
    def start(cls, asked: str, chat: bool) -> _Transcript:
        if chat:
            return cls(True, f"Question: {asked}", prompts.messages(TEMPLATE, question=asked))
        return cls(False, prompts.fill(TEMPLATE, question=asked), [])

    def act(self, i: int, thought: str, action: str) -> None:
        """Step ``i``'s Thought and Action (a chat model's assistant turn)."""
        step = f"Thought {i}: {thought}\nAction {i}: {action}"
        if self.chat:
            self.messages.append({"role": "assistant", "content": step})
        self.prompt += f"\n{step}"

    def observe(self, i: int, obs: str) -> None:
        """Step ``i``'s Observation (a user turn for a chat model)."""
        self.prompt += f"\nObservation {i}: {obs}"
        if self.chat:
            self.messages.append({"role": "user", "content": f"Observation {i}: {obs}"})


class ReAct:
    name = "react"

    def __init__(
        self, llm: LLM, retriever: Retriever, config: ReActConfig | None = None, **options: Any
    ) -> None:
        cfg = config or config_from_options(ReActConfig, options, self.name)
        self.llm, self.retriever, self.config = llm, retriever, cfg

    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        emit("start", method=self.name, question=question)
        trace = Trace(question=question, method=self.name)
        refs = References()
        chat = is_chat(self.llm)
        trace.meta.update(
            prompt_form="chat" if chat else "completion",
            task=self.config.task,
            fallback=self.config.fallback,
        )
        asked = task_question(question, self.config.task)
        talk = _Transcript.start(asked, chat)
        answer = self._steps(question, talk, refs, trace)
        if answer is None and self.config.fallback == "cot-sc":
            answer = self._back_off(asked, question, trace)
        elif answer is None:
            answer = self._forced_finish(question, talk, trace)
        trace.answer = answer
        trace.final_content, cite = refs.cite(f"{answer}.", answer) if answer else ("", None)
        trace.citations = [cite] if cite else []
        trace.references = refs.passages
        prompt = talk.prompt
        trace.meta["transcript"] = prompt[prompt.rfind("\nQuestion: ") + 1 :]
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=trace.answer)
        return trace

    def _steps(
        self, question: str, talk: _Transcript, refs: References, trace: Trace
    ) -> str | None:
        """Thought, Action, Observation, up to ``max_steps`` times: the answer of a
        Finish[...], or ``None`` when the budget ends without one."""
        shown: dict[str, list[str]] = {}  # normalised query -> passage ids shown for it
        for i in range(1, self.config.max_steps + 1):
            emit("round", n=i)
            trace.rounds = i
            if talk.chat:
                thought, kind, arg = self._chat_step(talk.messages, i, trace)
            else:
                thought, kind, arg = self._step(talk.prompt, i, trace)
            talk.act(i, thought, _render(kind, arg))
            node = Node(
                id=str(i),
                query=arg,
                source="llm",
                meta={"thought": thought, "action": _render(kind, arg)},
            )
            trace.nodes.append(node)
            if kind == "finish":
                answer = (short_answer(arg) or clean(arg)) if talk.chat else clean(arg)
                node.answer, node.query = answer, question
                return answer
            obs = self._observe(node, kind, arg, i, shown, refs, talk.chat)
            node.meta["observation"] = obs
            emit("node", id=node.id, status=kind or "invalid", source=node.source)
            talk.observe(i, obs)
        return None

    def _observe(
        self,
        node: Node,
        kind: str,
        arg: str,
        i: int,
        shown: dict[str, list[str]],
        refs: References,
        chat: bool,
    ) -> str:
        """The observation of a Search[...] (its passages go onto ``node``) or of an
        invalid action."""
        if kind == "search" and arg:
            node.source = "retrieval"
            node.passages = self._search(arg[:MAX_QUERY_CHARS], shown)
            refs.add(node.passages)
            obs = observation(node.passages, self.config.observation_words)
            return obs or f"No new results for {arg[:MAX_QUERY_CHARS]}."
        return CHAT_INVALID.format(i=i) if chat else INVALID

    def _forced_finish(self, question: str, talk: _Transcript, trace: Trace) -> str:
        """After the step budget: "Action n: Finish[" and the model's answer."""
        n = self.config.max_steps + 1
        trace.errors.append(
            f"step budget ({self.config.max_steps}) reached without Finish[]; the answer was "
            f'forced with "Action {n}: Finish["'
        )
        emit("llm", purpose="forced finish")
        if talk.chat:
            answer = self._chat_finish(talk.messages, n, trace)
        else:
            result = self.llm.complete(
                f"{talk.prompt}\nAction {n}: Finish[", max_tokens=32, stop=("]", "\n")
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
        return answer

    def _back_off(self, asked: str, question: str, trace: Trace) -> str:
        """ReAct → CoT-SC: the majority of sampled chain-of-thought answers."""
        trace.errors.append(
            f"step budget ({self.config.max_steps}) reached without Finish[]; backed off to CoT-SC "
            f"({self.config.sc_samples} samples)"
        )
        emit("llm", purpose="cot-sc")
        vote = cot_sc(
            self.llm,
            asked,
            samples=self.config.sc_samples,
            temperature=self.config.sc_temperature,
            seed=self.config.seed,
        )
        trace.usage.add(vote.usage)
        trace.meta["backoff"] = {"to": "cot-sc", "answers": vote.answers, "votes": vote.votes}
        trace.nodes.append(
            Node(
                id=str(self.config.max_steps + 1),
                query=question,
                answer=vote.answer,
                source="llm",
                meta={"action": "CoT-SC", "forced": True, "votes": vote.votes},
            )
        )
        return vote.answer

    def _step(self, prompt: str, i: int, trace: Trace) -> tuple[str, str, str]:
        """One Thought/Action: (thought, action kind, argument)."""
        emit("llm", purpose="thought")
        stop = (f"\nObservation {i}:", f"\nThought {i + 1}:", "\nQuestion:", "\n\n")
        result = self.llm.complete(
            f"{prompt}\nThought {i}:", max_tokens=self.config.step_tokens, stop=stop
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

    def _chat_step(self, messages: list[Message], i: int, trace: Trace) -> tuple[str, str, str]:
        """One Thought/Action as an assistant turn: (thought, action kind, argument)."""
        emit("llm", purpose="thought")
        # Not "Thought {i + 1}:": a reply may open with a misnumbered "Thought 3:" at step 2.
        stop = ("\nObservation", "\nThought", "\nQuestion:")
        result = self.llm.chat(messages, max_tokens=self.config.step_tokens, stop=stop)
        trace.usage.add(result.usage)
        thought, action = split_reply(result.text)
        if not action:  # a thought alone: ask for the action, as for base models
            emit("llm", purpose="action")
            asked = [
                *messages,
                {"role": "assistant", "content": f"Thought {i}: {thought}"},
                {"role": "user", "content": f"Thought {i} has no action. Write Action {i}."},
            ]
            again = self.llm.chat(asked, max_tokens=32, stop=stop)
            trace.usage.add(again.usage)
            action = split_reply(again.text)[1] or _MARKUP.sub("", again.text).strip()
        kind, arg = parse_chat_action(action)
        if kind not in ("search", "finish") or arg.lower() in PLACEHOLDERS:
            raw = action.strip().split("\n")[0][:MAX_QUERY_CHARS]
            trace.meta.setdefault("invalid_actions", []).append(f"{i}: {raw}")
            what = "a placeholder action" if kind else "no Search[...] or Finish[...]"
            trace.errors.append(f"step {i}: {what} in the reply {result.text[:200]!r}")
            return thought, "", raw
        return thought, kind, arg

    def _chat_finish(self, messages: list[Message], n: int, trace: Trace) -> str:
        """The forced Finish: a request appended to the last observation (a user turn)."""
        asked = [dict(m) for m in messages]
        request = (
            f"That was the last step. Write Action {n}: Finish[...] with the short answer to "
            "the question, as well as you can tell it from the observations."
        )
        if asked[-1]["role"] == "user":
            asked[-1]["content"] += "\n" + request
        else:
            asked.append({"role": "user", "content": request})
        result = self.llm.chat(asked, max_tokens=48, stop=("\nObservation", "\nQuestion:"))
        trace.usage.add(result.usage)
        kind, arg = parse_chat_action(split_reply(result.text)[1])
        if kind == "finish" and arg.lower() not in PLACEHOLDERS:
            return short_answer(arg) or clean(arg)
        trace.errors.append(f"the forced finish wrote no Finish[...]: {result.text[:200]!r}")
        return short_answer(result.text)

    def _search(self, query: str, shown: dict[str, list[str]]) -> list[Passage]:
        key = normalize_answer(query)
        seen = shown.setdefault(key, [])
        emit("retrieve", query=query, k=self.config.k)
        hits = self.retriever.search(query, k=self.config.k + len(seen))
        new = [p for p in hits if p.id not in seen][: self.config.k]
        seen.extend(p.id for p in new)
        return new


def _render(kind: str, arg: str) -> str:
    return f"{kind.capitalize()}[{arg}]" if kind else arg
