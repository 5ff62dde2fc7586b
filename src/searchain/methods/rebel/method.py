"""REBEL (Sodani, Moos, Mirman 2023): recursive decomposition over tools described in natural
language, as the paper's Algorithm 1.

``solve(Q, facts)``: split Q into subquestions (a JSON list), drop those that are near-copies
of Q (embedding cosine > 0.98; then the rest may not split again), solve each in order — every
answer becomes a fact ``(subquestion, answer)`` passed to all later ones — then ask whether
Q is answerable from memory; if so answer from the facts, else pick a tool (by number),
write its input (a JSON object, validated against the tool's schema before any call), call
it and answer from its output (truncated to 15,000 characters, as in the paper).

Budgets keep the recursion finite and cheap: ``max_depth`` (the reference code's 3),
``max_llm_calls`` and ``max_tool_calls``. Running out of LLM calls ends the recursion and
answers the question from the facts gathered so far with one reserved call; running out of
tool calls makes later steps answer from memory. Either is noted in ``trace.meta["limits"]``.

Every LLM call goes through ``Rebel._llm``: a base model continues ``prompts/rebel/STEP.txt``;
a chat model gets ``STEP.chat.txt`` (the same instructions and demos as turns), replies in one
turn (no stop strings, ``chat_tokens`` more tokens), and ``rebel.parse`` reads its habits.
Unreadable replies are recorded in ``trace.errors`` and kept in the trace.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from searchain import prompts
from searchain.events import emit
from searchain.llm import LLM
from searchain.llm.prompting import is_chat
from searchain.methods.rebel.config import RebelConfig
from searchain.methods.rebel.parse import (
    chat_answer,
    find_tool_number,
    find_yes_no,
    parse_json_object,
    parse_subquestions,
    parse_tool_number,
    parse_yes_no,
)
from searchain.methods.rebel.subquestions import cap_subquestions, dedup_subquestions
from searchain.tools.base import Tool, ToolError, ToolOutput, truncate
from searchain.types import Node, Passage, Trace

Fact = tuple[str, str]


class _OutOfCalls(Exception):
    pass


@dataclass
class _State:
    trace: Trace
    llm_calls: int = 0
    tool_calls: int = 0
    facts: list[Fact] = field(default_factory=list)  # every fact found, in order
    references: dict[str, Passage] = field(default_factory=dict)
    chat: bool = False  # the client takes messages (the chat forms of the prompts)


def render_memory(facts: list[Fact]) -> str:
    if not facts:
        return ""
    return "Facts:\n" + "".join(f"- {q} {a}\n" for q, a in facts) + "\n"


class Rebel:
    name = "rebel"

    @property
    def config(self) -> RebelConfig:
        """The settings (a run manifest records them: ``eval/methods.describe``)."""
        return self.cfg

    def __init__(
        self,
        llm: LLM,
        tools: list[Tool],
        config: RebelConfig | None = None,
        *,
        embedder: Any = None,
    ) -> None:
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"tool names must be unique: {names}")
        self.llm, self.tools, self.cfg = llm, list(tools), config or RebelConfig()
        self.embedder = embedder  # a readers.embedders.TextEmbedder, or None: exact match
        self.dedup_note: str | None = None  # set by the registry when "auto" fell back
        self.tool_list = "\n".join(f"tool {i}: {t.description}" for i, t in enumerate(tools, 1))

    # -- the algorithm ------------------------------------------------------------------

    def manifest_extra(self) -> dict[str, Any]:
        """What its tools are, for a run manifest (the tools' descriptions are its prompt)."""
        return {"tool_list": self.tool_list}

    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        trace = Trace(question=question, method=self.name)
        state = _State(trace, chat=is_chat(self.llm))
        emit("start", method=self.name, question=question)
        limits: list[str] = []
        form = "chat" if state.chat else "completion"
        trace.meta.update(limits=limits, dedup="embedding" if self.embedder else "exact")
        if self.dedup_note:  # an "auto" de-duplication without its embedder (issue 29 R1)
            trace.errors.append(self.dedup_note)
        trace.meta["prompt_form"] = form
        try:
            answer = self._solve(state, question, [], 0, True, None)
        except _OutOfCalls:
            limits.append(
                f"max_llm_calls ({self.cfg.max_llm_calls}) reached: recursion stopped, answered "
                f"from the {len(state.facts)} fact(s) found so far"
            )
            root = trace.nodes[0]
            answer = self._answer_from_memory(state, question, state.facts, reserved=True)
            root.answer, root.source = answer, "llm"
            root.meta.update(facts=[list(f) for f in state.facts], stopped="max_llm_calls")
        trace.answer = trace.final_content = answer
        trace.references = list(state.references.values())
        trace.rounds = 1
        trace.meta.update(
            facts=[list(f) for f in state.facts],
            tools=[{"name": t.name, "description": t.description} for t in self.tools],
            llm_calls=state.llm_calls,
            tool_calls=state.tool_calls,
            depth=max((n.meta["depth"] for n in trace.nodes), default=0),
            budget={
                "max_depth": self.cfg.max_depth,
                "max_llm_calls": self.cfg.max_llm_calls,
                "max_tool_calls": self.cfg.max_tool_calls,
            },
        )
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=answer)
        return trace

    def _solve(
        self,
        state: _State,
        question: str,
        facts: list[Fact],
        depth: int,
        allow_split: bool,
        parent: Node | None,
    ) -> str:
        node = self._new_node(state, question, depth, parent)
        known = list(facts)  # Memory_n: what the caller knew, then our subquestions' facts
        if allow_split and depth < self.cfg.max_depth:
            subs, child_split = self._split(state, node, known)
            for sub in subs:
                answer = self._solve(state, sub, known, depth + 1, child_split, node)
                known.append((sub, answer))
                state.facts.append((sub, answer))
        else:
            reason = "max depth reached" if allow_split else "the parent split copied its question"
            node.meta["split"] = {"skipped": reason}
            if allow_split:
                self._note(state, f"max_depth ({self.cfg.max_depth}) reached: not split further")
        node.meta["facts"] = [list(f) for f in known]
        node.answer = self._answer(state, node, known)
        return node.answer

    def _new_node(self, state: _State, q: str, depth: int, parent: Node | None) -> Node:
        if parent is None:
            node_id = "q"
        else:
            siblings = sum(1 for n in state.trace.nodes if n.parent == parent.id)
            node_id = f"{parent.id}.{siblings + 1}"
        node = Node(id=node_id, query=q, parent=parent.id if parent else None, meta={})
        node.meta["depth"] = depth
        state.trace.nodes.append(node)
        return node

    def _split(self, state: _State, node: Node, known: list[Fact]) -> tuple[list[str], bool]:
        values = dict(
            tools=self.tool_list or "(none)", memory=render_memory(known), question=node.query
        )
        template = "rebel/split" if self.cfg.split_prompt == "self" else "rebel/split_empty"
        reply = self._llm(state, "split", values, self.cfg.split_tokens, template=template)
        subs, how = parse_subquestions(reply, chat=state.chat)
        if how == "unparsed":
            state.trace.errors.append(f"{node.id}: split reply not read as subquestions: {reply!r}")
        info: dict[str, Any] = {"reply": reply, "parsed_as": how, "removed": []}
        kept, allow = self._dedup(node.query, subs, info["removed"])
        kept, dropped = cap_subquestions(kept, self.cfg.max_subquestions, info["removed"])
        if dropped:  # a budget the paper does not have: said in the trace (issue 29 R3)
            self._note(
                state,
                f"{node.id}: {dropped} subquestion(s) over max_subquestions "
                f"({self.cfg.max_subquestions}) not asked",
            )
        info["subquestions"] = kept
        node.meta["split"] = info
        for s in kept:
            emit("subquestion", depth=node.meta["depth"] + 1, text=s)
        return kept, allow

    def _dedup(self, parent: str, subs: list[str], removed: list) -> tuple[list[str], bool]:
        """Drop subquestions that copy the parent or an earlier sibling (``.subquestions``)."""
        return dedup_subquestions(parent, subs, removed, self.embedder, self.cfg.dedup_threshold)

    def _answer(self, state: _State, node: Node, known: list[Fact]) -> str:
        if not self.tools:
            node.meta["memory_check"] = {"decision": "memory", "why": "no tools"}
            return self._answer_from_memory(state, node.query, known, node=node)
        if self.cfg.memory_check == "llm":
            values = {"memory": render_memory(known), "question": node.query}
            reply = self._llm(state, "memory_check", values, 2)
            yes = parse_yes_no(reply)
            if yes is None and state.chat:
                yes = find_yes_no(reply)
            if yes is None:
                state.trace.errors.append(f"{node.id}: memory check reply not yes/no: {reply!r}")
            # An unreadable reply means "not sure": look it up rather than guess.
            decision = "memory" if yes else "tool"
            node.meta["memory_check"] = {"reply": reply, "decision": decision}
            if yes:
                return self._answer_from_memory(state, node.query, known, node=node)
        else:
            node.meta["memory_check"] = {"decision": "tool", "why": "memory_check=never"}
        if state.tool_calls >= self.cfg.max_tool_calls:
            note = f"max_tool_calls ({self.cfg.max_tool_calls}) reached: answered from memory"
            node.meta["note"] = note
            self._note(state, note)
            return self._answer_from_memory(state, node.query, known, node=node)
        return self._use_tool(state, node, known)

    def _use_tool(self, state: _State, node: Node, known: list[Fact]) -> str:
        info: dict[str, Any] = {}
        node.meta["tool"] = info
        memory = render_memory(known)
        if len(self.tools) == 1:
            number, info["pick"] = 1, "the only tool"
        else:
            values = {"tools": self.tool_list, "memory": memory, "question": node.query}
            reply = self._llm(state, "pick_tool", values, 4)
            names, descs = [t.name for t in self.tools], [t.description for t in self.tools]
            chat_pick = find_tool_number(reply, names, descs) if state.chat else None
            picked = chat_pick or parse_tool_number(reply, names)
            info["pick_reply"] = reply
            number = picked or 1
            if picked is None:
                info["pick"] = "unreadable reply: using tool 1"
                state.trace.errors.append(f"{node.id}: tool choice unreadable: {reply!r}")
        tool = self.tools[number - 1]
        info.update(name=tool.name, number=number)
        try:
            args = self._tool_input(state, tool, node.query, known, info)
            emit("tool", name=tool.name)
            state.tool_calls += 1
            output = tool.invoke(args)
        except ToolError as e:
            info["error"] = str(e)
            state.trace.errors.append(f"{node.id}: {e}")
            node.meta["note"] = "the tool failed: answered from memory"
            return self._answer_from_memory(state, node.query, known, node=node)
        return self._answer_from_tool(state, node, known, output, info)

    def _tool_input(
        self, state: _State, tool: Tool, q: str, known: list[Fact], info: dict[str, Any]
    ) -> dict[str, Any]:
        names = tool.param_names
        if not names:
            info["input"] = {}
            return {}
        desc = f"<TOOL><ID>3</ID><DESC>{tool.description}</DESC>"
        desc += f"<PARAMS>{tool.params_hint()}</PARAMS></TOOL>"
        facts = " ".join(f"{a} {b}" for a, b in known)
        # The prompt ends with the start of the object, '{"<first parameter>": "' for a string
        # parameter, so a base model writes a value instead of describing one.
        first = (tool.parameters.get("properties") or {})[names[0]]
        prefix = "{" + json.dumps(names[0]) + ": " + ('"' if first.get("type") == "string" else "")
        values = dict(
            tool=desc, memory=f"<FACTS>{facts}</FACTS>" if known else "", question=q, prefix=prefix
        )
        reply = self._llm(state, "tool_input", values, self.cfg.input_tokens, ("</A>", "\n"))
        info["input_reply"] = reply
        # A chat reply is the whole object (no prefix to continue), often in a code fence.
        parsed, how = parse_json_object(reply if state.chat else prefix + reply)
        if parsed is None:
            raise ToolError(f"tool {tool.name!r} input rejected: {how}; no call was made")
        if tool.parameters.get("additionalProperties", True) is False:
            extra = sorted(set(parsed) - set(names))
            if extra:  # a rambling base model invents keys; only declared ones may be sent
                info["ignored_keys"] = extra
                parsed = {k: v for k, v in parsed.items() if k in names}
        info["input"] = parsed
        return tool.check_input(parsed)

    def _answer_from_tool(
        self, state: _State, node: Node, known: list[Fact], out: ToolOutput, info: dict
    ) -> str:
        text, cut = truncate(out.text, self.cfg.output_chars)
        info.update(output=text, output_chars=len(out.text), truncated=cut, **out.meta)
        shown, cut_more = truncate(text, self.cfg.context_chars)
        if cut_more:
            info["prompt_chars"] = len(shown)
        for p in out.passages:
            state.references.setdefault(p.id, p)
        node.passages = list(out.passages)
        values = {"memory": render_memory(known), "question": node.query, "tool_output": shown}
        node.source = "tool"
        reply = self._llm(state, "answer_tool", values, self.cfg.answer_tokens)
        return self._clean(state, reply, node)

    def _answer_from_memory(
        self,
        state: _State,
        q: str,
        known: list[Fact],
        *,
        node: Node | None = None,
        reserved: bool = False,
    ) -> str:
        values = {"memory": render_memory(known), "question": q}
        if node is not None:
            node.source = "llm"
        reply = self._llm(state, "answer_memory", values, self.cfg.answer_tokens, reserved=reserved)
        return self._clean(state, reply, node)

    @staticmethod
    def _note(state: _State, note: str) -> None:
        if note not in state.trace.meta["limits"]:
            state.trace.meta["limits"].append(note)

    @staticmethod
    def _clean(state: _State, text: str, node: Node | None) -> str:
        answer = chat_answer(text) if state.chat else text.strip()
        if node is not None and answer != text.strip():
            node.meta["reply"] = text  # the whole chat reply, kept beside the answer read
        if not answer and text.strip():
            state.trace.errors.append(f"{node.id if node else 'q'}: no answer in {text!r}")
            return text.strip()
        return answer

    def _llm(
        self,
        state: _State,
        purpose: str,
        values: dict[str, Any],
        max_tokens: int,
        stop: tuple[str, ...] = ("\n",),
        *,
        reserved: bool = False,
        template: str | None = None,
    ) -> str:
        """Every REBEL call: ``rebel/PURPOSE`` (or ``template``) filled with ``values``, in the
        client's form."""
        # One call is held back so a stopped recursion can still answer the question.
        limit = self.cfg.max_llm_calls if reserved else self.cfg.max_llm_calls - 1
        if state.llm_calls >= limit:
            raise _OutOfCalls
        state.llm_calls += 1
        emit("llm", purpose=purpose)
        template = template or f"rebel/{purpose}"
        if state.chat:
            result = self.llm.chat(
                prompts.messages(template, **values),
                max_tokens=max_tokens + self.cfg.chat_tokens,
                stop=(),
                temperature=0.0,
            )
        else:
            prompt = prompts.fill(template, **values)
            result = self.llm.complete(prompt, max_tokens=max_tokens, stop=stop, temperature=0.0)
        state.trace.usage.add(result.usage)
        return result.text
