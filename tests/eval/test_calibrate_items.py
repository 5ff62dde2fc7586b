"""Calibration items from a benchmark's own records (``eval.calibrate.items_of`` +
``calibrator_of``: the documentation calibrator's path, bench/docs_calibrator.py) fit the same
calibrator as ``searchain calibrate`` does from an eval run, on the same recorded answers —
one fitter, whichever way the answers arrive. On a committed real run of the defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchain.eval.calibrate import calibrator_of, fit_calibrator, items_of
from searchain.eval.rescore import run_model
from searchain.eval.run_stamps import run_config, stamped
from searchain.eval.runner import read_results
from searchain.types import Trace

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "results" / "calibration" / "qwen2.5-coder-1.5b" / "hotpotqa-calibration-default"


def recorded_answers() -> list[tuple[str, Trace, bool]]:
    config = run_config(RUN)
    return [
        (str(r["id"]), stamped(Trace.from_dict(r["trace"]), config), r["metrics"]["cover_em"] >= 1)
        for r in read_results(RUN)
        if r["method"] == "searchain" and r["status"] == "ok" and r.get("trace")
    ]


def test_items_from_records_fit_what_searchain_calibrate_fits() -> None:
    expected = fit_calibrator([RUN], "searchain").to_dict()
    items = items_of(recorded_answers(), run_model(RUN))
    source = {"runs": [str(RUN)], "datasets": expected["fit_on"]["datasets"]}
    got = calibrator_of(items, "searchain", source | {"excluded_items_of": []}).to_dict()
    del got["fit_on"]["fitted"], expected["fit_on"]["fitted"]  # the day each was fit
    assert got == expected  # weights, features chosen, penalty, certification: every key
    assert len(got["weights"]) == len(got["features"]) >= 4


def test_named_features_are_the_ones_read_and_too_few_answers_are_refused() -> None:
    answers = recorded_answers()
    items = items_of(answers, run_model(RUN))
    named = ("answer_in_references", "answer_from_confirmed_node")
    got = calibrator_of(items, "searchain", {"runs": ["x"]}, features=named).to_dict()
    assert tuple(got["features"]) == named and "features_chosen_by" not in got
    few = items_of(answers[:12], run_model(RUN))
    with pytest.raises(ValueError, match=r"12 finished answers.*at least 20"):
        calibrator_of(few, "searchain", {"runs": ["x"]})
