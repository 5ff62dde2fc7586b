"""The Think&Cite agent as an MCTS problem: each expansion thinks a query, searches, reflects and
searches again (bounded), then writes one cited sentence — or ends the answer.

Reuse instead of re-querying (the research code re-encoded and re-asked needlessly):
retrievals are cached per query for the whole search; the instruction and demos are one fixed
prefix (the local backend keeps it in its KV cache); a child's first action, its sentence and a
decision that may write it are sampled with a seed given by the node's place in the tree,
every other call is greedy, so
repeated runs hit the LLM call cache; reward parts are memoised per sentence and NLI pair.

Children must differ for the search to choose between them: a child equal to a sibling is
re-sampled with the next seed (at most ``resamples`` extra children per expansion). A child
whose calls fail (a prompt past the model's context, a backend error after retries) is left
out and noted; only when no child could be made does the expansion fail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from searchain import citations
from searchain.llm import LLM, LLMError
from searchain.llm.base import context_window, find_tokenizer
from searchain.llm.prompting import is_chat
from searchain.methods.settings import check_settings, setting
from searchain.methods.thinkcite import chat
from searchain.methods.thinkcite import prompting as tp
from searchain.methods.thinkcite.mcts import Reward
from searchain.methods.thinkcite.prompting import FAMILIES, Search, Step
from searchain.methods.thinkcite.reward import ProgressReward
from searchain.retrieval.base import Retriever
from searchain.types import Passage, Usage

_SPACE = re.compile(r"\s+")


@dataclass
class AgentConfig:
    family: str = setting(
        "asqa",
        "Demo family: asqa (factual), qampari (lists), eli5.",
        choices=FAMILIES,
        flag="family",
    )
    k: int = setting(3, "Passages per search (the paper: top-3).", ge=1, remote_le=20)
    reflection: bool = setting(True, 'Ablation "w/o reflection": search once, then write.')
    max_reflections: int = setting(
        10, "Reflections before the sentence must be written (the paper's 10).", ge=0, remote_le=20
    )
    n_demos: int = setting(4, "ALCE demos in the prompt (the paper's 4).", ge=0, le=8)
    demo_doc_words: int | None = setting(
        None,
        "Demo documents cut to this many words (null: whole, as the paper).",
        ge=1,
        remote_le=1000,
    )
    prompt_style: str = setting(
        "paper",
        "paper: the paper's instruction and 'Here are some examples:'; task-line: "
        "this code's earlier prompt (a task line per family, no examples line).",
        choices=tp.STYLES,
    )
    demo_budget: float = setting(
        0.35,
        "Share of a local model's context the instruction and demos may take; past it "
        "the demos fall back to 60-word documents, then fewer demos (said in the trace).",
        gt=0,
        le=1,
    )
    temperature: float = setting(
        0.7, "Sampling of a child's first action and sentence.", ge=0, le=2
    )
    resamples: int = setting(
        3, "Extra children sampled per expansion to replace duplicates.", ge=0, remote_le=20
    )
    # A 4k-token model: ~1.8k tokens after the demos, so the sentence is still written.
    max_prompt_chars: int | None = setting(
        7_000,
        "Stop reflecting when the question's part of the prompt (history and this "
        "step, after the demos) grows past this many characters (null: never).",
        ge=1000,
        remote_le=100_000,
    )
    query_tokens: int = setting(32, "Tokens of a search query.", ge=1, remote_le=1024)
    reflexion_tokens: int = setting(64, "Tokens of a reflection.", ge=1, remote_le=1024)
    output_tokens: int = setting(96, "Tokens of a sentence.", ge=1, remote_le=1024)
    max_citations: int = setting(
        3, "Citations per sentence (as ALCE scores them).", ge=1, remote_le=10
    )
    hide_seen: bool = setting(
        False,
        "Search skips passages already shown on the path (the paper returns the "
        "query's top-k, repeats included).",
    )
    cite_scope: str = setting(
        "step",
        "Which documents a sentence may cite: step (the paper: this step's search "
        "results) or path (any document shown so far).",
        choices=("step", "path"),
    )
    history: str = setting(
        "all",
        "Earlier steps in the prompt: all (the paper: every search's documents) or "
        "cited (only the documents their sentence cited; shorter prompts).",
        choices=tp.HISTORIES,
    )

    def __post_init__(self) -> None:
        check_settings(self)


class ThinkCiteProblem:
    """One question's search space. States are :class:`Step`\\ s; the root is ``Step("root")``."""

    def __init__(
        self,
        question: str,
        llm: LLM,
        retriever: Retriever,
        reward: ProgressReward,
        config: AgentConfig,
        retrieval_cache: dict[str, list[Passage]] | None = None,
    ) -> None:
        self.question, self.llm, self.retriever = question, llm, retriever
        self.reward, self.config = reward, config
        # The paper's demos, or as many as fit a local model's context (said in prompt_notes)
        window, tokenize = context_window(llm), find_tokenizer(llm)
        n, words, note = tp.fit_header(
            config.family,
            config.n_demos,
            config.demo_doc_words,
            config.prompt_style,
            int(window * config.demo_budget) if window else None,
            (lambda text: len(tokenize(text))) if tokenize else None,
        )
        self.prompt = {"n_demos": n, "demo_doc_words": words, "style": config.prompt_style}
        self.prompt_notes = [note] if note else []
        self.header = tp.header(config.family, n, words, config.prompt_style)
        self.chat = is_chat(llm)  # chat form: messages (chat.py); else completion prompts
        self.header_parts = tp.header_parts(config.family, n, words, config.prompt_style)
        self.usage = Usage()  # agent calls (cached ones included, as cached_calls)
        self.retrievals = retrieval_cache if retrieval_cache is not None else {}
        self.retrieval_calls = self.retrieval_hits = 0
        self.child_errors: list[str] = []  # children left out, and why
        self.parse_errors: list[str] = []  # chat replies that gave no usable sentence
        self.resampled = 0  # duplicate children replaced by another sample

    # -- the Problem protocol -----------------------------------------------------------
    def is_terminal(self, state: Step) -> bool:
        return state.action == "end"

    def evaluate(self, path: list[Step]) -> Reward:
        sentences = [s.sentence for s in path if s.action == "output" and s.sentence]
        return self.reward(self.question, sentences, documents_of(path))

    def expand(self, path: list[Step], n: int, seed: int) -> list[Step]:
        children: list[Step] = []
        seen: set[tuple[str, str]] = set()
        error: LLMError | None = None
        for j in range(n + self.config.resamples):
            if len(children) == n:
                break
            if j >= n:
                self.resampled += 1
            try:
                child = self.child(path, seed + j)
            except LLMError as e:  # this child only: the others may still fit and succeed
                error = e
                self.child_errors.append(f"depth {len(path)}, sample {j}: {e}")
                continue
            key = (child.action, child.sentence)
            if child.action == "output" and not child.sentence:
                if self.chat:  # chat replies are parsed: say what could not be used
                    self.parse_errors.append(
                        f"depth {len(path)}, sample {j}: no usable sentence ({child.notes})"
                    )
                continue  # the model wrote nothing usable
            if key in seen:
                continue  # an identical sibling adds nothing to the tree: sample another
            seen.add(key)
            children.append(child)
        if not children and error is not None:
            raise error
        return children

    # -- one child: think → search → reflect → search … → output -------------------------
    def child(self, path: list[Step], seed: int) -> Step:
        cfg = self.config
        text = (
            self.header
            + "\n\n"
            + tp.render_history(self.question, path, self.config.history)
            + "\n"
        )
        has_answer = any(s.action == "output" for s in path)
        step = Step("output")
        query = ""
        if has_answer:  # the model may end the answer instead of searching on
            kind, arg = self._act(text, "next", cfg.query_tokens, step, seed)
            if kind == "end":
                return Step("end", notes=step.notes)
            query = arg if kind == "search" else ""
        if not query:
            query = self._act(text, "search", cfg.query_tokens, step, seed)[1]
        first = len(documents_of(path)) + 1
        sentence: str | None = None
        while True:
            search = self._search(clean_query(query) or self.question, first, path, step)
            step.searches.append(search)
            first += len(search.documents)
            text += "\n".join([f"Search: {search.query}", *tp.render_documents(search)]) + "\n"
            if not cfg.reflection or len(step.searches) > cfg.max_reflections:
                break
            grown = len(text) - len(self.header)  # the question's part, after the demos
            if cfg.max_prompt_chars is not None and grown > cfg.max_prompt_chars:
                step.notes.append("reflection stopped: the prompt reached max_prompt_chars")
                break
            if len(step.searches) == 1:  # the paper's expansion always reflects once
                reflexion = self._act(text, "reflexion", cfg.reflexion_tokens, step)[1]
            else:  # later: the model decides whether the evidence now suffices; its reply
                # may be the sentence, so it is sampled with the child's seed like one
                kind, arg = self._act(text, "decide", cfg.output_tokens, step, seed)
                if kind == "output" and arg:
                    sentence = arg
                    break
                if kind != "reflexion" or not arg:
                    break
                reflexion = arg
            search.reflexion = _one_line(reflexion)
            text += f"Reflexion: {search.reflexion}\n"
            query = self._act(text, "search", cfg.query_tokens, step)[1] or search.query
        if sentence is None:  # sampled like the first action: siblings write different ones
            sentence = self._act(text, "output", cfg.output_tokens, step, seed)[1]
        shown = [(n, p) for s in step.searches for n, p in enumerate(s.documents, s.first)]
        # The paper: C_t cites D_t, this step's documents (the chat form names only those);
        # "path": any document shown on the path so far (this code's earlier completion form).
        start = step.searches[0].first if cfg.cite_scope == "step" else 1
        step.sentence, step.citations, notes = tp.enforce_citations(
            strip_labels(_one_line(sentence)), range(start, first), shown, cfg.max_citations
        )
        step.notes += notes
        return step

    def _act(
        self, text: str, action: str, max_tokens: int, step: Step, seed: int | None = None
    ) -> tuple[str, str]:
        """The model's ``action`` after ``text`` (header, history, current step) as
        ``(kind, argument)``. ``next`` and ``decide`` let the model choose the action (``kind``
        as it wrote it, ``""`` when unrecognised); the others ask for one, and ``kind`` is
        that action. Completion form: the prompt ends with the action's label; chat form:
        :mod:`chat` asks for it, and a reply without the asked label is noted on ``step``."""
        if self.chat:
            history = text.removeprefix(self.header + "\n\n")
            messages = chat.messages(*self.header_parts, history, action)
            reply = self._chat(messages, max_tokens, seed)
            if action in ("next", "decide"):
                kind, arg, labelled = chat.parse_reply(reply)
                if not labelled:
                    step.notes.append(f"chat reply without an action label: {reply!r}")
                    if action == "decide" and citations.marks(arg):
                        kind = "output"  # a cited sentence: what "decide" asks for
                return kind, arg
            arg, note = chat.reply_argument(reply, action)
            if note:
                step.notes.append(note)
            return action, arg
        if action in ("next", "decide"):
            return tp.parse_action(self._gen(text, max_tokens, seed))
        label = {"search": "Search:", "reflexion": "Reflexion:", "output": "Output:"}[action]
        return action, self._gen(text + label, max_tokens, seed)

    def _sampling(self, seed: int | None) -> dict[str, Any]:
        """Greedy, unless a seed asks for a sample at the configured temperature."""
        sampled = seed is not None and self.config.temperature > 0
        return {
            "temperature": self.config.temperature if sampled else 0.0,
            "seed": seed if sampled else None,
        }

    def _gen(self, prompt: str, max_tokens: int, seed: int | None = None) -> str:
        r = self.llm.complete(prompt, max_tokens=max_tokens, stop=("\n",), **self._sampling(seed))
        self.usage.add(r.usage)
        if r.text.strip() or r.finish_reason != "stop":
            return r.text.strip()
        # Small models often start with a line break ("Output:" then "\n"): ask again without
        # the stop and keep the first non-empty line (one extra call, only when needed).
        r = self.llm.complete(prompt, max_tokens=max_tokens, **self._sampling(seed))
        self.usage.add(r.usage)
        return next((ln.strip() for ln in r.text.splitlines() if ln.strip()), "")

    def _chat(self, messages: list[dict[str, str]], max_tokens: int, seed: int | None) -> str:
        r = self.llm.chat(
            messages,
            max_tokens=max_tokens,
            stop=chat.STOP,
            **self._sampling(seed),
        )
        self.usage.add(r.usage)
        return r.text

    def _search(self, query: str, first: int, path: list[Step], step: Step) -> Search:
        """The query's top-k (the paper; a passage already shown on the path is shown again
        under a new number), or with ``hide_seen`` the top-k not shown yet."""
        k = self.config.k
        self.retrieval_calls += 1
        if query in self.retrievals:
            self.retrieval_hits += 1
        else:  # enough to still give k new passages after those already shown
            self.retrievals[query] = self.retriever.search(
                query, k=k * 4 if self.config.hide_seen else k
            )
        if not self.config.hide_seen:
            return Search(query, first, self.retrievals[query][:k])
        shown = {p.id for p in documents_of(path)} | {p.id for p in step.documents}
        fresh = [p for p in self.retrievals[query] if p.id not in shown][:k]
        return Search(query, first, fresh)


def documents_of(path: list[Step]) -> list[Passage]:
    """Every document shown along a path, in global number order."""
    return [p for s in path for p in s.documents]


def clean_query(text: str) -> str:
    """A model-written query as search keywords: one line, no marks or quotes, bounded."""
    q = _one_line(text).strip().strip("\"'").strip()
    q = re.sub(r"\[\d+\]", "", q)
    return q[:200].strip()


# The action format's own labels, which small models echo at the start of a sentence
# ("Output:" answered with "Reflexion: Document: The record is ..."): format, not content.
_LABELS = re.compile(r"^(?:(?:Output|Reflexion|Search|Document(?:\s*\[\d+\])?)\s*:\s*)+", re.I)


def strip_labels(sentence: str) -> str:
    """An output sentence without the action labels a model echoed in front of it."""
    return _LABELS.sub("", sentence).strip()


def _one_line(text: str) -> str:
    return _SPACE.sub(" ", text).strip()
