"""How SearChain talks to the LLM, round by round, in the two prompt forms.

* ``CompletionRounds`` (base models): one growing completion prompt — the previous prompt
  and chain, the paper's feedback message, then the chain restated up to the node that got
  feedback, from which the model continues. By default (the paper) the restated chain ends
  with that node's query and the cue ``[Answer n]:``, so the model gives its new answer a'_n
  and goes on (the new branch's root is (q_n, a'_n)); with ``revise=False`` (the earlier
  behaviour) it ends ``[Answer n]: g`` with the reader's g and the cue ``[Query n+1]:``.
* ``ChatRounds`` (instruct models): the paper's own dialogue. The CoQ instruction, demos and
  question are the user turn; each chain is an assistant turn; each feedback is a new user
  turn with the paper's message and the reference; the new chain is the next assistant turn;
  tracing is a last user turn asking for ``[Final Content]`` with ``[k]`` marks from the
  verified pairs, after the whole dialogue or (``tracing_context="demos"``) after the
  instruction and demos alone.

Both keep each round's prompt inside the model's context window when the backend can count
tokens here: the earlier rounds are dropped first (first-round prompt, latest chain and its
feedback); when even that does not fit, the rounds stop and tracing answers from the path
verified so far (recorded in ``meta.stopped`` and ``errors``). Remote servers reject an
oversized prompt themselves, and the item records that error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from searchain import prompts
from searchain.events import emit
from searchain.llm import LLM
from searchain.llm.base import Message, chat_fits, prompt_fits
from searchain.methods.baseline_util import LABEL_INSTRUCTIONS, answer_ending
from searchain.types import CompletionResult, Node, Trace

# A new [Question] is a new demo; "According to this Reference" is the model echoing feedback.
STOP = ("\n[Question]", "[Question]:", "\n\n\n", "\nAccording to this Reference", "\nReference:")
# A chat reply may open by restating "[Question]: ..." (the parser skips it): only a later one
# ends the chain.
CHAT_STOP = ("\n[Question]", "\nAccording to this Reference", "\nReference:")
# The final content is one paragraph; models that go on start a new tag or a new line.
TRACE_STOP = ("\n", "[Question", "[Query", "[Answer", "[Final Content", "[Unsolved")


@dataclass
class FeedbackText:
    """What a round's feedback says: the node, the reader's answer and its passage."""

    kind: str  # "verify" | "complete"
    query: str
    answer: str
    reference: str


def feedback_template(kind: str) -> str:
    return "searchain/feedback_verify" if kind == "verify" else "searchain/feedback_complete"


def render_pairs(path: list[Node], revised: bool = False) -> str:
    """The path as ``[Query i]: q / [Answer i]: a`` lines. ``revised``: a node the model
    re-answered after feedback shows its own new answer a' (the chain as the model wrote it)
    rather than the reader's g that the path R records for tracing."""

    def answer(n: Node) -> str | None:
        return (n.meta.get("revised_answer") or n.answer) if revised else n.answer

    return "".join(
        f"[Query {i}]: {n.query}\n[Answer {i}]: {answer(n)}\n" for i, n in enumerate(path, 1)
    )


def _stop_rounds(trace: Trace) -> None:
    trace.meta["stopped"] = "context window"
    trace.errors.append(
        f"round {trace.rounds + 1} not run: its prompt does not fit the model's context "
        "window; the answer is traced from the path verified so far"
    )


def _compacted(trace: Trace) -> None:
    meta = trace.meta
    meta["compacted_rounds"] = [*meta.get("compacted_rounds", []), trace.rounds + 1]
    emit("note", text="earlier rounds dropped from the prompt to fit the context")


class Rounds(Protocol):
    form: str
    cue: str  # text the reply continues (prepended before parsing)
    offset: int  # chain steps before the cue's first node (its node n is step offset + 1)

    def generate(self, max_tokens: int) -> CompletionResult: ...

    def advance(
        self, trace: Trace, path: list[Node], generated: str, fb: FeedbackText, max_tokens: int
    ) -> bool: ...

    def trace_final(
        self,
        path: list[Node],
        max_tokens: int,
        context: str = "dialogue",
        logprobs: bool = False,
    ) -> CompletionResult: ...


@dataclass
class CompletionRounds:
    llm: LLM
    question: str
    template: str
    form: str = "completion"
    revise: bool = True  # the model writes its new answer a'_n (see the module doc)
    prompt: str = ""
    chain_prompt: str = ""  # the first-round CoQ prompt (demos + question)
    offset: int = 0
    cue: str = ""  # later rounds' prompts end with it (see _next_prompt)
    traced: str = ""  # the text the tracing call was sent (what the answering step read)

    def __post_init__(self) -> None:
        self.prompt = self.chain_prompt = prompts.fill(self.template, question=self.question)

    def generate(self, max_tokens: int) -> CompletionResult:
        return self.llm.complete(self.prompt, max_tokens=max_tokens, stop=STOP)

    def _cue(self, path: list[Node], fb: FeedbackText) -> tuple[str, str, int]:
        """(restated chain, cue, offset) after feedback on ``path[-1]``, the node n."""
        # Base models given a finished-looking chain start a new [Question]; the cue makes the
        # new branch continue from the node that got feedback, as the paper's chat model does.
        n = len(path)
        if self.revise:
            return render_pairs(path[:-1], True), f"[Query {n}]: {fb.query}\n[Answer {n}]:", n - 1
        return render_pairs(path), f"[Query {n + 1}]:", n

    def _next_prompt(self, prompt: str, path: list[Node], generated: str, fb: FeedbackText) -> str:
        message = prompts.fill(
            feedback_template(fb.kind),
            query=fb.query,
            answer=fb.answer,
            question=self.question,
            reference=fb.reference,
        )
        pairs, cue, _ = self._cue(path, fb)
        restated = f'[Question]: "{self.question}"\n{pairs}{cue}'
        return f"{prompt}{generated.rstrip()}\n{message}\n{restated}"

    def advance(
        self, trace: Trace, path: list[Node], generated: str, fb: FeedbackText, max_tokens: int
    ) -> bool:
        grown = self._next_prompt(self.prompt, path, generated, fb)
        if prompt_fits(self.llm, grown, max_tokens) is False:
            grown = self._next_prompt(self.chain_prompt, path, generated, fb)
            if not prompt_fits(self.llm, grown, max_tokens):
                _stop_rounds(trace)
                return False
            _compacted(trace)
        _, self.cue, self.offset = self._cue(path, fb)
        self.prompt = grown
        return True

    def trace_final(
        self,
        path: list[Node],
        max_tokens: int,
        context: str = "dialogue",
        logprobs: bool = False,  # the output tokens' log-probabilities (MaxProb)
    ) -> CompletionResult:
        # ``context`` is the chat form's choice: this form always traces from the demos.
        # The paper's tracing asks for [Final Content] from the verified [Query]-[Answer]
        # pairs. We show the pairs in the CoQ prompt's own format, right after its demos
        # (whose final contents cite [k] per step), so base models follow the format too.
        prompt = prompts.fill(
            "searchain/tracing", chain_prompt=self.chain_prompt, pairs=render_pairs(path)
        )
        self.traced += prompt
        return self.llm.complete(prompt, max_tokens=max_tokens, stop=TRACE_STOP, logprobs=logprobs)


@dataclass
class ChatRounds:
    llm: LLM
    question: str
    template: str
    # A chat reply is a whole chain: nothing to continue, and nothing to cue. The paper's
    # dialogue already lets the model write its new answer a'_n in its next chain; ``revise``
    # only says whether SearChain reads it there (methods/searchain.py).
    revise: bool = True
    form: str = "chat"
    cue: str = ""
    offset: int = 0
    first: list[Message] = field(default_factory=list)  # system + CoQ user turn
    messages: list[Message] = field(default_factory=list)
    last: str = ""  # the latest assistant chain
    notes: list[str] = field(default_factory=list)
    # The task whose labels the tracing turn asks for (None: any short answer): its
    # [Question] carries the label instruction and its last line names the labels.
    labels_of: str | None = None
    traced: str = ""  # the text the tracing calls were sent (what the answering step read)

    def __post_init__(self) -> None:
        self.first = self._first_turns()
        self.messages = list(self.first)

    def _first_turns(self) -> list[Message]:
        if prompts.has_chat(self.template):
            return prompts.messages(self.template, question=self.question)
        # A user's own completion-form template without a chat sibling: the paper's setting
        # (its prompt was the user message), said in the trace.
        self.notes.append(
            f"template {self.template!r} has no chat form (.chat.txt): sent as one user message"
        )
        return [{"role": "user", "content": prompts.fill(self.template, question=self.question)}]

    def generate(self, max_tokens: int) -> CompletionResult:
        result = self.llm.chat(self.messages, max_tokens=max_tokens, stop=CHAT_STOP)
        self.last = result.text
        return result

    def _feedback(self, fb: FeedbackText) -> Message:
        (turn,) = prompts.messages(
            feedback_template(fb.kind),
            query=fb.query,
            answer=fb.answer,
            question=self.question,
            reference=fb.reference,
        )
        return turn

    def advance(
        self, trace: Trace, path: list[Node], generated: str, fb: FeedbackText, max_tokens: int
    ) -> bool:
        reply: list[Message] = [{"role": "assistant", "content": generated.strip()}]
        grown = [*self.messages, *reply, self._feedback(fb)]
        if chat_fits(self.llm, grown, max_tokens) is False:
            grown = [*self.first, *reply, self._feedback(fb)]
            if not chat_fits(self.llm, grown, max_tokens):
                _stop_rounds(trace)
                return False
            _compacted(trace)
        self.messages = grown
        return True

    def demos(self) -> list[Message]:
        """The CoQ instruction and demos without the question's own turn (the tracing turn
        restates the question); a one-message prompt is kept whole (its demos are in it)."""
        if len(self.first) > 1 and self.first[-1]["role"] == "user":
            return self.first[:-1]
        return list(self.first)

    def trace_final(
        self,
        path: list[Node],
        max_tokens: int,
        context: str = "dialogue",
        logprobs: bool = False,  # the output tokens' log-probabilities (MaxProb)
    ) -> CompletionResult:
        ask = prompts.messages(
            "searchain/tracing",
            question=self.question + LABEL_INSTRUCTIONS.get(self.labels_of or "", ""),
            pairs=render_pairs(path),
            ending=answer_ending(self.labels_of or ""),
        )
        if context in ("demos", "alone"):
            messages = [*(self.demos() if context == "demos" else []), *ask]
        else:
            reply: list[Message] = [{"role": "assistant", "content": self.last.strip()}]
            messages = [*self.messages, *(reply if self.last.strip() else []), *ask]
            if chat_fits(self.llm, messages, max_tokens) is False:
                messages = [*self.first, *ask]
        self.traced += "\n".join(m["content"] for m in messages)
        return self.llm.chat(messages, max_tokens=max_tokens, logprobs=logprobs)


def make_rounds(
    llm: LLM,
    question: str,
    template: str,
    form: str,
    revise: bool = True,
    labels_of: str | None = None,
) -> Any:
    """The rounds of one question. ``labels_of``: the task whose labels the chat tracing
    turn asks for (the completion form traces from the CoQ prompt, whose question and
    demos already say them)."""
    if form == "chat":
        return ChatRounds(llm, question, template, revise=revise, labels_of=labels_of)
    return CompletionRounds(llm, question, template, revise=revise)
