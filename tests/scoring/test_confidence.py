"""A confidence on every answer (issue 41): signals read from the trace, a calibrator that
maps them to a probability (or an uncalibrated score that says so), abstention that keeps the
guess, a risk-controlling threshold, and `searchain calibrate`."""

from __future__ import annotations

import importlib
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import searchain
from confidence_kit import shipped_meta
from searchain.cli import app
from searchain.scoring.confidence import abstention_text, assess, model_key, signals
from searchain.scoring.confidence.calibration import (
    L2_GRID,
    binomial_cdf,
    fit_logistic,
    risk_controlling_threshold,
)
from searchain.scoring.confidence.calibrator import (
    Calibrator,
    forget_calibrators,
    shipped_calibrator,
)
from searchain.types import Citation, Node, Passage, Trace

QUESTION = "Who portrayed Corliss Archer in Kiss and Tell?"


def calibrated_configuration(trace: Trace, variant: str = "searchain") -> Trace:
    """``trace`` made with the configuration of the shipped calibrator ``variant``."""
    trace.meta.update(shipped_meta(variant))
    return trace


def _trace(answer: str = "Shirley Temple", cited: bool = True) -> Trace:
    passage = Passage("p1", "Kiss and Tell is a film starring Shirley Temple.", "Kiss and Tell")
    trace = Trace(question=QUESTION, method="retrieve-read", answer=answer, references=[passage])
    if cited:
        trace.citations = [Citation(mark=1, passage_id="p1")]
    return trace


def test_model_names_become_one_key() -> None:
    assert model_key("qwen2.5-coder-1.5b-instruct.gguf") == "qwen2.5-coder-1.5b"
    assert model_key("gemma-3-270m-q4_k_m") == "gemma-3-270m"
    assert model_key("/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf") == "qwen2.5-coder-0.5b"
    assert model_key(None) == "unknown"


def test_signals_say_whether_the_answer_is_in_what_was_read_and_cited() -> None:
    found = signals(_trace())
    assert found["answer_in_references"] == found["answer_in_cited"] == 1.0
    missing = signals(_trace("Judy Garland", cited=False))
    assert missing["answer_in_references"] == missing["answer_in_cited"] == 0.0


def test_searchain_signals_read_confirmation_from_the_reader_not_the_old_label() -> None:
    below = Node(
        "r1.1", "q", "Yes", "llm", meta={"status": "verified", "reader": {"confidence": -99.0}}
    )
    fixed = Node("r1.2", "q2", "Texas", "ir-corrected", meta={"status": "corrected"})
    trace = Trace(question="q", method="searchain", answer="Texas", nodes=[below, fixed])
    trace.meta.update(theta=-1.0, path=["r1.1", "r1.2"])
    found = signals(trace)
    assert found["path_confirmed_share"] == 0.5  # the old "verified" below θ is not confirmed
    assert found["answer_from_confirmed_node"] == 1.0 and found["ir_changed_a_node"] == 1.0


def test_without_a_calibrator_the_value_is_a_score_that_says_so() -> None:
    conf = assess(_trace("Judy Garland", cited=False), "gemma-3-270m-q4_k_m")
    assert conf.calibrated is False and conf.calibrator is None
    assert conf.value == pytest.approx(1 / 3)  # has an answer; not in the passages, not cited
    assert "uncalibrated score" in conf.note and "gemma-3-270m" in conf.note
    assert "the answer is not in the passages found" in conf.lowered_by
    # what the score is made of: the evidence that holds, and the evidence that does not
    assert conf.raised_by == ["there is an answer"]
    held = assess(_trace(), "gemma-3-270m-q4_k_m")
    assert held.value == 1.0 and held.lowered_by == []
    assert held.raised_by == [
        "there is an answer",
        "the answer is in the passages found",
        "the answer is in the passages cited",
    ]


def test_a_calibrator_maps_known_signals_to_known_probabilities() -> None:
    calibrator = {
        "features": ["answer_in_cited", "rounds"],
        "weights": [2.0, -1.0],
        "bias": 0.5,
        "means": [0.5, 2.0],
        "scales": [0.5, 1.0],
    }
    z = 0.5 + 2.0 * (1 - 0.5) / 0.5 - 1.0 * (3 - 2.0) / 1.0
    mapped = Calibrator.from_dict(calibrator)
    assert mapped.probability({"answer_in_cited": 1.0, "rounds": 3.0}) == pytest.approx(
        1 / (1 + math.exp(-z))
    )
    named = Calibrator.from_dict({**calibrator, "name": "x", "version": 1})
    conf = assess(_trace(), "m", calibrator=named)
    assert conf.calibrated and conf.calibrator == {"name": "x", "version": 1}


def test_the_shipped_calibrator_loads_with_its_provenance() -> None:
    shipped = shipped_calibrator("searchain", "qwen2.5-coder-1.5b")
    assert shipped is not None, "src/searchain/data/calibrator-searchain--qwen2.5-coder-1.5b.json"
    fit = shipped.fit_on
    assert fit is not None
    assert fit["items"] >= 20 and 0 < fit["right"] < fit["items"]
    # Calibrated on items never reported: the reported runs' items were excluded.
    assert any("hotpotqa-100" in r for r in fit["excluded_items_of"])
    # fit on the split rule's fit items; the others certify (issue 49)
    assert len(shipped.calibration or []) == fit["fit_items"] == len(shipped.fit_items or [])
    assert len(shipped.certification_items) == fit["items"] - fit["fit_items"]
    probability = shipped.probability({name: 1.0 for name in shipped.features})
    assert 0 < probability < 1


@pytest.mark.parametrize(
    ("checks", "variant"),
    [
        ({"likelihood": {"answer_logprob": -0.4}}, "searchain+likelihood"),
        ({"consistency": {"answer_agreement": 0.8}}, "searchain+consistency"),
        (
            {"consistency": {"answer_agreement": 0.8}, "likelihood": {"answer_logprob": -0.4}},
            "searchain+consistency+likelihood",
        ),
    ],
)
def test_an_answer_with_checks_is_mapped_by_the_shipped_calibrator_fit_with_them(
    checks: dict[str, dict[str, float]], variant: str
) -> None:
    trace = calibrated_configuration(_trace(), variant)
    trace.method = "searchain"
    trace.meta["confidence_checks"] = checks
    conf = assess(trace, "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    shipped = shipped_calibrator(variant, "qwen2.5-coder-1.5b")
    assert shipped is not None and conf.calibrator["name"] == f"{variant}--qwen2.5-coder-1.5b"
    used = {s for found in checks.values() for s in found}
    assert used <= set(shipped.features) and "shown, not used" not in conf.note
    assert conf.value == shipped.probability(conf.signals)
    # the checks' signals move the probability the way they were fit to
    worse = {
        k: {s: (0.0 if s == "answer_agreement" else -8.0) for s in v} for k, v in checks.items()
    }
    trace.meta["confidence_checks"] = worse
    assert assess(trace, "qwen2.5-coder-1.5b").value < conf.value


def test_a_threshold_abstains_and_keeps_the_guess() -> None:
    trace = _trace("Judy Garland", cited=False)
    trace.confidence = assess(trace, "gemma-3-270m", abstain_below=0.5)
    assert trace.confidence.abstained and trace.answer == "Judy Garland"
    said = abstention_text(trace)
    assert said.startswith("Not answered: confidence 0.33 (uncalibrated score) is below 0.50")
    assert said.endswith("Best unverified guess: Judy Garland")
    assert "the passages found do not contain" not in said  # one wording, from lowered_by
    assert "the answer is not in the passages found" in said


def test_the_risk_threshold_is_its_formula_on_a_small_set() -> None:
    # 12 items, most confident first: 8 right, then a wrong one, then right, wrong, wrong.
    conf = [0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45, 0.4]
    right = [True] * 8 + [False, True, False, False]
    found = risk_controlling_threshold(conf, right, max_risk=0.3, delta=0.1)
    # (1-0.3)^i <= 0.1 first at i = 7: the sequence starts there. At i=7, 8: 0 errors,
    # p = 0.7^i <= 0.1; at i = 9: P(Bin(9, .3) <= 1) = 0.196 > 0.1 stops it.
    assert 0.7**6 > 0.1 >= 0.7**7
    assert binomial_cdf(0, 8, 0.3) <= 0.1 < binomial_cdf(1, 9, 0.3)
    assert (found.threshold, found.answered, found.errors) == (0.6, 8, 0)
    assert "at most 0.3 with probability at least 0.9" in found.terms()
    none = risk_controlling_threshold(conf[:5], right[:5], max_risk=0.3, delta=0.1)
    assert none.threshold is None and "every answer would be withheld" in none.terms()


def test_fit_logistic_ranks_by_the_signal_that_predicts() -> None:
    rows = [{"a": float(i % 2), "b": float(i % 3)} for i in range(60)]
    right = [r["a"] == 1.0 for r in rows]
    fitted = fit_logistic(rows, right, ["a", "b"], l2=0.1)
    mapped = Calibrator.from_dict(fitted)
    assert mapped.probability({"a": 1.0, "b": 0.0}) > 0.9
    assert mapped.probability({"a": 0.0, "b": 0.0}) < 0.1


def _run_dir(path: Path, n: int = 30) -> Path:
    path.mkdir(parents=True)
    manifest = {"config": {"dataset": "fake"}, "environment": {"model": {"name": "tiny.gguf"}}}
    (path / "manifest.json").write_text(json.dumps(manifest))
    lines = []
    for i in range(n):
        ok = i % 3 != 0
        trace = _trace("Shirley Temple" if ok else "Judy Garland", cited=ok).to_dict()
        lines.append(
            {
                "id": f"q{i}",
                "method": "retrieve-read",
                "status": "ok",
                "metrics": {"cover_em": float(ok)},
                "trace": trace,
            }
        )
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_searchain_calibrate_fits_from_a_run_and_every_answer_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    forget_calibrators()
    run = _run_dir(tmp_path / "run")
    reported = _run_dir(tmp_path / "reported", n=3)  # q0..q2 are reported: never calibrated on
    got = CliRunner().invoke(
        app,
        ["calibrate", str(run), "--method", "retrieve-read", "--exclude-items-of", str(reported)],
    )
    assert got.exit_code == 0, got.output
    path = tmp_path / "cache" / "calibrators" / "calibrator-retrieve-read--tiny.json"
    fitted = json.loads(path.read_text())
    assert fitted["fit_on"]["items"] == 27 and fitted["fit_on"]["right"] == 18
    # the penalty cross-validation chose, and the bar it was held against, said and kept
    assert fitted["l2"] in L2_GRID
    assert f"penalty {fitted['l2']:g} by cross-validation" in got.output
    assert "the base rate alone scores" in " ".join(got.output.split())
    # what each signal alone says on the fit items: the citation separates them exactly here
    aurocs = fitted["signal_auroc"]
    assert aurocs["answer_in_cited"] == 1.0 and aurocs["has_answer"] == 0.5
    assert "AUROC (0.5 says nothing): answer_in_cited 1.00" in " ".join(got.output.split())
    conf = assess(_trace(), "tiny.gguf")
    assert conf.calibrated and conf.value > 0.5 and conf.calibrator["name"] == "retrieve-read--tiny"
    forget_calibrators()


def test_the_cli_says_a_withheld_answer_in_words() -> None:
    from rich.console import Console

    ask_cli = importlib.import_module("searchain.cli.ask")

    trace = _trace("Judy Garland", cited=False)
    trace.confidence = assess(trace, "gemma-3-270m", abstain_below=0.5)
    console = Console(width=200, record=True)
    original, ask_cli.console = ask_cli.console, console
    try:
        ask_cli.show_trace(trace)
    finally:
        ask_cli.console = original
    text = console.export_text()
    assert "Not answered: confidence 0.33 (uncalibrated score) is below 0.50" in text
    assert "Best unverified guess: Judy Garland" in text
    # no bare number for a score that is not a probability: what holds and fails lead
    assert "Confidence: not a probability (uncalibrated)" in text
    assert "0.33 (uncalibrated score, low)" not in text
    assert "what fails: the answer is not in the passages found" in text


@pytest.mark.slow
def test_every_surface_carries_the_confidence() -> None:
    """The CLI prints it beside the answer, --json and the Python API carry it (with the
    threshold asked for, the guess kept), and --max-risk without a calibrator is refused."""
    runner = CliRunner()
    shown = runner.invoke(
        app, ["ask", QUESTION, "--method", "retrieve-read"], env={"COLUMNS": "200"}
    )
    assert shown.exit_code == 0, shown.output
    assert "Confidence:" in shown.output and "uncalibrated score" in shown.output
    as_json = runner.invoke(app, ["ask", QUESTION, "--method", "retrieve-read", "--json"])
    conf = json.loads(as_json.stdout)["confidence"]
    assert conf["calibrated"] is False and "uncalibrated score" in conf["note"]
    trace = searchain.ask(QUESTION, method="retrieve-read", abstain_below=0.99)
    assert trace.confidence is not None and trace.confidence.threshold == 0.99
    assert trace.confidence.abstained == (trace.confidence.value < 0.99) and trace.answer
    refused = runner.invoke(app, ["ask", QUESTION, "--max-risk", "0.2"])
    assert refused.exit_code == 1
    assert "(--max-risk, max_risk) needs a calibrated confidence" in refused.output


def test_calibrate_says_which_signals_its_calibrator_does_not_read() -> None:
    from searchain.cli.calibrate import signals_said

    said = signals_said({"rounds": 0.38, "maxprob": 0.61, "has_answer": None}, {"rounds"})
    assert said == "rounds 0.38, maxprob 0.61 (not read)"


def test_an_answer_of_one_read_is_not_said_to_have_unconfirmed_steps() -> None:
    """SearChain's read route plans no chain: no reasoning step failed to be confirmed, so the
    chain's signals are absent (not 0) and the reasons do not claim one did."""
    trace = _trace()
    trace.method = "searchain"
    trace.meta.update(path=[], route={"taken": "read", "rule": "read-first:uncited"})
    found = signals(trace)
    assert "path_confirmed_share" not in found and "answer_from_confirmed_node" not in found
    conf = assess(trace, "qwen2.5-coder-1.5b")
    assert not any("reasoning steps" in r or "confirmed" in r for r in conf.lowered_by)
    trace.meta["route"] = {"taken": "chain", "rule": "read-first:uncited"}  # a chain: counted
    assert signals(trace)["path_unconfirmed_share"] == 1.0


def test_an_answer_of_one_read_carries_its_readers_log_probability() -> None:
    """The read route asked the reader on the passage it leaned on: that log-probability is
    the reader's signal there, not the floor of a chain that was never planned; the floor
    stays only where the reader gave no span."""
    trace = _trace()
    trace.method = "searchain"
    reader = {"answer": "x", "confidence": -0.25, "passage": "p#1"}
    route = {"taken": "read", "rule": "read-first:reader-disagrees", "signals": {"reader": reader}}
    trace.meta.update(path=[], route=route)
    assert signals(trace)["reader_logprob_mean"] == -0.25
    reader["confidence"] = -100.0  # the reader found no span
    assert signals(trace)["reader_logprob_mean"] == -10.0
