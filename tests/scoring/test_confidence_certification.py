"""A confidence you can bet on (issue 49): the calibrator is fit on one part of its items and
its threshold certified on the other (Learn-then-Test over a fixed grid); a calibrator maps
only answers of exactly its configuration, and one no better than the base rate is never a
probability; a calibrated answer's reasons are its calibrator's largest terms; an uncertified
threshold is null with a reason, in strict JSON."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from bench_kit import run_bench
from confidence_kit import SHIPPED_META, shipped_meta
from searchain.methods.baseline_util import LABEL_INSTRUCTIONS
from searchain.scoring.confidence import abstention_text, assess
from searchain.scoring.confidence.calibration import binomial_cdf
from searchain.scoring.confidence.calibrator import (
    Calibrator,
    forget_calibrators,
    shipped_calibrator,
)
from searchain.scoring.confidence.certification import (
    GRID,
    certify,
    fewest_answers,
    item_hash,
    lowest_certified_risk,
    split_of,
)
from searchain.scoring.confidence.configuration import LABELLED_TASKS, QUESTION_LAST, differences
from searchain.scoring.confidence.reasons import SAID
from searchain.scoring.confidence.risk_bound import RiskBound, check_risk_bound
from searchain.types import Citation, Node, Passage, Trace

MODEL = "qwen2.5-coder-1.5b"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "confidence.md"
# How the docs' table shows a calibrator no better than the base rate (bench.calibrator_table)
BASE_RATE = "uncalibrated score (no better than the base rate); `--max-risk` refuses it"


def _other_position() -> tuple[dict[str, Any], str]:
    """The question position the shipped SearChain calibrator was not fit on, and its note."""
    if str(SHIPPED_META["template"]).endswith(QUESTION_LAST):
        return {"template": "searchain/coq_multihop"}, "question position instruction, fit on last"
    last = "searchain/coq_multihop" + QUESTION_LAST
    return {"template": last}, "question position last, fit on instruction"


def _other_final_step() -> tuple[dict[str, Any], str]:
    """The final step the shipped SearChain calibrator was not fit on, and its note."""
    if SHIPPED_META.get("final_step") == "evidence":
        fit = f"evidence:{SHIPPED_META['evidence_sources']}"
        return {"final_step": "tracing"}, f"final step tracing, fit on {fit}"
    change = {"final_step": "evidence", "evidence_sources": "path+question"}
    return change, "final step evidence:path+question, fit on tracing"


OTHER_POSITION, OTHER_FINAL_STEP = _other_position(), _other_final_step()


def _shipped() -> dict[str, dict[str, Any]]:
    files = resources.files("searchain.data")
    return {
        f.name.removeprefix("calibrator-").removesuffix(".json"): json.loads(f.read_text())
        for f in files.iterdir()
        if f.name.startswith("calibrator-")
    }


def _searchain_trace(answer: str = "Shirley Temple", in_passage: bool = True) -> Trace:
    """A SearChain answer made with the shipped configuration: one step, confirmed."""
    text = "Kiss and Tell is a film starring Shirley Temple." if in_passage else "A film."
    passage = Passage("p1", text, "Kiss and Tell")
    node = Node(id="n1", query="Who starred?", answer=answer, passages=[passage])
    node.meta = {"status": "verified", "reader": {"confidence": -0.2}}
    trace = Trace(
        question="Who portrayed Corliss Archer in Kiss and Tell?",
        method="searchain",
        answer=answer,
        references=[passage],
        citations=[Citation(mark=1, passage_id="p1")],
        nodes=[node],
        rounds=1,
    )
    trace.meta.update(SHIPPED_META, path=["n1"], theta=-1.3)
    return trace


def _paper_trace(answer: str = "Shirley Temple") -> Trace:
    """The same answer made by the ``searchain-paper`` preset with its calibrators'
    configuration: its shipped calibrators stay as they are when SearChain's default is
    refit, so the tests of how a calibrator is used read them."""
    trace = _searchain_trace(answer)
    trace.method = "searchain-paper"
    trace.meta.update(shipped_meta("searchain-paper"))
    return trace


def test_the_split_rule_is_fixed_and_fit_items_never_certify() -> None:
    assert split_of("5a8b57f25542995d1e6f1371") == split_of("5a8b57f25542995d1e6f1371")
    parts = [split_of(f"q{i}") for i in range(1000)]
    assert 400 < parts.count("certify") < 600  # about half each
    for name, cal in _shipped().items():
        fit, held = set(cal["fit_items"]), {h for h, _, _ in cal["certification"]["items"]}
        assert not fit & held, name
        assert len(fit) + len(held) == cal["fit_on"]["items"], name


def test_certification_is_its_formula_on_a_fixed_set() -> None:
    # 12 certification items, most confident first: 8 right, then wrong, right, wrong, wrong.
    scores = [0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45, 0.4, 0.35]
    right = [True] * 8 + [False, True, False, False]
    # At risk 0.3 and δ 0.1, 7 answers without an error are the fewest that certify; the fit
    # items answer 7 of 10 (all right) from 0.60 down, so the sequence starts at 0.60.
    assert fewest_answers(0.3, 0.1) == 7 and 0.7**7 <= 0.1 < 0.7**6
    fit = [(0.6, True)] * 7 + [(0.1, False)] * 3
    found = certify(scores, right, fit, max_risk=0.3, delta=0.1)
    # 0.60 ... 0.56 answer 7 (p = 0.7^7), 0.55 ... 0.51 answer 8 (0.7^8); 0.50 answers 9 with
    # one error: P(Bin(9, 0.3) <= 1) = 0.196 > 0.1 stops the sequence.
    assert binomial_cdf(1, 9, 0.3) > 0.1
    assert (found.threshold, found.answered, found.errors, found.items) == (0.51, 8, 0, 12)
    assert "at most 0.3 with probability at least 0.9" in found.terms()
    assert "certification items the calibrator was not fit on" in found.terms()
    # fit items that never answer 7/12 of themselves right: no start, no threshold, a reason
    nowhere = certify(scores, right, [(0.2, False)] * 10, max_risk=0.3, delta=0.1)
    assert nowhere.threshold is None and "every answer is withheld" in nowhere.terms()
    assert GRID[0] == 0.99 and GRID[-1] == 0.01 and len(GRID) == 99


def test_every_shipped_calibrator_records_its_certification() -> None:
    for name, cal in _shipped().items():
        cert = cal["certification"]
        assert cert["delta"] == 0.1 and cert["grid"] == {"from": 0.99, "to": 0.01, "step": 0.01}
        assert cert["configuration"]["model"] == MODEL and cert["configuration"]["corpus"]
        scores = [s for _, s, _ in cert["items"]]
        right = [bool(ok) for _, _, ok in cert["items"]]
        fit = [(p, bool(ok)) for p, ok in cal["calibration"]]
        again = lowest_certified_risk(scores, right, fit, 0.1)
        got = None if again is None else again.max_risk
        assert got == cert["lowest_certified_risk"], name
        assert all(re.fullmatch(r"[0-9a-f]{16}", h) for h, _, _ in cert["items"])


def test_the_docs_table_is_the_shipped_certifications() -> None:
    """docs/confidence.md's table is ``python -m bench.calibrator_table``'s, word for word: a
    row per shipped calibrator (its configuration, item counts, lowest risk certified at
    δ = 0.1 and the threshold there, CV log-loss against the base rate's, how it is shown)."""
    done = run_bench("calibrator_table")
    assert done.returncode == 0, done.stderr[-2000:]
    printed = done.stdout.removesuffix("\n")
    assert printed in DOCS.read_text(encoding="utf-8")
    for name, cal in _shipped().items():  # the generator reads every file, as they are
        row = next(r for r in printed.splitlines() if r.startswith(f"| `{name}` |"))
        cells = [c.strip() for c in row.split("|")[2:]]
        cert = cal["certification"]
        assert cells[1:3] == [str(cal["fit_on"]["fit_items"]), str(len(cert["items"]))]
        lowest = cert["lowest_certified_risk"]
        assert cells[3] == ("none" if lowest is None else f"{lowest:.2f}"), name
        assert cells[6] == ("probability" if cal["probability"] else BASE_RATE), name


def test_a_calibrated_answer_of_the_shipped_configuration() -> None:
    """An answer of the shipped calibrator's configuration is mapped by it: a probability
    where its fit beat the share right, else a score that says it did not."""
    conf = assess(_searchain_trace(), MODEL)
    shipped = _shipped()[f"searchain--{MODEL}"]
    assert conf.calibrated is bool(shipped["probability"])
    if conf.calibrated:
        assert conf.calibrator["name"] == f"searchain--{MODEL}"
    else:
        assert "no better than the share right" in conf.note
        fit = shipped["fit_on"]  # the share right on its calibration items, the one figure
        share = f"right in {fit['right']} of its {fit['items']} calibration items"
        assert share in conf.note


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"method": "searchain-no-verification"}, "no calibrator was fit for searchain-no-verif"),
        OTHER_POSITION,
        ({"corpus": "bm25:debian-docs"}, "corpus bm25:debian-docs, fit on bm25:demo"),
        ({"task": "open"}, "task open, fit on multihop"),
        ({"label_rule": 1}, "node-label rule version 1, fit on 2"),
        ({"prompt_form": "completion"}, "prompt form completion, fit on chat"),
        OTHER_FINAL_STEP,
    ],
)
def test_another_configuration_is_not_shown_as_a_probability(
    change: dict[str, Any], said: str
) -> None:
    """An ablation, another question position, corpus, task, label rule, prompt form or final
    step: an uncalibrated score that says why (and where the calibrator was fit)."""
    trace = _searchain_trace()
    if "method" in change:
        trace.method = change["method"]
    else:
        trace.meta.update(change)
    conf = assess(trace, MODEL)
    assert not conf.calibrated and conf.calibrator is None
    assert conf.note.startswith("uncalibrated score") and said in conf.note


def test_a_base_rate_calibrator_is_not_shown_as_a_probability(own_calibrators: Path) -> None:
    # a copy of the shipped retrieve-read calibrator, no better than the base rate, as the
    # user's own (found first): whatever the shipped one's fit says after a refit
    shipped = _shipped()[f"retrieve-read--{MODEL}"]
    mine = own_calibrators / f"calibrator-retrieve-read--{MODEL}.json"
    bar = {**shipped["l2_chosen_by"], "base_rate_log_loss": 0.123}  # this copy's, not shipped
    copy = {**shipped, "probability": False, "l2_chosen_by": bar}
    mine.write_text(json.dumps(copy), encoding="utf-8")
    trace = Trace(question="q", method="retrieve-read", answer="Shirley Temple")
    trace.meta.update(shipped_meta("retrieve-read"))  # the shipped one's configuration
    conf = assess(trace, MODEL)
    assert not conf.calibrated and "no better than the share right" in conf.note
    assert "against 0.123" in conf.note
    with pytest.raises(ValueError, match=r"needs a calibrated confidence: .*no better"):
        check_risk_bound("retrieve-read", (), MODEL, 0.3, 0.1)
    with pytest.raises(ValueError, match="no calibrator was fit for searchain-no-ir"):
        check_risk_bound("searchain-no-ir", (), MODEL, 0.3, 0.1)


def test_a_calibrated_answers_reasons_name_its_largest_negative_term() -> None:
    trace = _paper_trace("Judy Garland")  # not in the passage: the search cannot back it
    conf = assess(trace, MODEL)
    assert conf.calibrated
    shipped = shipped_calibrator("searchain-paper", MODEL)
    assert shipped is not None
    terms = shipped.contributions(conf.signals)
    lowest = min(terms.values())
    assert lowest < 0
    largest = {SAID[n](conf.signals[n]) for n, t in terms.items() if t == lowest}  # ties
    assert conf.lowered_by[0] in largest
    highest = max(terms.values())
    largest = {SAID[n](conf.signals[n]) for n, t in terms.items() if t == highest}
    assert conf.raised_by and conf.raised_by[0] in largest


@pytest.mark.parametrize("checks", [{}, {"likelihood": {"answer_logprob": -0.3}}])
def test_a_risk_bound_uses_the_threshold_of_the_calibrator_that_mapped_the_answer(
    checks: dict[str, Any],
) -> None:
    variant = "searchain-paper+likelihood" if checks else "searchain-paper"
    trace = _paper_trace()
    trace.meta.update(shipped_meta(variant), confidence_checks=checks)  # its configuration
    conf = assess(trace, MODEL)
    shipped = shipped_calibrator(variant, MODEL)
    assert shipped is not None and conf.calibrator["name"] == f"{variant}--{MODEL}"
    for risk in (0.3, 0.6):
        bound = RiskBound(risk, 0.1)
        bound.apply(conf)
        expected = shipped.certificate(risk, 0.1)
        assert conf.threshold == expected.threshold
        assert conf.abstained == (expected.threshold is None or conf.value < expected.threshold)
        assert conf.terms == expected.terms()
    trace.confidence = conf
    RiskBound(0.05, 0.1).apply(conf)  # nothing is certified that low
    assert conf.threshold is None and conf.abstained
    said = abstention_text(trace)
    assert said.startswith("Not answered: confidence") and "no threshold is certified" in said
    strict = json.loads(json.dumps(trace.to_dict()), parse_constant=_refuse)
    assert strict["confidence"]["threshold"] is None


def test_an_uncalibrated_answer_gets_no_threshold_and_says_why() -> None:
    trace = _searchain_trace()
    trace.meta["corpus"] = "bm25:debian-docs"
    conf = assess(trace, MODEL)
    RiskBound(0.6, 0.1).apply(conf)
    assert conf.threshold is None and conf.abstained
    assert "not a calibrated probability" in conf.terms and "bm25:debian-docs" in conf.terms


def _refuse(constant: str) -> Any:
    raise ValueError(f"not strict JSON: {constant}")


def test_item_hashes_are_short_and_stable() -> None:
    assert item_hash("q1") == item_hash("q1") and len(item_hash("q1")) == 16
    forget_calibrators()


def test_a_spec_certifies_per_method_an_ablation_never_borrowing_searchains() -> None:
    """``--max-risk`` on a spec: SearChain's is held with each answer's calibrator; its
    ablation, which has no calibrator of its own, is refused in words before it runs."""
    from types import SimpleNamespace

    from searchain.methods.assembly import Spec, abstention

    qwen = SimpleNamespace(model="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")  # only its name
    held = abstention(Spec(method="searchain-paper", max_risk=0.6, risk_delta=0.2), qwen)
    assert held is not None and held.risk_bound is not None
    assert (held.risk_bound.max_risk, held.risk_bound.delta) == (0.6, 0.2)
    with pytest.raises(ValueError, match="no calibrator was fit for searchain-no-verification"):
        abstention(Spec(method="searchain-no-verification", max_risk=0.6), qwen)
    with pytest.raises(ValueError, match="between 0 and 1"):
        abstention(Spec(method="searchain-paper", max_risk=0.6, risk_delta=1.5), qwen)


def test_a_variant_fit_elsewhere_gives_way_to_the_methods_own(own_calibrators: Path) -> None:
    """After a refit of the method alone (issue 51), an answer checked with ``likelihood`` is
    mapped by the method's calibrator when only that one was fit on the answer's
    configuration (the check's signal shown, not used); when neither was, the note names the
    variant's difference. (User copies of the shipped files, the method's "refit" on
    another corpus.)"""
    shipped = _shipped()
    variant = shipped[f"searchain+likelihood--{MODEL}"]
    fit = variant["certification"]["configuration"]
    refit = {**shipped[f"searchain--{MODEL}"], "probability": True}  # whatever it beat
    refit["certification"] = {
        **refit["certification"],
        "configuration": {**fit, "method": "searchain", "corpus": "bm25:my-docs"},
    }
    (own_calibrators / f"calibrator-searchain--{MODEL}.json").write_text(json.dumps(refit))
    name = f"calibrator-searchain+likelihood--{MODEL}.json"
    (own_calibrators / name).write_text(json.dumps(variant))
    trace = _searchain_trace()
    trace.meta.update(shipped_meta("searchain+likelihood"))  # the variant's configuration
    trace.meta["confidence_checks"] = {"likelihood": {"answer_logprob": -0.4}}
    assert assess(trace, MODEL).calibrator["name"] == f"searchain+likelihood--{MODEL}"
    trace.meta["corpus"] = "bm25:my-docs"
    conf = assess(trace, MODEL)
    assert conf.calibrated and conf.calibrator["name"] == f"searchain--{MODEL}"
    assert "answer_logprob: shown, not used" in conf.note
    trace.meta["corpus"] = "bm25:elsewhere"
    conf = assess(trace, MODEL)
    assert not conf.calibrated and "searchain+likelihood on" in conf.note
    assert f"corpus bm25:elsewhere, fit on {fit['corpus']}" in conf.note


@pytest.mark.parametrize(
    ("task", "said"),
    [("open", None), ("longform", None), ("yesno", "task yesno, fit on multihop")],
)
def test_a_baselines_task_counts_by_the_prompt_it_makes(task: str, said: str | None) -> None:
    """retrieve-read asks an open question as it asks a HotpotQA one (no label instruction):
    the calibrator fit on multi-hop questions maps it; a Yes/No question is asked otherwise."""
    fit = {"method": "retrieve-read", "model": MODEL, "task": "multihop", "corpus": "bm25:demo"}
    found = differences(fit, {**fit, "task": task})
    assert found == ([] if said is None else [said])
    # SearChain's task is its CoQ prompt family (a chain's configuration names its label rule)
    searchain_fit = {**fit, "method": "searchain", "label_rule": 1}
    assert differences(searchain_fit, {**searchain_fit, "task": "open"}) == [
        "task open, fit on multihop"
    ]


def test_the_labelled_tasks_are_the_baselines_label_instructions() -> None:
    assert set(LABELLED_TASKS) == set(LABEL_INSTRUCTIONS)


def test_a_users_calibrator_is_read_again_when_it_changes(own_calibrators: Path) -> None:
    """A running `serve` uses a calibrator `searchain calibrate` fits beside it: the file is
    read again when it changes, and the packaged one is found again when it is removed."""
    shipped = _shipped()[f"retrieve-read--{MODEL}"]
    mine = own_calibrators / f"calibrator-retrieve-read--{MODEL}.json"
    mine.write_text(json.dumps({**shipped, "bias": 1.0}), encoding="utf-8")
    assert _bias(shipped_calibrator("retrieve-read", MODEL)) == 1.0
    mine.write_text(json.dumps({**shipped, "bias": -2.5}), encoding="utf-8")
    assert _bias(shipped_calibrator("retrieve-read", MODEL)) == -2.5
    mine.unlink()
    assert _bias(shipped_calibrator("retrieve-read", MODEL)) == shipped["bias"]


def _bias(calibrator: Calibrator | None) -> float:
    assert calibrator is not None
    return calibrator.bias
