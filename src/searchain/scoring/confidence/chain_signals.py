"""What SearChain's Tree-of-Reasoning says about its answer: the share of the path IR
confirmed, whether the answer came from a confirmed node, whether IR changed a node, the
rounds and the reader's confidence. A question answered in one read (route.py's read route)
planned no chain, so these are absent there, not 0: no step failed to be confirmed."""

from __future__ import annotations

from searchain.scoring.match import contains_answer
from searchain.text import normalize_answer
from searchain.trace_extras import ChainExtras, ChainSettings, NodeExtras
from searchain.types import Node, Trace

LOGPROB_FLOOR = -10.0  # a log-probability below it says no more: the floor of every one here
# IR's own answers that passed the label's checks (node-label rule 3: one that fails is
# "unconfirmed", methods/searchain/node_labels.ir_label); "verified" needs a confident reader.
CONFIRMED = ("corrected", "completed")
IR_SOURCES = ("ir-corrected", "ir-completed")  # IR changed the node, confirmed or not


def answer_in(answer: str, texts: list[str]) -> float:
    if not normalize_answer(answer):
        return 0.0
    return float(any(contains_answer(t, answer) for t in texts))


def _confirmed(node: Node, theta: float | None) -> bool:
    """IR confirmed the node: it corrected or completed it, or a reader above θ agreed.
    Read from the reader's confidence, so traces labelled before "unconfirmed" existed
    (every unchallenged node "verified") give the same signal."""
    extras = NodeExtras.of(node)
    status, confidence = extras.status, extras.reader_confidence
    if status in CONFIRMED:
        return True
    if status != "verified" or confidence is None:
        return False
    return theta is None or confidence > theta


def _changed(node: Node) -> bool:
    """IR changed the node's answer (corrected or completed it), whether or not the label
    confirmed the reader's answer (node-label rule 3 labels one that fails "unconfirmed")."""
    return node.source in IR_SOURCES or NodeExtras.of(node).status in CONFIRMED


# What only a chain says: its reasoning steps and whether the answer came from a checked one.
CHAIN_ONLY = ("path_confirmed_share", "path_unconfirmed_share", "answer_from_confirmed_node")


def searchain_signals(trace: Trace) -> dict[str, float]:
    """What SearChain's Tree-of-Reasoning says about its answer."""
    theta = ChainSettings.of(trace).theta
    on_path = set(ChainExtras.of(trace).path or [])
    path = [n for n in trace.nodes if n.id in on_path]
    confirmed = [n for n in path if _confirmed(n, theta)]
    readers = [
        max(LOGPROB_FLOOR, float(c))
        for n in path
        if (c := NodeExtras.of(n).reader_confidence) is not None and c > -99
    ]
    checked_answers = [n.answer or "" for n in confirmed]
    found = {
        "path_confirmed_share": len(confirmed) / len(path) if path else 0.0,
        "path_unconfirmed_share": 1 - len(confirmed) / len(path) if path else 1.0,
        "answer_from_confirmed_node": answer_in(trace.answer, checked_answers),
        "ir_changed_a_node": float(any(_changed(n) for n in path)),
        "rounds": float(trace.rounds),
        "reader_logprob_mean": sum(readers) / len(readers) if readers else LOGPROB_FLOOR,
    }
    if not path and read_route(trace):
        # One read answered (route.py): no reasoning step was planned, so none failed to be
        # confirmed — the chain's signals are absent, not 0 ("not confirmed" would be false).
        # The reader was asked, on the passage the read leaned on: its log-probability is the
        # reader's on this route (the floor only where it gave no span), not the floor of a
        # path that was never planned.
        found["reader_logprob_mean"] = route_reader_logprob(trace)
        for name in (
            "path_confirmed_share",
            "path_unconfirmed_share",
            "answer_from_confirmed_node",
        ):
            del found[name]
    return found


def route_reader_logprob(trace: Trace) -> float:
    """The log-probability of the reader the read route asked (route.py's reader-disagrees
    signal), at the floor where it gave no span or was not recorded."""
    route = ChainExtras.of(trace).route or {}
    reader = (route.get("signals") or {}).get("reader") or {}
    value = reader.get("confidence") if isinstance(reader, dict) else None
    if not isinstance(value, int | float) or value <= -99:
        return LOGPROB_FLOOR
    return max(LOGPROB_FLOOR, float(value))


def read_route(trace: Trace) -> bool:
    """Whether SearChain answered in one read (route.py's read route: no chain planned)."""
    return ChainExtras.of(trace).read_route
