"""Self-guided MCTS, independent of LLMs: any :class:`Problem` can be searched (the tests use
a small arithmetic one with a known optimum; Think&Cite plugs in its agent).

One iteration: **select** a leaf from the root by UCT (unvisited children first), **expand** it
into ``n_children`` children, **evaluate** each new child's path with the problem's reward, and
**backpropagate**: every node on the path gets ``N += 1`` and ``V = (V·(N−1) + R) / N`` for each
evaluated child (the paper's running mean). Terminal nodes (End) and nodes at ``max_depth`` are
never expanded; a subtree with nothing left to expand is skipped, and the search stops early
when the whole tree is exhausted. The answer is the highest-value terminal node, or with none
the greedy highest-value path from the root, marked partial — a question is never dropped.
An expansion that raises (a backend error after retries, a prompt past the context) makes its
leaf a dead end and the search goes on; the error is kept. ``max_failures`` failed expansions
in a row (a backend that is down) stop the search, and the best tree so far answers.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from searchain.methods.settings import check_settings, setting

S = TypeVar("S")


@dataclass(slots=True)
class Reward:
    total: float
    parts: dict[str, Any] = field(default_factory=dict)


class Problem(Protocol[S]):
    def expand(self, path: list[S], n: int, seed: int) -> list[S]:
        """Up to ``n`` children of ``path[-1]`` (``path`` runs from the root)."""
        ...

    def evaluate(self, path: list[S]) -> Reward: ...

    def is_terminal(self, state: S) -> bool: ...


@dataclass
class MCTSConfig:
    n_children: int = setting(3, "Children per expansion (the paper's 3).", ge=1, remote_le=10)
    max_depth: int = setting(
        6, "Deepest step of the search tree (the paper's 6).", ge=1, remote_le=10
    )
    max_iterations: int = setting(
        30, "MCTS iterations (the paper's 30).", ge=1, remote_le=200, flag="iterations"
    )
    exploration: float = setting(
        0.2,
        "w in UCT(s) = V(s) + w·sqrt(ln N(parent) / N(s)) (the paper's 0.2).",
        ge=0,
        remote_le=10,
    )
    seed: int = setting(0, "Seed of the sampled expansions.", ge=0, le=2**31 - 1)
    max_failures: int = setting(
        3, "Failed expansions in a row that end the search.", ge=1, remote_le=20
    )

    def __post_init__(self) -> None:
        check_settings(self)


@dataclass(eq=False)
class TreeNode(Generic[S]):
    id: str
    state: S
    parent: TreeNode[S] | None = None
    depth: int = 0
    children: list[TreeNode[S]] = field(default_factory=list)
    visits: int = 0
    value: float = 0.0
    reward: Reward | None = None
    terminal: bool = False
    expanded: bool = False
    exhausted: bool = False  # nothing below this node can be expanded any more

    def path(self) -> list[TreeNode[S]]:
        out: list[TreeNode[S]] = []
        node: TreeNode[S] | None = self
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]

    def walk(self) -> list[TreeNode[S]]:
        out = [self]
        for c in self.children:
            out += c.walk()
        return out


@dataclass
class SearchResult(Generic[S]):
    root: TreeNode[S]
    best: TreeNode[S]
    partial: bool
    iterations: int
    errors: list[str] = field(default_factory=list)
    # Why the search ended: "budget" (max_iterations tried), "exhausted" (nothing left to
    # expand) or "failures" (max_failures failed expansions in a row).
    stopped: str = "budget"

    @property
    def path(self) -> list[TreeNode[S]]:
        return self.best.path()


def uct(child: TreeNode[Any], parent_visits: int, w: float) -> float:
    if child.visits == 0:
        return math.inf  # unvisited children first
    return child.value + w * math.sqrt(math.log(max(parent_visits, 1)) / child.visits)


class MCTS(Generic[S]):
    def __init__(
        self,
        problem: Problem[S],
        config: MCTSConfig | None = None,
        on_iteration: Callable[[int, float], None] | None = None,
    ) -> None:
        self.problem, self.config, self.on_iteration = problem, config or MCTSConfig(), on_iteration

    def child_seed(self, node: TreeNode[S]) -> int:
        """Sampling seed of an expansion: a function of the run's seed and the node's place in
        the tree only, so a run is reproducible and a longer run repeats a shorter one's calls."""
        return zlib.crc32(f"{self.config.seed}:{node.id}".encode()) & 0x7FFFFFFF

    def search(self, root_state: S) -> SearchResult[S]:
        root: TreeNode[S] = TreeNode("0", root_state)
        errors: list[str] = []
        done = failures = 0
        stopped = "budget"
        for i in range(1, self.config.max_iterations + 1):
            leaf = self.select(root)
            if leaf is None:
                stopped = "exhausted"  # the whole tree: nothing left to expand
                break
            try:
                self.expand_and_evaluate(leaf)
            except Exception as exc:  # keep the tree so far: never drop the question
                errors.append(f"iteration {i}: node {leaf.id}: {type(exc).__name__}: {exc}")
                leaf.expanded = True  # a dead end (no child attached): never selected again
                self._update_exhausted(leaf)
                failures += 1
                if failures >= self.config.max_failures:
                    stopped = "failures"
                    break
                continue
            failures = 0
            done += 1
            if self.on_iteration is not None:
                self.on_iteration(done, self.best(root)[0].value)
        best, partial = self.best(root)
        return SearchResult(root, best, partial, done, errors, stopped)

    def select(self, root: TreeNode[S]) -> TreeNode[S] | None:
        node = root
        while node.expanded:
            open_children = [c for c in node.children if not c.exhausted]
            if not open_children:
                return None
            w = self.config.exploration
            # max() keeps the first of equal scores: ties go to the earlier child.
            node = max(open_children, key=lambda c: uct(c, node.visits, w))
        return None if node.exhausted else node

    def expand_and_evaluate(self, leaf: TreeNode[S]) -> list[TreeNode[S]]:
        states = [n.state for n in leaf.path()]
        new = self.problem.expand(states, self.config.n_children, self.child_seed(leaf))
        new = new[: self.config.n_children]
        # Every child is evaluated before any is attached: a failure leaves the tree as it was.
        rewards = [self.problem.evaluate([*states, state]) for state in new]
        leaf.expanded = True
        for j, (state, reward) in enumerate(zip(new, rewards, strict=True)):
            child = TreeNode(f"{leaf.id}.{j}", state, leaf, leaf.depth + 1)
            child.terminal = self.problem.is_terminal(state)
            leaf.children.append(child)
            child.reward = reward
            self.backpropagate(child, reward.total)
            if child.terminal or child.depth >= self.config.max_depth:
                child.exhausted = True
        self._update_exhausted(leaf)
        return leaf.children

    @staticmethod
    def backpropagate(node: TreeNode[S], reward: float) -> None:
        n: TreeNode[S] | None = node
        while n is not None:
            n.visits += 1
            n.value = (n.value * (n.visits - 1) + reward) / n.visits
            n = n.parent

    @staticmethod
    def _update_exhausted(node: TreeNode[S]) -> None:
        n: TreeNode[S] | None = node
        while n is not None and n.expanded and all(c.exhausted for c in n.children):
            n.exhausted = True  # also an expansion that produced no child: a dead end
            n = n.parent

    def best(self, root: TreeNode[S]) -> tuple[TreeNode[S], bool]:
        """The highest-value terminal node (ties: more visits, then earlier), else the greedy
        highest-value path from the root, marked partial."""
        ends = [n for n in root.walk() if n.terminal]
        if ends:
            return max(ends, key=lambda n: (n.value, n.visits)), False
        node = root
        while node.children:
            node = max(node.children, key=lambda c: (c.value, c.visits))
        return node, True
