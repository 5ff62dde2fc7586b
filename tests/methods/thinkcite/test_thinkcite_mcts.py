"""SG-MCTS mechanics on a small deterministic problem with a known optimum (no LLM).

States are tuples of actions: 0 and 1 write a "sentence", 2 is End (terminal). The reward of
a path is the mean of a fixed table ``W[position][action]``, so every value is checkable by hand.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from searchain.methods.thinkcite.mcts import MCTS, MCTSConfig, Reward, TreeNode, uct

W = [  # W[position][action]
    [0.2, 0.6, 0.1],
    [0.9, 0.3, 0.5],
    [0.4, 0.8, 0.7],
    [0.1, 0.2, 0.3],
    [0.5, 0.5, 0.5],
    [0.3, 0.9, 0.2],
]


def reward_of(state: tuple[int, ...]) -> float:
    return sum(W[i][a] for i, a in enumerate(state)) / len(state)


class Toy:
    def __init__(self, shuffle: bool = False, end: bool = True):
        self.shuffle, self.end = shuffle, end
        self.expansions: list[tuple[int, ...]] = []
        self.seeds: list[int] = []

    def expand(self, path, n, seed):
        self.expansions.append(path[-1])
        self.seeds.append(seed)
        actions = [0, 1, 2] if self.end else [0, 1]
        if self.shuffle:
            random.Random(seed).shuffle(actions)
        return [(*path[-1], a) for a in actions[:n]]

    def evaluate(self, path):
        return Reward(reward_of(path[-1]), {"r": reward_of(path[-1])})

    def is_terminal(self, state):
        return bool(state) and state[-1] == 2


def search(problem, **cfg):
    return MCTS(problem, MCTSConfig(**cfg)).search(())


def test_first_iteration_expands_the_root_into_three_and_backpropagates():
    res = search(Toy(), max_iterations=1)
    root = res.root
    assert [c.state for c in root.children] == [(0,), (1,), (2,)]
    assert [c.visits for c in root.children] == [1, 1, 1]
    assert [c.value for c in root.children] == pytest.approx([0.2, 0.6, 0.1])
    assert root.visits == 3
    # Running mean V = (V·(N−1) + R)/N over the three rewards: their mean.
    assert root.value == pytest.approx((0.2 + 0.6 + 0.1) / 3)
    assert res.iterations == 1
    assert [c.terminal for c in root.children] == [False, False, True]


def test_second_iteration_follows_uct_and_updates_values_by_hand():
    problem = Toy()
    res = search(problem, max_iterations=2)
    # UCT of the open children after iteration 1 (N(root) = 3, each N = 1): (0,) 0.2 + c,
    # (1,) 0.6 + c with c = 0.2·sqrt(ln 3); (2,) is End, never expanded. (1,) wins.
    assert problem.expansions == [(), (1,)]
    node = res.root.children[1]
    rewards = [(0.6 + 0.9) / 2, (0.6 + 0.3) / 2, (0.6 + 0.5) / 2]
    assert [c.value for c in node.children] == pytest.approx(rewards)
    # (1,): its own reward and three children's -> N = 4, V = running mean of the four.
    assert node.visits == 4
    assert node.value == pytest.approx((0.6 + sum(rewards)) / 4)
    assert res.root.visits == 6
    assert res.root.value == pytest.approx((0.2 + 0.6 + 0.1 + sum(rewards)) / 6)


def test_uct_prefers_unvisited_then_balances_value_and_exploration():
    parent = TreeNode("0", (), visits=10)
    a = TreeNode("0.0", (0,), parent, 1, visits=9, value=0.5)
    b = TreeNode("0.1", (1,), parent, 1, visits=1, value=0.4)
    assert uct(a, 10, 0.2) == pytest.approx(0.5 + 0.2 * math.sqrt(math.log(10) / 9))
    assert uct(b, 10, 0.2) > uct(a, 10, 0.2)  # 0.7035 > 0.6012: exploration wins
    assert uct(b, 10, 0.0) < uct(a, 10, 0.0)  # without it, value wins
    c = TreeNode("0.2", (2,), parent, 1)
    assert uct(c, 10, 0.2) == math.inf
    parent.children, parent.expanded = [a, b, c], True
    assert MCTS(Toy()).select(parent) is c
    parent.children = [a, b]
    assert MCTS(Toy()).select(parent) is b


def test_every_value_is_the_mean_of_the_rewards_evaluated_below_it():
    res = search(Toy(), max_iterations=12, max_depth=6)
    for node in res.root.walk():
        below = [n.reward.total for n in node.walk() if n.reward is not None]
        assert node.visits == len(below)
        assert node.value == pytest.approx(sum(below) / len(below))


def test_depth_limit_and_early_stop_when_the_tree_is_exhausted():
    problem = Toy()
    res = search(problem, max_iterations=30, max_depth=2)
    nodes = res.root.walk()
    assert max(n.depth for n in nodes) == 2
    assert all(not n.children for n in nodes if n.depth == 2)
    # root -> 3; its two non-End children -> 3 each: 3 expansions, then nothing is left.
    assert res.iterations == 3 and len(problem.expansions) == 3
    assert len(nodes) == 1 + 3 + 6
    assert res.root.exhausted and res.stopped == "exhausted"


def test_iteration_limit():
    problem = Toy()
    res = search(problem, max_iterations=4, max_depth=6)
    assert res.iterations == 4 and len(problem.expansions) == 4
    assert len(res.root.walk()) == 1 + 3 * 4
    assert res.stopped == "budget"


def test_finds_the_known_optimum_when_the_budget_covers_the_tree():
    res = search(Toy(), max_iterations=30, max_depth=3)
    # Brute force: every End path of length <= 3.
    ends = [(*p, 2) for n in range(3) for p in itertools.product([0, 1], repeat=n)]
    best = max(ends, key=reward_of)
    assert res.best.state == best == (1, 0, 2)
    assert not res.partial
    assert res.best.value == pytest.approx(reward_of(best))


def test_seeded_runs_repeat_and_other_seeds_differ():
    def shape(seed):
        res = search(Toy(shuffle=True), max_iterations=6, seed=seed)
        return [(n.id, n.state, round(n.value, 12), n.visits) for n in res.root.walk()]

    assert shape(1) == shape(1)
    assert shape(1) != shape(2)
    p = Toy()
    search(p, max_iterations=3, seed=5)
    q = Toy()
    search(q, max_iterations=3, seed=5)
    assert p.seeds == q.seeds and len(set(p.seeds)) == 3  # one seed per node, repeatable


def test_never_drops_without_end_the_best_partial_path_is_returned():
    res = search(Toy(end=False), max_iterations=5)
    assert res.partial
    node = res.root
    while node.children:  # greedy by value from the root
        node = max(node.children, key=lambda c: c.value)
    assert res.best is node and res.best.depth >= 1


def test_a_failed_expansion_is_a_dead_end_and_the_search_goes_on():
    class Once(Toy):  # the third expansion fails (a prompt past the context, say), once
        calls = 0

        def expand(self, path, n, seed):
            self.calls += 1
            if self.calls == 3:
                raise RuntimeError("backend down")
            return super().expand(path, n, seed)

    p = Once()
    res = search(p, max_iterations=10)
    assert len(res.errors) == 1 and "backend down" in res.errors[0]
    assert res.iterations == 9 and res.stopped == "budget"  # 10 attempts, one failed
    # The failed leaf got no children, is never selected again, and nothing was backpropagated
    # for it: the root's visits are exactly the evaluated children.
    dead = [n for n in res.root.walk() if n.expanded and not n.children]
    assert len(dead) == 1 and dead[0].exhausted and dead[0].id in res.errors[0]
    assert res.root.visits == len(res.root.walk()) - 1
    assert len(p.expansions) == 9 and dead[0].state not in p.expansions


def test_failures_in_a_row_stop_the_search_and_the_best_tree_so_far_answers():
    class Down(Toy):  # the backend goes down after two expansions
        def expand(self, path, n, seed):
            if len(self.expansions) >= 2:
                raise RuntimeError("backend down")
            return super().expand(path, n, seed)

    res = search(Down(), max_iterations=30, max_failures=3)
    assert res.iterations == 2 and len(res.errors) == 3  # stopped after 3 failures in a row
    assert res.stopped == "failures"
    assert res.best.depth >= 1  # the tree built before the failures still answers


def test_a_failing_evaluation_attaches_no_child():
    class BadReward(Toy):
        def evaluate(self, path):
            if len(path[-1]) == 2 and path[-1][-1] == 1:
                raise ValueError("judge failed")
            return super().evaluate(path)

    res = search(BadReward(), max_iterations=3)
    # Each expansion below depth 1 evaluates a (x, 1) child first-or-later and fails whole.
    assert res.errors and all("judge failed" in e for e in res.errors)
    assert res.root.visits == len(res.root.walk()) - 1  # no half-attached expansion


def test_an_expansion_with_no_children_is_a_dead_end():
    class Empty(Toy):
        def expand(self, path, n, seed):
            self.expansions.append(path[-1])
            return []

    p = Empty()
    res = search(p, max_iterations=10)
    assert res.iterations == 1 and res.root.exhausted and res.best is res.root and res.partial
