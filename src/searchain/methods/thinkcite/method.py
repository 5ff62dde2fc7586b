"""``thinkcite``: Think&Cite (Li & Ng, ACL 2025) as a searchain method returning the shared Trace.

The trace holds the whole search tree (``nodes``: query, documents, sentence, citations,
visits, value and reward parts per node), the chosen path (``meta["chosen_path"]``), the final
answer with ``[n]`` marks against ``references`` (every document shown along the chosen path,
in global number order), and the usage of the policy, the reward model pair and the judge.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from searchain import citations
from searchain.events import emit
from searchain.llm import LLM, CachedLLM, prompt_form
from searchain.methods.settings import Setting, settings_of, unknown_message
from searchain.methods.thinkcite.agent import AgentConfig, ThinkCiteProblem, documents_of
from searchain.methods.thinkcite.mcts import MCTS, MCTSConfig, SearchResult, TreeNode
from searchain.methods.thinkcite.prompting import Step
from searchain.methods.thinkcite.reward import ProgressReward, RewardConfig
from searchain.methods.thinkcite.reward_models import model_name
from searchain.retrieval.base import Retriever
from searchain.scoring import NLI
from searchain.types import Node, Trace, Usage, finite_float


@dataclass
class ThinkCiteConfig:
    """Every knob; defaults are the paper's (3 children, depth 6, 30 iterations, w = 0.2,
    top-3 passages, reflection limit 10) except the prompt budget for a 4k-context model."""

    mcts: MCTSConfig = field(default_factory=MCTSConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)

    @classmethod
    def settings(cls) -> tuple[Setting, ...]:
        """The settings of the three parts as one flat list (a name two parts share, such as
        ``max_citations``, once: setting it sets both)."""
        seen: dict[str, Setting] = {}
        for part in (MCTSConfig, AgentConfig, RewardConfig):
            for s in settings_of(part):
                seen.setdefault(s.name, s)
        return tuple(seen.values())

    @classmethod
    def from_options(cls, **options: Any) -> ThinkCiteConfig:
        """Flat keyword options (``max_iterations=5, family="eli5", use_rg=False``) routed to
        every part that owns them; an unknown name is an error, not silently ignored."""
        known = {s.name for s in cls.settings()}
        unknown = set(options) - known
        if unknown:
            raise ValueError(unknown_message("thinkcite", unknown, known))
        parts = {}
        for part in (MCTSConfig, AgentConfig, RewardConfig):
            own = {s.name for s in settings_of(part)}
            parts[part] = part(**{k: v for k, v in options.items() if k in own})
        return cls(mcts=parts[MCTSConfig], agent=parts[AgentConfig], reward=parts[RewardConfig])

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class _MemoryStore:
    """In-process call store: makes repeated deterministic calls of one run free."""

    def __init__(self) -> None:
        self._d: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self._d.get(key)

    def put(self, key: str, request: dict[str, Any], result: dict[str, Any]) -> None:
        self._d[key] = result


class ThinkCite:
    name = "thinkcite"

    def __init__(
        self,
        llm: LLM,
        retriever: Retriever,
        *,
        judge: NLI | None = None,
        reward_model: LLM | None = None,
        reference: LLM | None = None,
        config: ThinkCiteConfig | None = None,
    ) -> None:
        # Without a persistent cache, still never pay twice for one call within a run.
        self.llm = llm if isinstance(llm, CachedLLM) else CachedLLM(llm, _MemoryStore())
        self.retriever, self.judge = retriever, judge
        # R_g's pair (reward_models.py): π and π_ref, either may be the policy's own model
        self.reward_model, self.reference = reward_model, reference
        self.config = config or ThinkCiteConfig()

    def manifest_extra(self) -> dict[str, Any]:
        """R_g's pair, for a run manifest — only when R_g runs, so a run made with R_a alone
        (before the pair existed) keeps its manifest and resumes."""
        if self.reward_model is None or self.reference is None or not self.config.reward.use_rg:
            return {}
        return {
            "reward_model": model_name(self.reward_model),
            "reward_reference": model_name(self.reference),
        }

    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        trace = Trace(question=question, method=self.name)
        judge = self.judge.fork() if hasattr(self.judge, "fork") else self.judge  # type: ignore[union-attr]
        reward = ProgressReward(
            self.config.reward,
            judge=judge,
            model=self.reward_model,
            reference=self.reference,
            list_answer=self.config.agent.family == "qampari",
        )
        problem = ThinkCiteProblem(question, self.llm, self.retriever, reward, self.config.agent)

        def progress(i: int, best: float) -> None:
            emit("mcts_iteration", i=i, best_value=best)

        result = MCTS(problem, self.config.mcts, on_iteration=progress).search(Step("root"))
        self._fill(trace, result, problem, reward, judge)
        trace.wall_seconds = time.perf_counter() - t0
        emit("answer", text=trace.final_content)
        return trace

    def _fill(
        self,
        trace: Trace,
        result: SearchResult[Step],
        problem: ThinkCiteProblem,
        reward: ProgressReward,
        judge: Any,
    ) -> None:
        path = result.path
        steps = [n.state for n in path]
        sentences = [s.sentence for s in steps if s.action == "output" and s.sentence]
        trace.final_content = " ".join(sentences)
        trace.answer = citations.strip_marks(trace.final_content)
        trace.references = documents_of(steps)
        trace.citations, errors = citations.resolve(trace.final_content, trace.references)
        trace.errors = [*result.errors, *problem.parse_errors, *errors]
        chosen = {n.id for n in path}
        trace.nodes = [_node(n, n.id in chosen) for n in result.root.walk()]
        trace.rounds = result.iterations
        usage = Usage()
        usage.add(problem.usage)
        usage.add(reward.usage)
        usage.add(getattr(judge, "usage", Usage()))
        trace.usage = usage
        trace.meta = {
            "prompt_form": prompt_form(self.llm),
            "chosen_path": [n.id for n in path],
            "partial": result.partial,
            "ended": path[-1].state.action == "end",
            "iterations": result.iterations,  # expansions that attached children
            "stopped": result.stopped,  # budget | exhausted | failures
            "failed_expansions": len(result.errors),
            "tree_size": len(trace.nodes),
            "config": self.config.to_dict(),
            "reward": {
                "r_g": reward.rg_active,
                "r_a": reward.ra_active,
                "reward_model": model_name(self.reward_model),
                "reference_model": model_name(self.reference),
                "judge": getattr(judge, "name", None) if judge is not None else None,
            },
            # How the LLM judge reached its verdicts: {"scored": n, "generated": n}.
            "judge_modes": dict(getattr(judge, "modes", {})),
            "rg_forms": dict(reward.forms),  # R_g's π / π_ref: "chat" | "completion"
            "warnings": [*problem.prompt_notes, *reward.status],
            "prompt": dict(problem.prompt),  # the demos the prompt held (after any fallback)
            "child_errors": list(problem.child_errors),  # children left out (the rest went on)
            "resampled_children": problem.resampled,
            "reuse": {
                "retrieval_calls": problem.retrieval_calls,
                "retrieval_cache_hits": problem.retrieval_hits,
                "llm_cached_calls": usage.cached_calls,
                "rg_memo_hits": reward.memo_hits,
                "nli_memo_hits": getattr(getattr(judge, "_memo", None), "hits", 0),
            },
        }


def _node(n: TreeNode[Step], chosen: bool) -> Node:
    s = n.state
    parts = dict(n.reward.parts) if n.reward else {}
    return Node(
        id=n.id,
        query=s.query,
        answer=s.sentence or None,
        source="retrieval" if s.action == "output" else "llm",
        parent=n.parent.id if n.parent else None,
        passages=s.documents,
        meta={
            "action": s.action,
            "depth": n.depth,
            "visits": n.visits,
            "value": finite_float(n.value),
            "reward": finite_float(n.reward.total) if n.reward else None,
            "reward_parts": {k: finite_float(v) for k, v in parts.items()},
            "citations": s.citations,
            "searches": [x.to_dict() for x in s.searches],
            "notes": s.notes,
            "terminal": n.terminal,
            "chosen": chosen,
        },
    )
