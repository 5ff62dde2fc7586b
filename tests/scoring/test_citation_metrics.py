"""Citation metrics and ALCE's answer metrics on hand-checked cases (each expected value
worked out by hand from the definition the metric's docstring cites)."""

from __future__ import annotations

import re

import pytest

from searchain.scoring import (
    CitedSentence,
    citation_precision,
    citation_recall,
    citation_scores,
    claim_recall,
    cover_em,
    parse_cited_sentences,
    qampari_precision,
    qampari_recall_5,
    qampari_scores,
    str_em,
    trace_citation_scores,
)
from searchain.types import Citation, Passage, Trace

# -- citations -----------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
NLI_CALLS: list[tuple[str, str]] = []


def keyword_nli(premise: str, hypothesis: str) -> bool:
    """A fake but deterministic NLI judge: entailed iff every word of 4+ letters of the
    hypothesis occurs in the premise."""
    NLI_CALLS.append((premise, hypothesis))
    have = set(_WORD.findall(premise.lower()))
    return all(w in have for w in _WORD.findall(hypothesis.lower()) if len(w) >= 4)


DOCS = [
    Passage("p1", "Prater kicked a 64 yard field goal in 2013.", "Matt Prater"),
    Passage("p2", "The Broncos play home games in Denver.", "Denver Broncos"),
    Passage("p3", "The longest field goal record is 64 yards.", "Field goal records"),
    Passage("p4", "It snowed.", "Weather"),
]


def test_citation_recall_and_precision_hand_made() -> None:
    sentences = [
        # p1 alone entails it; p4 alone does not and {p1} still does -> p4 is irrelevant
        CitedSentence("Prater kicked a 64 yard field goal.", (1, 4)),
        # only the two together entail it: both citations relevant
        CitedSentence("Prater kicked for the Broncos in Denver.", (1, 2)),
        CitedSentence("The record is 64 yards.", (3,)),  # single citation, entailed
        CitedSentence("Denver is snowy.", (4,)),  # not entailed: recall 0, its citation 0
        CitedSentence("This sentence has no citation.", ()),  # recall 0, no citation
        CitedSentence("The record is 64 yards.", (7,)),  # out of range: recall 0, not counted
    ]
    scores = citation_scores(sentences, DOCS, keyword_nli)
    assert scores.sentences == 6 and scores.supported == 3
    assert scores.recall == pytest.approx(3 / 6)
    # citations counted: 2 + 2 + 1 + 1 = 6; relevant: 1 + 2 + 1 + 0 = 4
    assert (scores.citations, scores.irrelevant) == (6, 1)
    assert scores.precision == pytest.approx(4 / 6)
    assert scores.f1 == pytest.approx(2 * 0.5 * (4 / 6) / (0.5 + 4 / 6))
    assert citation_recall(sentences, DOCS, keyword_nli) == scores.recall
    assert citation_precision(sentences, DOCS, keyword_nli) == scores.precision


def test_citation_precision_irrelevant_only_when_rest_still_supports() -> None:
    # Three citations, each needed: p1 (prater, kicked), p2 (broncos, denver), p3 (record).
    s = CitedSentence("Prater kicked the record for the Broncos in Denver.", (1, 2, 3))
    scores = citation_scores([s], DOCS, keyword_nli)
    assert (scores.recall, scores.precision, scores.irrelevant) == (1.0, 1.0, 0)
    # A sentence its citations do not support: recall 0 and precision 0 (ALCE), even
    # though no citation is "irrelevant" by the subset test.
    s = CitedSentence("Prater kicked a ball in Paris.", (1, 2))
    scores = citation_scores([s], DOCS, keyword_nli)
    assert (scores.recall, scores.precision, scores.citations) == (0.0, 0.0, 2)


def test_citation_cap_and_duplicates() -> None:
    # ALCE keeps the first 3 citations: [4][1][2] of [4][1][2][3]. p4 is irrelevant
    # ({p1, p2} entails without it), p1 and p2 are relevant: 2 of 3.
    s = CitedSentence("Prater kicked for the Broncos in Denver.", (4, 1, 2, 3))
    scores = citation_scores([s], DOCS, keyword_nli)
    assert (scores.citations, scores.irrelevant) == (3, 1)
    assert scores.precision == pytest.approx(2 / 3)
    uncapped = citation_scores([s], DOCS, keyword_nli, max_citations=None)
    assert uncapped.citations == 4
    # a repeated mark is one citation
    dup = citation_scores([CitedSentence("The record is 64 yards.", (3, 3))], DOCS, keyword_nli)
    assert (dup.citations, dup.precision) == (1, 1.0)


def test_zero_citations_and_empty_output() -> None:
    plain = [CitedSentence("Prater kicked a 64 yard field goal.", ())]
    assert citation_scores(plain, DOCS, keyword_nli).recall == 0.0
    assert citation_scores(plain, DOCS, keyword_nli).precision == 0.0
    empty = citation_scores([], DOCS, keyword_nli)
    assert (empty.recall, empty.precision, empty.sentences) == (0.0, 0.0, 0)
    # tuples work as sentences too
    assert citation_recall([("The record is 64 yards.", [3])], DOCS, keyword_nli) == 1.0


def test_nli_judgements_are_cached() -> None:
    NLI_CALLS.clear()
    s = CitedSentence("The record is 64 yards.", (3,))
    citation_scores([s, s, s], DOCS, keyword_nli)
    assert len(NLI_CALLS) == 1
    premise, hypothesis = NLI_CALLS[0]
    assert premise == "Title: Field goal records\nThe longest field goal record is 64 yards."
    assert hypothesis == "The record is 64 yards."


def test_parse_cited_sentences_and_trace() -> None:
    text = "Prater kicked a 64 yard field goal [1][4]. The record is 64 yards [3]. So it is 64."
    sentences = parse_cited_sentences(text)
    assert sentences == [
        CitedSentence("Prater kicked a 64 yard field goal.", (1, 4)),
        CitedSentence("The record is 64 yards.", (3,)),
        CitedSentence("So it is 64.", ()),
    ]
    qampari = parse_cited_sentences("Heat [1], Akira [2][3].", question="Q?", list_answer=True)
    assert qampari == [CitedSentence("Q? Heat", (1,)), CitedSentence("Q? Akira", (2, 3))]
    trace = Trace(question="q", method="m", final_content=text, references=DOCS)
    scores = trace_citation_scores(trace, keyword_nli)
    # sentence 1 entailed (p4 irrelevant), 2 entailed, 3 uncited -> recall 2/3, precision 2/3
    assert scores.recall == pytest.approx(2 / 3)
    assert scores.precision == pytest.approx(2 / 3)


# -- ALCE answer metrics -------------------------------------------------------------------------

GROUPS = [["Heat"], ["Wounded Man", "The Wounded Man"], ["Sanctuary"], ["Crying Freeman"],
          ["Strain"], ["Mai"]]  # fmt: skip


def test_qampari() -> None:
    # preds: heat, wounded man, akira, sanctuary -> 3 of 4 correct; 3 of 6 answers found
    s = qampari_scores("Heat [1], The Wounded Man, Akira, Sanctuary.", GROUPS)
    assert s["precision"] == pytest.approx(3 / 4)
    assert s["recall"] == pytest.approx(3 / 6)
    assert s["recall_top5"] == pytest.approx(3 / 5)
    assert s["f1_top5"] == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert s["num_preds"] == 4
    assert qampari_precision("Heat, Akira", GROUPS) == 0.5
    # 5 correct of 6 answers: full recall-5
    assert qampari_recall_5("Heat, Wounded Man, Sanctuary, Crying Freeman, Strain", GROUPS) == 1.0
    assert qampari_scores("", GROUPS)["precision"] == 0.0


def test_str_em_uses_alce_substring_presence() -> None:
    groups = [["64 yards"], ["Ove Johansson"]]
    assert str_em("The record is 64 yards [1].", groups) == 0.5
    assert str_em("64 yards, by Ove Johansson.", groups) == 1.0
    assert str_em("It was 18445.", [["1844"]]) == 1.0  # substring, unlike cover-EM
    assert cover_em("It was 18445.", ["1844"]) == 0.0


def test_claim_recall() -> None:
    claims = [
        "Firms need to establish their brand before introducing ads.",
        "Uber is reinvesting money.",
        "Snapchat makes a profit.",
    ]
    output = (
        "Firms need to establish their brand and users before introducing ads [1]. "
        "Uber is reinvesting money [2]."
    )
    assert claim_recall(output, claims, keyword_nli) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        claim_recall(output, [], keyword_nli)


def test_citations_of_any_dataset_are_scored_when_a_judge_is_named() -> None:
    """`searchain eval --nli` scores the citations of a HotpotQA answer as ALCE's would be
    (bench/quality.py's hotpotqa-attribution); without a judge, a non-ALCE item gets none."""
    from searchain.scoring.alce import alce_scores
    from searchain.types import Trace

    trace = Trace(question="q", method="retrieve-read")
    trace.references = DOCS
    gold = {"answers": ["x"]}
    assert alce_scores(trace, gold, None) == {}
    trace.final_content = "Prater kicked a 64 yard field goal in 2013 [1]."
    trace.citations = [Citation(mark=1, passage_id=DOCS[0].id)]
    cited = alce_scores(trace, gold, keyword_nli)
    assert cited == {"citation_recall": 1.0, "citation_precision": 1.0}
    trace.final_content = "Prater kicked a 64 yard field goal in 2013 [2]."  # not what [2] says
    assert alce_scores(trace, gold, keyword_nli)["citation_recall"] == 0.0
