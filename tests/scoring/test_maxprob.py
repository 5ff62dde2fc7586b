"""MaxProb (issue 51): the mean token probability of the final answer in the call that wrote
it, asked of that call with the method setting ``maxprob``. Against the real embedded model
(Gemma 3 270M, 1 llama.cpp thread) for retrieve-read and SearChain's two final steps; the
token bookkeeping on its own; and the signal a calibrator reads."""

from __future__ import annotations

import math

import pytest

from searchain import citations, prompts
from searchain.llm.local import LocalLLM
from searchain.methods import RetrieveRead
from searchain.methods.baseline_util import answer_ending
from searchain.methods.retrieve_read import RetrieveReadConfig
from searchain.methods.searchain import SearChain, SearChainConfig
from searchain.readers.llm_reader import LLMReader
from searchain.retrieval import BM25Index
from searchain.scoring.confidence import assess, checks_of, maxprob, signals
from searchain.scoring.confidence.calibrator import Calibrator
from searchain.types import Completion, CompletionResult, Trace


@pytest.fixture(scope="module")
def gemma() -> LocalLLM:
    return LocalLLM(n_threads=1)


def _overlapping(tokens: list[str], answer: str) -> list[int]:
    """The test's own reading of "the answer's tokens": every output token that overlaps the
    answer's last occurrence after "answer is"/"Answer:", else its first occurrence."""
    text = "".join(tokens)
    marker = max(text.rfind("answer is"), text.rfind("Answer:"))
    start = text.find(answer, marker + 1 if marker >= 0 else 0)
    start = text.find(answer) if start == -1 else start
    assert start >= 0, (answer, text)
    ends = [sum(len(t) for t in tokens[: i + 1]) for i in range(len(tokens))]
    return [
        i
        for i, end in enumerate(ends)
        if end > start and end - len(tokens[i]) < start + len(answer)
    ]


# -- the real embedded model --------------------------------------------------------------


@pytest.mark.parametrize("question", ["Who directed Jaws?", "Who directed Star Wars?"])
def test_retrieve_read_records_the_answers_mean_token_probability(
    gemma: LocalLLM, two_films: BM25Index, question: str
) -> None:
    trace = RetrieveRead(gemma, two_films, k=2, maxprob=True).run(question)
    found = trace.meta["maxprob"]
    assert found["call"] == "retrieve-read" and found["computed"] == maxprob.COMPUTED
    assert 0 < found["value"] <= 1 and trace.answer
    assert trace.usage.llm_calls == 1  # asked of the answering call: no second call
    # Independently: the same prompt, generated again with log-probs, read by this test.
    prompt = prompts.fill(
        RetrieveReadConfig().template,  # the default form the method answered with
        documents=citations.numbered_documents(two_films.search(question, k=2)),
        question=question,
        ending=answer_ending("open"),
    )
    again = gemma.complete(prompt, max_tokens=128, stop=("\n",), logprobs=True).completions[0]
    chosen = _overlapping(again.tokens, trace.answer)
    mean = sum(again.token_logprobs[i] for i in chosen) / len(chosen)
    assert found["value"] == pytest.approx(math.exp(mean), rel=1e-9)
    assert found["tokens"] == [again.tokens[i] for i in chosen]
    # And a scoring call over the exact prompt plus the output up to the answer's end
    # (batched differently, so llama.cpp's quantised kernels differ slightly).
    prefix = "".join(again.tokens[: chosen[-1] + 1])
    scored = gemma.score(prompt, prefix).token_logprobs[-len(chosen) :]
    assert found["value"] == pytest.approx(math.exp(sum(scored) / len(scored)), abs=0.05)


def test_off_by_default_and_the_same_answer_either_way(gemma, two_films) -> None:
    plain = RetrieveRead(gemma, two_films, k=2).run("Who directed Jaws?")
    assert "maxprob" not in plain.meta and "answer_maxprob" not in signals(plain)
    asked = RetrieveRead(gemma, two_films, k=2, maxprob=True).run("Who directed Jaws?")
    assert asked.answer == plain.answer and asked.final_content == plain.final_content


@pytest.mark.parametrize("final_step", ["tracing", "evidence"])
def test_searchain_reads_the_call_that_wrote_the_final_content(
    gemma: LocalLLM, two_films: BM25Index, final_step: str
) -> None:
    config = SearChainConfig(r_max=1, maxprob=True, final_step=final_step)
    trace = SearChain(gemma, two_films, LLMReader(gemma), config).run("Who directed Jaws?")
    found = trace.meta["maxprob"]
    assert found["call"] == final_step and 0 < found["value"] <= 1, found
    output = trace.meta[f"{final_step}_output"]  # what that call wrote, as recorded
    assert "".join(found["tokens"]).strip() in output and trace.answer in output
    lps = found["token_logprobs"]
    assert found["value"] == pytest.approx(math.exp(sum(lps) / len(lps)))
    assert signals(trace)["answer_maxprob"] == found["value"]
    assert "maxprob" in checks_of(trace)  # its calibrator: searchain+maxprob


def test_searchain_without_ir_says_why_it_has_no_maxprob(gemma, two_films) -> None:
    config = SearChainConfig(r_max=1, maxprob=True, use_ir=False)
    trace = SearChain(gemma, None, None, config).run("Who directed Jaws?")
    assert trace.meta["maxprob"]["value"] is None
    assert "without IR" in maxprob.reason_of(trace.meta)
    assert "answer_maxprob" not in signals(trace)  # absent, never 0


# -- the token bookkeeping ----------------------------------------------------------------


def _result(tokens: list[str] | None, logprobs: list[float] | None) -> CompletionResult:
    text = "".join(tokens or ["x"])
    return CompletionResult([Completion(text, tokens=tokens, token_logprobs=logprobs)])


def test_the_answers_tokens_are_those_overlapping_it_after_the_marker() -> None:
    tokens = [" Paris", " is", " big", ".", " So", " the", " answer", " is", " Par", "is", "."]
    lps = [-5.0, -1, -1, -1, -1, -1, -1, -1, -0.2, -0.4, -3.0]
    found = maxprob.measure(_result(tokens, lps), "Paris", "tracing")
    assert found["tokens"] == [" Par", "is"]  # the stated answer, not the earlier mention
    assert found["value"] == pytest.approx(math.exp(-0.3))
    # A token that also holds the full stop counts whole.
    found = maxprob.measure(_result([" Rome."], [-0.5]), "Rome", "tracing")
    assert found["tokens"] == [" Rome."] and found["value"] == pytest.approx(math.exp(-0.5))


def test_absent_with_a_reason_never_zero() -> None:
    cases = {
        "no answer": maxprob.measure(_result([" x"], [-1.0]), "", "evidence"),
        "returned no token log-probabilities": maxprob.measure(
            _result([" Paris"], None), "Paris", "evidence"
        ),
        "not written verbatim": maxprob.measure(_result([" Rome"], [-1.0]), "Paris", "evidence"),
    }
    for said, found in cases.items():
        assert found["value"] is None and said in found["reason"]
        assert maxprob.value_of({"maxprob": found}) is None
    # No answer is the signal's floor (as the likelihood check's); the others are absent.
    assert maxprob.signal({"maxprob": cases["no answer"]}) == {"answer_maxprob": 0.0}
    assert maxprob.signal({"maxprob": cases["not written verbatim"]}) == {}


def test_the_calibrator_weighs_it_or_says_it_was_shown_not_used() -> None:
    trace = Trace(question="q", method="retrieve-read", answer="Paris")
    trace.meta["maxprob"] = maxprob.measure(_result([" Paris"], [-0.1]), "Paris", "retrieve-read")
    calibrator = {"features": ["has_answer"], "weights": [1.0], "bias": 0.0}
    calibrator |= {"means": [0.5], "scales": [0.5], "method": "retrieve-read", "model": "m"}
    conf = assess(trace, "m", Calibrator.from_dict(calibrator))
    assert conf.signals["answer_maxprob"] == pytest.approx(math.exp(-0.1))
    assert "fit without answer_maxprob: shown, not used" in conf.note
    with_it = Calibrator.from_dict(
        {**calibrator, "features": ["answer_maxprob"], "means": [0.5], "scales": [0.2]}
    )
    low = Trace(question="q", method="retrieve-read", answer="Paris")
    low.meta["maxprob"] = maxprob.measure(_result([" Paris"], [-3.0]), "Paris", "retrieve-read")
    assert assess(trace, "m", with_it).value > assess(low, "m", with_it).value
    # Uncalibrated, a MaxProb under one half speaks against the answer, in words.
    assert "the model wrote its answer with low token probability" in assess(low, "m").lowered_by


def test_calibrate_reads_the_signal_from_runs_made_with_maxprob(tmp_path) -> None:
    """A calibration run whose every answer has MaxProb gives a ``METHOD+maxprob``
    calibrator that weighs ``answer_maxprob`` (fit in a temporary folder: nothing shipped)."""
    import json

    from searchain.eval.calibrate import fit_calibrator

    run = tmp_path / "run"
    run.mkdir()
    manifest = {"config": {"model": "tiny.gguf", "dataset": "d.jsonl", "llm": "local"}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    lines = []
    for i in range(60):
        right = i % 3 != 0
        trace = Trace(question=f"q{i}", method="retrieve-read", answer="Paris")
        lp = -0.1 if (right or i % 2) else -2.5  # mostly higher for the right answers
        trace.meta["maxprob"] = maxprob.measure(_result([" Paris"], [lp]), "Paris", "r")
        record = {"id": f"q{i}", "method": "retrieve-read", "status": "ok"}
        record |= {"metrics": {"cover_em": float(right)}, "trace": trace.to_dict()}
        lines.append(json.dumps(record) + "\n")
    (run / "results.jsonl").write_text("".join(lines))
    fitted = fit_calibrator([run], "retrieve-read")
    assert fitted.method == "retrieve-read+maxprob"
    assert "answer_maxprob" in fitted.features
    weight = fitted.weights[fitted.features.index("answer_maxprob")]
    assert weight > 0  # a higher MaxProb: more likely right, as the items say
