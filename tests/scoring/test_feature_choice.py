"""The documentation calibrator's signals: at most N, each with its declared sign, chosen while
the cross-validated log-loss falls; a signal that predicts against its meaning is refused."""

from __future__ import annotations

import random

from searchain.scoring.confidence.feature_choice import choose_monotone


def _rows(n: int = 120, seed: int = 3) -> tuple[list[dict[str, float]], list[bool]]:
    rng = random.Random(seed)
    rows, right = [], []
    for _ in range(n):
        ok = rng.random() < 0.5
        rows.append({
            "answer_in_cited": float(ok if rng.random() < 0.85 else not ok),  # strong, + sign
            "rounds": float(rng.randint(1, 3) + (0 if ok else 1)),  # right: fewer rounds
            "citations": float(not ok if rng.random() < 0.8 else ok),  # against its + sign
            "has_answer": 1.0,  # constant: says nothing
        })  # fmt: skip
        right.append(ok)
    return rows, right


def test_the_signals_that_predict_in_their_direction_are_chosen() -> None:
    rows, right = _rows()
    chosen, record = choose_monotone(rows, right)
    assert chosen[0] == "answer_in_cited" and "rounds" in chosen
    assert "citations" not in chosen and "has_answer" not in chosen
    assert "citations" in record["steps"][0]["refused (weight against its direction)"]
    assert len(chosen) <= 3 and record["chosen"] == list(chosen)


def test_at_most_n_and_a_fallback_when_nothing_beats_the_share_right() -> None:
    rows, right = _rows()
    assert choose_monotone(rows, right, most=1)[0] == ("answer_in_cited",)
    noise = [{"answer_in_cited": float(i % 2), "rounds": float(i % 3)} for i in range(60)]
    labels = [i % 5 < 2 for i in range(60)]  # unrelated to either signal
    chosen, record = choose_monotone(noise, labels)
    assert len(chosen) == 1 and "no better than the share right" in record["fallback"]
