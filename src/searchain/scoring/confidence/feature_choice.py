"""A few signals, each in the direction it means (issue 61's documentation calibrator).

A calibrator fit on a hundred-odd answers cannot carry nine signals: it learns the items, and a
weight against a signal's meaning (more of the path confirmed → less likely right) is noise fit
as if it were knowledge. So the signals are chosen on the fit items alone by a rule fixed
before they are read: forward selection by cross-validated log-loss, at most ``most`` signals,
each kept only if its fitted weight has the sign declared for it here (the map is then monotone
in every signal it reads) and only while the loss falls; an empty choice means no signal beat
the share right, and the calibrator falls back to the best single one, shown as no probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from searchain.scoring.confidence.calibration import choose_l2, fit_logistic, share_right_log_loss

# +1: more of it, more likely right; -1: less. Declared from what each signal measures
# (scoring/confidence), before any documentation calibration answer was read.
DIRECTIONS: dict[str, int] = {
    "has_answer": +1,
    "answer_in_references": +1,
    "answer_in_cited": +1,
    "answer_in_question_passages": +1,
    "answer_from_confirmed_node": +1,
    "path_confirmed_share": +1,
    "path_unconfirmed_share": -1,
    "citations": +1,
    "answer_passages": +1,
    "reader_logprob_mean": +1,
    "chain_agrees_with_first_read": +1,
    "answer_type_matches": +1,
    "answer_from_earlier_hop": -1,
    "node_answer_dropped": -1,
    "rounds": -1,
}
MOST = 3


def choose_monotone(
    rows: Sequence[dict[str, float]],
    right: Sequence[bool],
    directions: dict[str, int] = DIRECTIONS,
    most: int = MOST,
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The signals chosen (in the order taken) and how: each step's candidates' losses, the
    share-right bar, and the candidates refused for a weight against their direction."""
    # a signal every fit answer has, and not the same for all (a constant says nothing)
    had = [s for s in directions if rows and all(s in r for r in rows)]
    candidates = [s for s in had if len({r[s] for r in rows}) > 1]
    bar = share_right_log_loss(right)
    chosen: tuple[str, ...] = ()
    best = bar
    steps: list[dict[str, Any]] = []
    while len(chosen) < most:
        losses, refused = _step(rows, right, chosen, candidates, directions)
        steps.append({"losses": losses, "refused (weight against its direction)": refused})
        if not losses:
            break
        pick = min(losses, key=lambda s: (losses[s], s))
        if losses[pick] >= best:
            break
        chosen, best = (*chosen, pick), losses[pick]
    record = {
        "rule": f"forward selection, at most {most} signals, each with its declared sign, "
        "while the cross-validated log-loss on the fit items falls",
        "share_right_log_loss": round(bar, 4),
        "chosen": list(chosen),
        "steps": steps,
    }
    if not chosen and steps and steps[0]["losses"]:  # nothing beats the share right
        first = steps[0]["losses"]
        chosen = (min(first, key=lambda s: (first[s], s)),)
        record["fallback"] = f"{chosen[0]}: the best single signal, no better than the share right"
        record["chosen"] = list(chosen)
    return chosen, record


def _step(
    rows: Sequence[dict[str, float]],
    right: Sequence[bool],
    chosen: tuple[str, ...],
    candidates: list[str],
    directions: dict[str, int],
) -> tuple[dict[str, float], list[str]]:
    losses: dict[str, float] = {}
    refused: list[str] = []
    for signal in candidates:
        if signal in chosen:
            continue
        features = (*chosen, signal)
        l2, by_l2 = choose_l2(rows, right, features)
        weights = fit_logistic(rows, right, features, l2=l2)["weights"]
        if any(w * directions[f] < 0 for f, w in zip(features, weights, strict=True)):
            refused.append(signal)
            continue
        losses[signal] = round(by_l2[l2], 4)
    return losses, refused
