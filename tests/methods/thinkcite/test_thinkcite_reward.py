"""Think&Cite's progress reward: R_g from two REAL models (the embedded Gemma GGUF and a copy
requantised to Q3_K_S here, a genuinely different model), R_a with NLI judges."""

from __future__ import annotations

import logging

import pytest

from recordings import recorded_llm
from searchain import prompts
from searchain.methods.thinkcite.reward import ProgressReward, RewardConfig
from searchain.readers.nli import LLMJudge
from searchain.types import Passage

QUESTION = "Where is the Eiffel Tower?"
SENTENCES = [
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France [1].",
    "It is named after the engineer Gustave Eiffel, whose company designed and built it [2].",
]
DOCS = [
    Passage("d1", "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in "
            "Paris, France.", "Eiffel Tower"),
    Passage("d2", "It is named after the engineer Gustave Eiffel, whose company designed and "
            "built it.", "Eiffel Tower"),
    Passage("d3", "Bananas are rich in potassium.", "Banana"),
]  # fmt: skip


@pytest.fixture(scope="module")
def models(reference_gguf):
    from searchain.llm.local import LocalLLM

    return LocalLLM(n_ctx=1024), LocalLLM(reference_gguf, n_ctx=1024)


def context(before: str) -> str:
    return prompts.fill("thinkcite/reward_context", question=QUESTION, answer=before)


@pytest.mark.slow
def test_rg_is_the_mean_sentence_log_ratio_of_two_real_models(models):
    policy, reference = models
    assert policy.model != reference.model
    prm = ProgressReward(RewardConfig(use_ra=False), model=policy, reference=reference)
    r = prm(QUESTION, SENTENCES, DOCS)
    # By hand: marks stripped, each sentence scored after the question and the ones before it.
    plain = [s.rsplit(" [", 1)[0] + "." for s in SENTENCES]
    ratios = []
    for k, s in enumerate(plain):
        ctx = context("".join(" " + x for x in plain[:k]))
        ratios.append(policy.score(ctx, " " + s).total - reference.score(ctx, " " + s).total)
    assert r.parts["r_g"] == pytest.approx(sum(ratios) / 2, abs=1e-6)
    assert r.total == pytest.approx(r.parts["r_g"])
    assert r.parts["r_a"] is None
    # The less damaged model finds fluent text likelier: the policy's ratio is positive.
    assert all(x > 0.5 for x in ratios)
    # Antisymmetric in the two models, exactly zero against itself.
    swapped = ProgressReward(RewardConfig(use_ra=False), model=reference, reference=policy)
    assert swapped(QUESTION, SENTENCES, DOCS).total == pytest.approx(-r.total, abs=1e-6)
    same = ProgressReward(RewardConfig(use_ra=False), model=policy, reference=policy)
    assert same(QUESTION, SENTENCES, DOCS).total == 0.0


@pytest.mark.slow
def test_rg_extending_a_path_scores_only_the_new_sentence(models):
    policy, reference = models
    prm = ProgressReward(RewardConfig(use_ra=False), model=policy, reference=reference)
    prm(QUESTION, SENTENCES[:1], DOCS)
    calls = prm.usage.llm_calls
    assert calls == 2  # one scoring call per model
    prm(QUESTION, SENTENCES, DOCS)
    assert prm.usage.llm_calls == calls + 2 and prm.memo_hits == 1


def test_without_a_reference_model_rg_is_off_and_says_so(caplog):
    judge = LLMJudge(recorded_llm("thinkcite_reward"))
    with caplog.at_level(logging.WARNING):
        prm = ProgressReward(RewardConfig(), judge=judge, model=judge.llm, reference=None)
    assert not prm.rg_active and prm.ra_active
    assert any("reward model and its reference" in m for m in prm.status)
    assert "reward model and its reference" in caplog.text
    with pytest.raises(ValueError, match="no active part"):
        ProgressReward(RewardConfig(use_ra=False), judge=judge, model=judge.llm)


def keyword_nli(premise: str, hypothesis: str) -> bool:
    """Entailed when every content word (> 3 letters) of the hypothesis is in the premise."""
    words = {w.strip(".,").lower() for w in hypothesis.split() if len(w.strip(".,")) > 3}
    return words <= {w.strip(".,").lower() for w in premise.split()}


def test_ra_is_the_f1_of_citation_recall_and_precision_by_hand():
    prm = ProgressReward(RewardConfig(use_rg=False), judge=keyword_nli)
    assert prm(QUESTION, SENTENCES, DOCS).total == pytest.approx(1.0)  # both supported
    # Second sentence cites the banana page too: recall 2/2; its [3] is irrelevant
    # ([2] alone entails, [2] without [3] still does): precision 2/3; F1 = 0.8.
    r = prm(QUESTION, [SENTENCES[0], SENTENCES[1].replace("[2]", "[2][3]")], DOCS)
    assert (r.parts["citation_recall"], r.parts["citation_precision"]) == (
        1.0,
        pytest.approx(2 / 3),
    )
    assert r.parts["r_a"] == pytest.approx(0.8)
    # Citing only the banana page: sentence 2 unsupported, recall 1/2, precision 1/2.
    r = prm(QUESTION, [SENTENCES[0], SENTENCES[1].replace("[2]", "[3]")], DOCS)
    assert r.parts["r_a"] == pytest.approx(0.5)
    assert prm(QUESTION, [], DOCS).total == 0.0  # the root has no answer yet


def test_ra_with_the_llm_judge_on_recorded_real_outputs():
    llm = recorded_llm("thinkcite_reward")
    judge = LLMJudge(llm)
    prm = ProgressReward(RewardConfig(use_rg=False), judge=judge)
    r = prm(QUESTION, SENTENCES, DOCS)
    verdicts = [judge.entails(f"Title: {d.title}\n{d.text}", s.rsplit(" [", 1)[0] + ".")
                for d, s in zip(DOCS[:2], SENTENCES, strict=True)]  # fmt: skip
    recall = sum(verdicts) / 2
    assert r.parts["citation_recall"] == recall
    assert r.parts["citation_precision"] == recall  # one citation per sentence
    assert 0.0 <= r.parts["r_a"] <= 1.0
    n = llm.usage.llm_calls + llm.usage.cached_calls
    prm(QUESTION, SENTENCES, DOCS)  # the same path again: every judgement memoised
    assert llm.usage.llm_calls + llm.usage.cached_calls == n


def test_qampari_ra_judges_list_items_as_its_metric_does():
    """Issue 29 T10: QAMPARI's metric splits the answer into comma items, each judged with
    the question before it; R_a of the qampari family does the same, so one unsupported item
    in a one-sentence list lowers R_a where a sentence split would judge the whole list."""
    docs = [Passage("p1", "Paris is a city in France.", "Paris"),
            Passage("p2", "Lyon is a city in France.", "Lyon")]  # fmt: skip
    question = "France city"
    answer = ["Paris [1], Lyon [2], Berlin [2]."]
    as_list = ProgressReward(RewardConfig(use_rg=False), judge=keyword_nli, list_answer=True)
    r = as_list(question, answer, docs)
    assert r.parts["citation_recall"] == pytest.approx(2 / 3)  # "Berlin" is in no document
    as_sentence = ProgressReward(RewardConfig(use_rg=False), judge=keyword_nli)
    assert as_sentence(question, answer, docs).parts["citation_recall"] == 0.0
    from searchain.methods.thinkcite import ThinkCiteConfig
    from searchain.scoring import parse_cited_sentences

    units = parse_cited_sentences(answer[0], question=question, list_answer=True)
    assert [u.text for u in units] == [f"{question} Paris", f"{question} Lyon",
                                       f"{question} Berlin"]  # fmt: skip
    assert ThinkCiteConfig.from_options(family="qampari").agent.family == "qampari"
