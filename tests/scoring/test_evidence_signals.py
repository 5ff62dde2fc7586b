"""SearChain's evidence step gives the confidence free signals (where the answer is stated
among the passages it read), and a calibrator reads them only if they lower the
cross-validated log-loss on its fit items."""

from __future__ import annotations

import numpy as np

from searchain.eval.calibrate import CalibrationItems, with_evidence_signals
from searchain.scoring.confidence import signals
from searchain.scoring.confidence.evidence_signals import evidence_signals
from searchain.types import Passage, Trace


def _trace(answer: str, read: list[tuple[str, str, list[str]]], dropped: list[str]) -> Trace:
    trace = Trace(question="q", method="searchain", answer=answer)
    trace.references = [Passage(id=i, text=text) for i, text, _ in read]
    trace.meta.update(
        path=[],
        evidence={"passages": [{"id": i, "roles": roles} for i, _, roles in read]},
        dropped_node_answers=dropped,
    )
    return trace


NODE = ("n", "Animorphs was written by K. A. Applegate.", ["corrects r1.1"])
ASKED = ("q", "K. A. Applegate wrote a science fantasy series.", ["question rank 1"])
OTHER = ("o", "A science fantasy series for young adults.", ["question rank 2"])


def test_where_the_answer_is_stated_among_the_passages_read() -> None:
    both = evidence_signals(_trace("K. A. Applegate", [ASKED, NODE, OTHER], []))
    assert both == {
        "answer_in_question_passages": 1.0,
        "answer_passages": 2.0,
        "node_answer_dropped": 0.0,
    }
    node_only = evidence_signals(_trace("K. A. Applegate", [NODE, OTHER], ["r2.1"]))
    assert node_only == {
        "answer_in_question_passages": 0.0,
        "answer_passages": 1.0,
        "node_answer_dropped": 1.0,
    }
    nothing = evidence_signals(_trace("", [ASKED], []))
    assert nothing["answer_passages"] == 0.0 and nothing["answer_in_question_passages"] == 0.0
    assert evidence_signals(Trace(question="q", method="searchain", answer="x")) == {}
    assert "answer_passages" in signals(_trace("K. A. Applegate", [ASKED], []))


def _items(signal_predicts: bool, n: int = 60) -> CalibrationItems:
    rng = np.random.default_rng(3)
    items = CalibrationItems()
    for i in range(n):
        right = bool(rng.random() < 0.4)
        told = float(right) if signal_predicts else float(rng.random() < 0.5)
        row = {"has_answer": 1.0, "answer_in_references": float(rng.random() < 0.5)}
        row |= {"answer_in_question_passages": told, "answer_passages": told,
                "node_answer_dropped": float(rng.random() < 0.3)}  # fmt: skip
        items.ids.append(f"q{i}")
        items.rows.append(row)
        items.right.append(right)
    return items


def test_the_signals_are_read_only_where_they_lower_the_cv_log_loss() -> None:
    base = ("has_answer", "answer_in_references")
    features, chosen = with_evidence_signals(_items(signal_predicts=True), base)
    assert chosen["kept"] and features[: len(base)] == base and "answer_passages" in features
    assert chosen["cv_log_loss_with"] < chosen["cv_log_loss_without"]
    features, chosen = with_evidence_signals(_items(signal_predicts=False), base)
    assert not chosen["kept"] and features == base
    assert chosen["cv_log_loss_with"] >= chosen["cv_log_loss_without"]
    no_evidence = CalibrationItems(ids=["a"], rows=[{"has_answer": 1.0}], right=[True])
    assert with_evidence_signals(no_evidence, base) == (base, {})
