"""SearChain's analyses (IR effects, knowledge sources, efficiency) and the bootstrap
interval, on hand-checked cases."""

from __future__ import annotations

import pytest

from searchain import citations
from searchain.eval.analyses import (
    efficiency,
    ir_effects,
    ir_misleading_rate,
    knowledge_source_split,
)
from searchain.eval.bootstrap import bootstrap_ci
from searchain.scoring import (
    skc,
)
from searchain.types import Citation, Node, Passage, Trace, Usage

# -- SearChain analyses -------------------------------------------------------------------------


def _trace(final: str, answer: str = "", nodes: list[Node] | None = None, **kw: object) -> Trace:
    return Trace(question="q", method="m", final_content=final, answer=answer,
                 nodes=nodes or [], **kw)  # type: ignore[arg-type]  # fmt: skip


def test_skc() -> None:
    refs = [Passage("a", "x"), Passage("", ""), Passage("c", "z")]
    text = (
        "Drew is Canadian [1]. He was born in Toronto [2]. Buses leave from the terminal [3]. "
        "So the answer is the terminal."
    )
    cites, _ = citations.resolve(text, refs)
    for c in cites:
        if c.passage_id == "":
            c.passage_id = None  # a step without a passage supports nothing
    final = text.replace("the terminal.", "the terminal [1].")  # post-hoc citation added
    post = Citation(1, "a", "So the answer is the terminal [1].", origin="post-hoc")
    trace = _trace(final, citations=[*cites, post])
    assert skc(trace) == 2
    assert skc(trace, post_hoc=True) == 3
    assert skc(_trace("No marks at all.")) == 0


def _node(i: str, source: str, status: str | None = None) -> Node:
    return Node(id=i, query=i, answer="a", source=source, meta={"status": status} if status else {})


def test_knowledge_source_split() -> None:
    t1 = _trace("", nodes=[
        Node(id="q", query="q", source="question"),
        _node("r1.1", "llm", "verified"),
        _node("r1.2", "ir-corrected", "corrected"),
        _node("r1.3", "llm", "unverified"),  # abandoned after the correction
        _node("r2.3", "llm", "verified"),
    ], meta={"path": ["r1.1", "r1.2", "r2.3"]})  # fmt: skip
    t2 = _trace(
        "", nodes=[_node("r1.1", "ir-completed", "completed"), _node("r1.2", "llm", "duplicate")]
    )
    split = knowledge_source_split([t1, t2, None])
    assert split["nodes"] == 4  # checked: verified x2, corrected, completed
    assert split["llm"] == pytest.approx(2 / 4)
    assert split["ir-corrected"] == pytest.approx(1 / 4)
    assert split["ir-completed"] == pytest.approx(1 / 4)
    everything = knowledge_source_split([t1, t2], scope="all")
    assert everything["nodes"] == 6 and everything["llm"] == pytest.approx(4 / 6)
    path = knowledge_source_split([t1], scope="path")
    assert path["nodes"] == 3 and path["ir-corrected"] == pytest.approx(1 / 3)
    assert knowledge_source_split([])["nodes"] == 0


def test_ir_effects_and_misleading_rate() -> None:
    golds = [["Paris"], ["1844"], ["Toronto"], ["Kabul"], ["Lima"]]

    def said(answer: str, **kw: object) -> Trace:  # correct = cover-EM of the final answer
        return _trace(f"The chain names Paris and Toronto. {answer}", answer, **kw)

    without = [said("Paris"), said("1844"), said("Ottawa"), said("Kabul"), None]
    corrected = [_node("n", "ir-corrected", "corrected")]
    with_ir = [
        said("Paris"),  # right both ways
        said("18445", nodes=corrected),  # misled: right without IR, wrong with it
        said("Toronto", nodes=corrected),  # helped
        said("Kabul"),
        said("Lima"),
    ]
    out = ir_effects(with_ir, without, golds)
    assert out["correct_without_ir"] == 3 and out["misled"] == 1
    assert out["misleading_rate"] == pytest.approx(1 / 3)
    assert out["accuracy_without_ir"] == pytest.approx(3 / 5)
    assert out["accuracy_with_ir"] == pytest.approx(4 / 5)
    assert out["ir_helped"] == 2
    assert out["accuracy_without_ir_on_ir_helped"] == pytest.approx(1 / 2)
    assert out["accuracy_with_ir_on_ir_helped"] == pytest.approx(1 / 2)
    assert ir_misleading_rate(with_ir, without, golds) == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        ir_misleading_rate(with_ir[:2], without, golds)


def test_efficiency() -> None:
    a = _trace(
        "x",
        rounds=1,
        wall_seconds=2.0,
        usage=Usage(llm_calls=2, prompt_tokens=100, completion_tokens=10, llm_seconds=1.5),
    )
    b = _trace(
        "y",
        rounds=3,
        wall_seconds=4.0,
        usage=Usage(llm_calls=4, prompt_tokens=300, completion_tokens=30, llm_seconds=2.5),
    )
    out = efficiency([a, b, None])
    assert out == {
        "questions": 2.0,
        "prompt_tokens": 200.0,
        "completion_tokens": 20.0,
        "rounds": 2.0,
        "seconds": 3.0,
        "llm_calls": 3.0,
        "llm_seconds": 2.0,
    }


# -- bootstrap ------------------------------------------------------------------------------------


def test_bootstrap_ci() -> None:
    values = [1.0] * 30 + [0.0] * 70
    mean, lo, hi = bootstrap_ci(values, seed=0)
    assert mean == pytest.approx(0.3)
    assert lo < mean < hi
    assert 0.18 < lo < 0.26 and 0.34 < hi < 0.42  # ~ 0.3 ± 1.96·sqrt(0.21/100)
    assert bootstrap_ci(values, seed=0) == (mean, lo, hi)  # deterministic
    assert bootstrap_ci(values, seed=1) != (mean, lo, hi)
    assert bootstrap_ci([0.5]) == (0.5, 0.5, 0.5)
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0, 1.0)
    narrow = bootstrap_ci(values, alpha=0.5)
    assert lo < narrow[1] <= narrow[2] < hi
    with pytest.raises(ValueError):
        bootstrap_ci([])
