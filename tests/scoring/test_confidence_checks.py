"""Confidence signals that cost model calls (``--confidence-check``): asked for by name, run
after the answer with their cost said, mapped by a calibrator fit with them or shown as unused,
and fit by ``searchain calibrate`` into a calibrator of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from searchain.cli import app
from searchain.llm.base import LLMError
from searchain.readers.nli import answer_claim
from searchain.scoring.confidence import UNLIKELY_LOGPROB, assess, naive_logprob, signals
from searchain.scoring.confidence.calibrator import Calibrator, forget_calibrators
from searchain.scoring.confidence.certification import split_of
from searchain.scoring.confidence.checks import (
    NO_ANSWER_LOGPROB,
    SAMPLES,
    check_names,
    consistency_check,
    likelihood_check,
    nli_check,
    resampled_answers,
    run_checks,
    states,
    supporting_passages,
)
from searchain.types import Citation, Passage, Trace, Usage

QUESTION = "Who portrayed Corliss Archer in Kiss and Tell?"
CALIBRATOR = {
    "features": ["answer_in_cited"],
    "weights": [1.0],
    "bias": 0.0,
    "means": [0.5],
    "scales": [0.5],
}


def _trace(supported: float | None = None, cited: bool = True) -> Trace:
    passages = [
        Passage("p1", "Kiss and Tell is a 1945 film starring Shirley Temple.", "Kiss and Tell"),
        Passage("p2", "Shirley Temple was an American actress.", "Shirley Temple"),
    ]
    trace = Trace(QUESTION, "retrieve-read", answer="Shirley Temple", references=passages)
    if cited:
        trace.citations = [Citation(mark=1, passage_id="p2")]
    if supported is not None:
        trace.meta["confidence_checks"] = {"nli": {"answer_supported": supported}}
    return trace


class RecordingJudge:
    """Says how likely the claim is supported, and what it was asked (fault-free double of
    the LLM judge, whose real calls run in the slow test below)."""

    name = "llm"

    def __init__(self, p: float) -> None:
        self.p, self.asked, self.usage = p, [], Usage()

    def probability(self, premise: str, claim: str) -> float:
        self.asked.append((premise, claim))
        return self.p


def test_checks_are_named_and_unknown_ones_refused() -> None:
    assert check_names(None) == () and check_names(["nli", "nli"]) == ("nli",)
    assert check_names("nli") == ("nli",)
    assert check_names(["nli", "consistency"]) == ("consistency", "nli")
    known = "known: nli, consistency, likelihood"
    with pytest.raises(ValueError, match=f"no confidence check 'entails'; {known}"):
        check_names(["entails"])


def test_the_nli_check_asks_about_the_cited_passages_only() -> None:
    judge = RecordingJudge(0.8)
    assert nli_check(_trace(), judge) == {"answer_supported": 0.8}
    ((premise, claim),) = judge.asked
    assert premise == "Title: Shirley Temple\nShirley Temple was an American actress."
    assert claim == answer_claim(QUESTION, "Shirley Temple")
    assert [p.id for p in supporting_passages(_trace(cited=False))] == ["p1", "p2"]
    empty = _trace()
    empty.answer = ""
    assert nli_check(empty, judge) == {"answer_supported": 0.0} and len(judge.asked) == 1


def test_the_signal_reaches_the_score_and_says_what_lowered_it() -> None:
    found = signals(_trace(supported=0.2))
    assert found["answer_supported"] == 0.2
    conf = assess(_trace(supported=0.2), "gemma-3-270m")
    assert not conf.calibrated and conf.value == pytest.approx(3 / 4)  # 3 of 4 pieces hold
    assert "the model does not find the answer stated in the cited passages" in conf.lowered_by


def test_a_calibrator_without_the_signal_says_it_was_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path))
    forget_calibrators()
    mine = tmp_path / "calibrators"
    mine.mkdir()
    base = {**CALIBRATOR, "name": "retrieve-read--tiny", "method": "retrieve-read"}
    (mine / "calibrator-retrieve-read--tiny.json").write_text(json.dumps(base))
    try:
        conf = assess(_trace(supported=0.9), "tiny")
        assert conf.calibrator["name"] == "retrieve-read--tiny"
        assert conf.note == "the calibrator was fit without answer_supported: shown, not used"
        variant = {
            **CALIBRATOR,
            "features": ["answer_in_cited", "answer_supported"],
            "weights": [1.0, 2.0],
            "means": [0.5, 0.5],
            "scales": [0.5, 0.2],
            "name": "retrieve-read+nli--tiny",
        }
        (mine / "calibrator-retrieve-read+nli--tiny.json").write_text(json.dumps(variant))
        forget_calibrators()
        with_check = assess(_trace(supported=0.9), "tiny")
        assert with_check.calibrator["name"] == "retrieve-read+nli--tiny" and not with_check.note
        assert with_check.value > conf.value  # the supporting signal raised it
        forget_calibrators()
    finally:
        forget_calibrators()


def test_a_sample_states_the_answer_when_one_holds_the_other_whole() -> None:
    assert states("Shirley Temple", "shirley temple.")
    assert states("Shirley Temple Black", "Shirley Temple")  # the sample says more
    assert states("Paris", "Paris, France")
    assert not states("Temple", "Shirley Temples") and not states("", "x")
    assert not states("No", "Yes")


def test_the_consistency_check_samples_the_real_model_reproducibly(tmp_path: Path) -> None:
    from searchain.llm import make_llm

    llm = make_llm("local", model="gemma-3-270m", cache=tmp_path / "calls.sqlite")
    samples, usage = resampled_answers(_trace(), llm)
    assert len(samples) == SAMPLES and usage.llm_calls + usage.cached_calls == 1
    again, _ = resampled_answers(_trace(), llm)
    assert again == samples  # seeded: the same samples (and cacheable)
    found, _ = consistency_check(_trace(), llm)
    assert found["answer_agreement"] == sum(states(x, "Shirley Temple") for x in samples) / 5
    odd = _trace()
    odd.answer = "the Zanzibar String Quartet"  # an answer no sample gives
    assert consistency_check(odd, llm)[0] == {"answer_agreement": 0.0}
    cost = run_checks(odd, ["consistency"], llm)
    assert odd.meta["confidence_checks"]["consistency"] == {"answer_agreement": 0.0}
    assert cost["llm_calls"] == 1 and signals(odd)["answer_agreement"] == 0.0
    conf = assess(odd, "gemma-3-270m")
    assert "asked again, the model mostly answers otherwise" in conf.lowered_by


def test_the_likelihood_check_scores_the_answer_with_the_real_model(tmp_path: Path) -> None:
    from searchain.llm import make_llm

    llm = make_llm("local", model="gemma-3-270m", cache=tmp_path / "calls.sqlite")
    found, usage = likelihood_check(_trace(), llm)
    naive, _ = naive_logprob(llm, QUESTION, "Shirley Temple")
    assert found == {"answer_logprob": naive}  # the naive value, as one signal among others
    assert NO_ANSWER_LOGPROB < naive < 0 and usage.llm_calls + usage.cached_calls == 1
    odd = _trace()
    odd.answer = "the Zanzibar String Quartet of Lower Saxony"
    cost = run_checks(odd, ["likelihood"], llm)
    unlikely = odd.meta["confidence_checks"]["likelihood"]["answer_logprob"]
    assert unlikely < naive and cost["llm_calls"] == 1
    lowered = "the model finds its own answer unlikely" in assess(odd, "gemma-3-270m").lowered_by
    assert lowered == (unlikely < UNLIKELY_LOGPROB)
    none = _trace()
    none.answer = ""
    assert likelihood_check(none, llm) == ({"answer_logprob": NO_ANSWER_LOGPROB}, Usage())


class CannotScore:
    """A backend that generates but cannot score a given text (fault injection)."""

    form = "chat"

    def score_chat(self, messages: object, continuation: str) -> None:
        raise LLMError("the endpoint returns no prompt log-probabilities")


def test_a_backend_that_cannot_score_gets_no_likelihood_and_the_trace_says_why() -> None:
    trace = _trace()
    cost = run_checks(trace, ["likelihood"], CannotScore())
    assert trace.meta["confidence_checks"]["likelihood"] == {} and cost["llm_calls"] == 0
    assert "answer_logprob" not in signals(trace)
    assert trace.errors == [
        "likelihood check: no answer_logprob: the endpoint returns no prompt log-probabilities"
    ]
    calibrator = {**CALIBRATOR, "features": ["answer_in_cited", "answer_logprob"]}
    calibrator.update(weights=[1.0, 1.0], means=[0.5, -2.0], scales=[0.5, 1.0])
    note = assess(trace, "tiny", calibrator=Calibrator.from_dict(calibrator)).note
    assert "answer_logprob not measured: taken at the calibration items' mean" in note


def _run(path: Path, n: int = 30) -> Path:
    path.mkdir(parents=True)
    manifest = {"config": {"model": "tiny.gguf", "dataset": "d.jsonl", "llm": "local"}}
    (path / "manifest.json").write_text(json.dumps(manifest))
    lines = []
    for i in range(n):
        right = i % 3 != 0
        trace = _trace(supported=0.9 if right else 0.1, cited=right)
        lines.append(
            {
                "id": f"q{i}",
                "method": "retrieve-read",
                "status": "ok",
                "metrics": {"cover_em": float(right)},
                "trace": trace.to_dict(),
            }
        )
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_calibrate_fits_a_variant_from_runs_made_with_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    forget_calibrators()
    got = CliRunner().invoke(
        app, ["calibrate", str(_run(tmp_path / "run")), "--method", "retrieve-read"]
    )
    assert got.exit_code == 0, got.output
    path = tmp_path / "cache" / "calibrators" / "calibrator-retrieve-read+nli--tiny.json"
    fitted = json.loads(path.read_text())
    assert fitted["method"] == "retrieve-read+nli" and "answer_supported" in fitted["features"]
    forget_calibrators()


def test_calibrate_without_a_recorded_check_fits_the_plain_calibrator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs that recorded a check's signal also give the calibrator for answers made
    without it (issue 51: the calibration run records MaxProb; `ask` runs without it)."""
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    forget_calibrators()
    run = str(_run(tmp_path / "run"))
    args = ["calibrate", run, "--method", "retrieve-read", "--without", "nli"]
    got = CliRunner().invoke(app, args)
    assert got.exit_code == 0, got.output
    path = tmp_path / "cache" / "calibrators" / "calibrator-retrieve-read--tiny.json"
    fitted = json.loads(path.read_text())
    assert fitted["method"] == "retrieve-read" and "answer_supported" not in fitted["features"]
    refused = CliRunner().invoke(app, [*args[:-1], "nil"])
    assert refused.exit_code != 0 and "no check named nil" in refused.output
    forget_calibrators()


def test_a_check_asked_on_every_answer_but_unmeasured_on_some_is_imputed_not_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MaxProb asked for on every calibration answer, unmeasured on two: the `+maxprob`
    calibrator still reads it, those two at the fit items' mean (said in the file); a file
    named for another calibrator is refused rather than written."""
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    forget_calibrators()
    run = _run(tmp_path / "run", n=40)
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    for i, r in enumerate(lines):
        right = r["metrics"]["cover_em"] == 1.0
        found = {"value": 0.9 if right else 0.3, "call": "retrieve-read", "computed": "x"}
        if i in (2, 4):  # measured on no token: absent, with why
            found = {**found, "value": None, "reason": "not written verbatim"}
        r["trace"]["meta"] = {"maxprob": found}
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = tmp_path / "calibrator-retrieve-read+maxprob--tiny.json"
    got = CliRunner().invoke(
        app, ["calibrate", str(run), "--method", "retrieve-read", "--out", str(out)]
    )
    assert got.exit_code == 0, got.output
    fitted = json.loads(out.read_text())
    assert fitted["method"] == "retrieve-read+maxprob" and "answer_maxprob" in fitted["features"]
    assert split_of("q2") == split_of("q4") == "fit"  # both unmeasured answers fit it
    assert fitted["imputed_at_mean"] == {"answer_maxprob": 2}
    wrong = tmp_path / "calibrator-retrieve-read--tiny.json"
    refused = CliRunner().invoke(
        app, ["calibrate", str(run), "--method", "retrieve-read", "--out", str(wrong)]
    )
    assert refused.exit_code != 0 and "not calibrator-retrieve-read--tiny.json" in refused.output
    assert not wrong.exists()
    forget_calibrators()


@pytest.mark.slow
def test_ask_runs_the_check_with_the_real_model_and_says_its_cost() -> None:
    shown = CliRunner().invoke(
        app,
        ["ask", QUESTION, "--method", "retrieve-read", "--confidence-check", "nli", "--json"],
    )
    assert shown.exit_code == 0, shown.output
    trace = json.loads(shown.stdout)
    supported = trace["meta"]["confidence_checks"]["nli"]["answer_supported"]
    assert 0.0 <= supported <= 1.0
    conf = trace["confidence"]
    assert conf["signals"]["answer_supported"] == supported
    assert conf["cost"]["llm_calls"] >= 1 and conf["cost"]["seconds"] >= 0  # cached: 0 s
    refused = CliRunner().invoke(app, ["ask", QUESTION, "--confidence-check", "entails"])
    assert refused.exit_code == 1 and "no confidence check 'entails'" in refused.output
