"""Whether the question was answered, not only whether the answer is grounded
(scoring/confidence/free_signals.py): the answer's type against the question's, an answer
taken from an earlier hop of the chain (the bridge), a chain that agrees with the first read.
Each is absent where it does not apply; on a committed real run the earlier-hop answers are
right less often than the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchain.eval.runner import read_results
from searchain.scoring.confidence import signals
from searchain.scoring.confidence.free_signals import answer_type_matches, free_signals
from searchain.types import Node, Trace

ROOT = Path(__file__).resolve().parents[2]
POOL = ROOT / "results" / "calibration" / "qwen2.5-coder-1.5b" / "hotpotqa-calibration-default"


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        ("When was the Debian project founded?", "16 August 1993", 1.0),
        ("In which year was Etch released?", "Etch", 0.0),
        ("How many days does a salvaging wait last?", "21 days", 1.0),
        ("How many architectures did Etch support?", "eleven", 1.0),
        ("How many maintainers does it have?", "Debian", 0.0),
        ("Is ufw a firewall front-end?", "yes", 1.0),
        ("Were Scott Derrickson and Ed Wood of the same nationality?", "American", 0.0),
        ("Who wrote the Debian Social Contract?", "Bruce Perens", 1.0),
        ("Who wrote the Debian Social Contract?", "1997", 0.0),
        ("Is Gasherbrum II or Nuptse closer to Everest?", "Nuptse", None),  # a choice
        ("Which mount option stops access-time updates?", "noatime", None),  # names no type
        ("When was it founded?", "", None),  # no answer
    ],
)
def test_the_answer_has_the_type_the_question_asks_for(
    question: str, answer: str, expected: float | None
) -> None:
    assert answer_type_matches(question, answer) == expected


def chain(answer: str, route: dict | None = None) -> Trace:
    bridge = Node("r1.1", "Who directed Big Stone Gap?", "Adriana Trigiani")
    last = Node("r1.2", "Where is Adriana Trigiani based?", "Greenwich Village")
    trace = Trace(question="q", method="searchain", answer=answer, nodes=[bridge, last])
    trace.meta.update(chains=[], path=["r1.1", "r1.2"], **({"route": route} if route else {}))
    return trace


def test_an_answer_from_an_earlier_hop_is_the_bridge_not_the_answer() -> None:
    assert free_signals(chain("Adriana Trigiani"))["answer_from_earlier_hop"] == 1.0
    assert free_signals(chain("Greenwich Village, New York"))["answer_from_earlier_hop"] == 0.0
    assert free_signals(chain("Manhattan"))["answer_from_earlier_hop"] == 0.0  # neither hop's
    read = Trace(question="q", method="retrieve-read", answer="Greenwich Village")
    assert "answer_from_earlier_hop" not in free_signals(read)  # no chain, nothing to say


def test_a_chain_after_a_first_read_agrees_with_it_or_not() -> None:
    def taken(way: str, first: str) -> dict:
        return {"taken": way, "first_read": {"answer": first}}

    agree = chain("Greenwich Village", taken("chain", "Greenwich Village, New York City"))
    differ = chain("Greenwich Village", taken("chain", "Adriana Trigiani"))
    assert free_signals(agree)["chain_agrees_with_first_read"] == 1.0
    assert free_signals(differ)["chain_agrees_with_first_read"] == 0.0
    for absent in (chain("x"), chain("x", taken("read", "x")), chain("x", taken("chain", ""))):
        assert "chain_agrees_with_first_read" not in free_signals(absent)
    assert signals(agree)["chain_agrees_with_first_read"] == 1.0  # every trace's signals


def test_on_a_recorded_run_answers_from_an_earlier_hop_are_right_less_often() -> None:
    right = {0.0: [], 1.0: []}
    for r in read_results(POOL):
        if r["method"] == "searchain" and r["status"] == "ok" and r.get("trace"):
            found = free_signals(Trace.from_dict(r["trace"]))
            if "answer_from_earlier_hop" in found:
                right[found["answer_from_earlier_hop"]].append(r["metrics"]["cover_em"] >= 1)
    earlier, rest = right[1.0], right[0.0]
    assert len(earlier) >= 20 and len(rest) >= 100
    assert sum(earlier) / len(earlier) < 0.7 * sum(rest) / len(rest)  # 6/27 against 88/213
