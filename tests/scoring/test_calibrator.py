"""The one calibrator type reads every calibrator file: the shipped ones dump back to their
own bytes, a file from before the newer fields says what their absence means, and a signal
that is not a number counts as missing, never as certainty."""

from __future__ import annotations

import json
import math
from importlib import resources

import pytest

from confidence_kit import SHIPPED_MODEL
from searchain.scoring.confidence.calibrator import Calibrator
from searchain.scoring.confidence.configuration import configuration
from searchain.types import Trace

SHIPPED = sorted(
    f.name
    for f in resources.files("searchain.data").iterdir()
    if f.name.startswith("calibrator-") and f.name.endswith(".json")
)
MAP = {
    "features": ["has_answer", "answer_in_cited"],
    "weights": [1.0, 2.0],
    "bias": -0.5,
    "means": [0.9, 0.5],
    "scales": [0.3, 0.5],
}


def test_the_package_ships_its_twelve_calibrators() -> None:
    # eleven of a method's own configuration, and the documentation family (…--docs.json)
    assert len(SHIPPED) == 12
    assert [n for n in SHIPPED if n.endswith("--docs.json")] == [
        "calibrator-searchain--qwen2.5-coder-1.5b--docs.json"
    ]


@pytest.mark.parametrize("name", SHIPPED)
def test_a_shipped_calibrator_loads_and_dumps_to_its_own_bytes(name: str) -> None:
    raw = resources.files("searchain.data").joinpath(name).read_text("utf-8")
    calibrator = Calibrator.from_dict(json.loads(raw))
    # the scripts that stamped them (bench/calibrator_identity.py) wrote UTF-8 as it is
    assert json.dumps(calibrator.to_dict(), indent=1, ensure_ascii=False) + "\n" == raw
    assert f"calibrator-{calibrator.name}.json" == name  # a family's name says its family
    assert calibrator.name in (
        f"{calibrator.method}--{calibrator.model}",
        f"{calibrator.method}--{calibrator.model}--docs",
    )
    assert calibrator.model == SHIPPED_MODEL and calibrator.fit_configuration is not None
    assert set(calibrator.provenance()) == {
        "name",
        "version",
        "method",
        "model",
        "fit_on",
        "probability",
    }
    assert len(calibrator.certification_items) == calibrator.certificate(0.9, 0.1).items


def test_a_file_fit_before_the_newer_fields_reads_as_it_did() -> None:
    """Only the map and its name: no version, penalty, base-rate check, configuration or
    certification — shown as a probability, mapped by its name alone, never certified."""
    old = Calibrator.from_dict({**MAP, "name": "retrieve-read--m", "method": "retrieve-read"})
    assert old.to_dict() == {**MAP, "name": "retrieve-read--m", "method": "retrieve-read"}
    assert old.shown_as_probability and old.why_not_probability() == ""
    identity = configuration(Trace(question="q", method="retrieve-read", answer="a"), "m")
    assert old.applies_to(identity) == (True, "")
    assert old.provenance() == {"name": "retrieve-read--m", "method": "retrieve-read"}
    assert "holds no certification items" in old.certificate(0.3, 0.1).reason
    assert old.lowest_certificate is None
    assert old.explain({"has_answer": 1.0}) == (
        "answer_in_cited not measured: taken at the calibration items' mean"
    )


def test_a_calibrator_fit_before_the_wider_identity_maps_nothing_and_says_why() -> None:
    trace = Trace(question="q", method="searchain", answer="a", meta={"chains": []})
    identity = configuration(trace, SHIPPED_MODEL)
    fit = {k: v for k, v in identity.items() if k not in ("model_file", "yesno_check")}
    old = Calibrator.from_dict({**MAP, "method": "searchain", "certification": {}})
    assert old.applies_to(identity) == (True, "")  # no configuration: by its name alone
    narrower = Calibrator.from_dict({**MAP, "certification": {"configuration": fit}})
    maps, why = narrower.applies_to(identity)
    assert not maps and "yes/no check span, fit on not recorded" in why


def test_one_that_does_not_beat_the_base_rate_says_so() -> None:
    fit_on = {"items": 40, "right": 10}
    chosen = {"cv_log_loss": {"3": 0.6}, "base_rate_log_loss": 0.56}
    calibrator = Calibrator.from_dict(
        {**MAP, "l2": 3.0, "probability": False, "fit_on": fit_on, "l2_chosen_by": chosen}
    )
    assert not calibrator.shown_as_probability
    assert "(log-loss 0.6 against 0.56)" in calibrator.why_not_probability()
    assert calibrator.why_not_probability().endswith("calibration items (25%)")
    assert calibrator.to_dict()["probability"] is False


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_signal_that_is_no_number_is_missing_not_certainty(value: float) -> None:
    calibrator = Calibrator.from_dict(MAP)
    missing = calibrator.probability({"has_answer": 1.0})
    assert calibrator.probability({"has_answer": 1.0, "answer_in_cited": value}) == missing
    assert 0 < missing < 1
