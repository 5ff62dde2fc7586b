"""The reader's span search and its output record, without a model.

``best_span`` is checked on hand-made logits and against a brute-force search over all valid
spans (hypothesis); ``ReaderOutput`` round-trips through strict JSON; importing the readers
loads no torch.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchain.readers import ReaderOutput, best_span
from searchain.types import Usage
from span_kit import assert_valid, brute_force

# -- best_span: pure ---------------------------------------------------------------------------


def test_best_span_when_independent_argmaxes_give_end_before_start():
    start = [0.0, 0.0, 0.0, 9.0, 0.0]
    end = [0.0, 8.0, 0.0, 1.0, 2.0]
    allowed = [True] * 5
    assert int(np.argmax(end)) < int(np.argmax(start))  # the naive answer is invalid
    s, e, score = best_span(start, end, allowed, max_len=10)
    assert (s, e) == (3, 4)
    assert score == pytest.approx(11.0)


def test_best_span_respects_max_len():
    start = [9.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    end = [0.0, 0.0, 0.0, 0.0, 0.0, 9.0]
    allowed = [True] * 6
    s, e, score = best_span(start, end, allowed, max_len=3)
    assert e - s + 1 <= 3
    assert score == pytest.approx(brute_force(start, end, allowed, 3)[2])
    assert score == pytest.approx(9.0)  # start at 0 with any end in reach
    assert best_span(start, end, allowed, max_len=6)[:2] == (0, 5)


def test_best_span_skips_disallowed_tokens():
    # the big logits sit on "question" tokens (0-2) and a separator (5)
    start = [50.0, 40.0, 0.0, 0.0, 1.0, 30.0, 0.0, 2.0]
    end = [0.0, 50.0, 40.0, 0.0, 0.0, 30.0, 3.0, 0.0]
    allowed = [False, False, False, True, True, False, True, True]
    s, e, score = best_span(start, end, allowed, max_len=5)
    assert_valid((s, e, score), allowed, 5)
    assert (s, e, score) == (6, 6, 3.0)  # 4..6 would cross the separator at 5


def test_best_span_with_no_valid_span():
    assert best_span([1.0, 2.0], [1.0, 2.0], [False, False], 3) == (-1, -1, -math.inf)
    assert best_span([], [], [], 3) == (-1, -1, -math.inf)


def test_best_span_rejects_bad_arguments():
    with pytest.raises(ValueError):
        best_span([1.0], [1.0, 2.0], [True, True], 2)
    with pytest.raises(ValueError):
        best_span([1.0], [1.0], [True], 0)


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    n=st.integers(min_value=0, max_value=14),
    max_len=st.integers(min_value=1, max_value=16),
)
def test_best_span_matches_brute_force(data, n, max_len):
    floats = st.floats(min_value=-20, max_value=20, allow_nan=False, width=32)
    start = data.draw(st.lists(floats, min_size=n, max_size=n))
    end = data.draw(st.lists(floats, min_size=n, max_size=n))
    allowed = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    got = best_span(start, end, allowed, max_len)
    want = brute_force(start, end, allowed, max_len)
    if want[0] < 0:
        assert got == (-1, -1, -math.inf)
        return
    assert_valid(got, allowed, max_len)
    assert got[2] == pytest.approx(start[got[0]] + end[got[1]])
    assert got[2] == pytest.approx(want[2])


# -- ReaderOutput -----------------------------------------------------------------------------


def test_reader_output_round_trips_through_json():
    out = ReaderOutput("Paris", 3.5, 1.25, passage_id="d#1", confidence_source="dpr reader")
    d = json.loads(json.dumps(out.to_dict()))
    assert d == {
        "answer": "Paris",
        "span_score": 3.5,
        "confidence": 1.25,
        "passage_id": "d#1",
        "usage": None,
        "confidence_source": "dpr reader",
    }
    assert ReaderOutput.from_dict(d) == out
    empty = ReaderOutput("", -math.inf, -math.inf)
    d = json.loads(json.dumps(empty.to_dict(), allow_nan=False))  # strict JSON
    assert ReaderOutput.from_dict(d) == empty
    with_usage = ReaderOutput("x", -1.0, -0.5, usage=Usage(llm_calls=1, prompt_tokens=7))
    assert ReaderOutput.from_dict(with_usage.to_dict()) == with_usage


def test_importing_readers_needs_no_torch():
    code = (
        "import sys, searchain.readers; "
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
