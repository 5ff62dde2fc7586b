"""Metrics on hand-checked cases: every expected value below was worked out by hand from the
definition the metric's docstring cites."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchain import citations
from searchain.eval.analyses import (
    efficiency,
    ir_effects,
    ir_misleading_rate,
    knowledge_source_split,
)
from searchain.eval.bootstrap import bootstrap_ci
from searchain.scoring import (
    CitedSentence,
    citation_precision,
    citation_recall,
    citation_scores,
    claim_recall,
    cover_em,
    dpr_tokenize,
    exact_match,
    extract_label,
    has_answer,
    label_accuracy,
    parse_cited_sentences,
    qampari_precision,
    qampari_recall_5,
    qampari_scores,
    recall_at_k,
    rouge_l,
    skc,
    str_em,
    token_f1,
    trace_citation_scores,
)
from searchain.types import Citation, Node, Passage, Trace, Usage

try:
    import regex
except ImportError:  # pragma: no cover - regex comes with transformers
    regex = None

# -- cover-EM, EM, F1 --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prediction", "golds", "expected"),
    [
        ("Arthur's Magazine started in 1844.", ["1844"], 1.0),
        ("It started in 18445.", ["1844"], 0.0),  # whole words only
        ("53° N", ["53"], 1.0),  # a symbol normalisation keeps ends the word
        ("at 41.5°N", ["41 5"], 0.0),  # "." is dropped: 415°n, one number
        ("café", ["caf"], 0.0),  # a non-ASCII letter does not
        ("So the answer is The Beatles!", ["beatles"], 1.0),  # article and "!" normalised away
        ("So the answer is Beatles", ["The Beatles."], 1.0),
        ("Toronto Coach Terminal", ["Coach Terminal, Toronto"], 0.0),  # order matters
        ("no answer here", [], 0.0),
        ("anything", [""], 0.0),  # an empty gold never matches
        ("Paris is the capital", "Paris", 1.0),  # a bare string is one gold answer
        ("Emperor Yongle", ["Yongle Emperor", "Zhu Di", "Yongle"], 1.0),
    ],
)
def test_cover_em(prediction: str, golds: list[str], expected: float) -> None:
    assert cover_em(prediction, golds) == expected


def test_cover_em_hyphen_joins_digits() -> None:
    # SQuAD normalisation deletes "-", so "1844-5" becomes the word "18445".
    assert cover_em("It started in 1844-5.", ["1844"]) == 0.0
    assert cover_em("It started in 1844 - 5.", ["1844"]) == 1.0


def test_exact_match_and_f1() -> None:
    assert exact_match("The Cat.", ["cat"]) == 1.0
    assert exact_match("a black cat", ["cat"]) == 0.0
    assert exact_match("x", ["y", "An X"]) == 1.0
    # pred {cat, sat} (the removed), gold {cat, sat, down} (a removed): P 2/2, R 2/3 -> 0.8
    assert token_f1("the cat sat", ["a cat sat down"]) == pytest.approx(0.8)
    # best over golds: "cat" vs "cat sat" -> P 1, R 1/2 -> 2/3
    assert token_f1("cat", ["dog", "cat sat"]) == pytest.approx(2 / 3)
    # bags of tokens: common {b: 1, c: 1} -> P = R = 2/3
    assert token_f1("b b c", ["b c c"]) == pytest.approx(2 / 3)
    assert token_f1("the", ["a"]) == 1.0  # both empty after normalisation (SQuAD v2)
    assert token_f1("the", ["cat"]) == 0.0
    assert token_f1("cat", []) == 0.0


# -- labels -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "label"),
    [
        ("December is in winter. So the answer is Yes.", "yesno", "yes"),
        ("So the final answer is: no, because there are no yes-men.", "yesno", "no"),
        ("No. A pear has a density of 0.59 g/cm^3, so yes it floats", "yesno", "no"),
        ("There is yes and there is no", "yesno", "no"),  # no answer phrase: the last one
        ("The answer is unclear.", "yesno", None),
        ("Nothing to see", "yesno", None),  # "no" must be a whole word
        ("Rage formed in 1991 [1]. So the answer is REFUTES.", "fever", "REFUTES"),
        ("The claim is supported [1]. So the final answer is SUPPORTS", "fever", "SUPPORTS"),
        ("Evidence refuted it, but the answer is: not enough info", "fever", "NOT ENOUGH INFO"),
        ("It supports it. Later it was refuted.", "fever", "REFUTES"),  # last mention
        ("NOT ENOUGH INFO", "fever", "NOT ENOUGH INFO"),
    ],
)
def test_extract_label(text: str, kind: str, label: str | None) -> None:
    assert extract_label(text, kind) == label  # type: ignore[arg-type]


def test_label_accuracy() -> None:
    assert label_accuracy("So the answer is Yes.", "yes") == 1.0
    assert label_accuracy("So the answer is Yes.", "no") == 0.0
    assert label_accuracy("so the answer is refutes", "REFUTES") == 1.0
    assert label_accuracy("So the answer is SUPPORTS.", "Not Enough Info") == 0.0
    assert label_accuracy("I cannot tell.", "SUPPORTS") == 0.0
    with pytest.raises(ValueError):
        label_accuracy("Paris", "Paris")


# -- ROUGE-L ------------------------------------------------------------------------------------


def test_rouge_l_hand_computed() -> None:
    # tokens 6 / 6, LCS "the cat on the mat" = 5: P = R = 5/6, F = 5/6
    assert rouge_l("The cat sat on the mat.", "The cat was on the mat.") == pytest.approx(5 / 6)
    # Porter stemming: cats->cat, running/runs->run
    assert rouge_l("Cats running", "cat runs") == pytest.approx(1.0)
    # citation marks are removed first
    assert rouge_l("The cat sat on the mat [1][2].", "The cat sat on the mat.") == 1.0
    # best of several references: "a b c d" vs "a b x y" -> LCS 2, F 0.5; vs "a b c z" -> 0.75
    assert rouge_l("alpha beta gamma delta", ["alpha beta xi yota", "alpha beta gamma zeta"]) == (
        pytest.approx(0.75)
    )
    assert rouge_l("", "the cat") == 0.0
    with pytest.raises(ValueError):
        rouge_l("x", [])


def test_rouge_l_summary_level() -> None:
    # rougeLsum: union LCS per reference sentence. Ref sentences r1 "alpha beta gamma",
    # r2 "delta epsilon"; candidate "delta epsilon. alpha beta gamma." matches both fully
    # (rougeL on the flat sequence would give LCS 3 of 5).
    assert rouge_l("Delta epsilon. Alpha beta gamma.", "Alpha beta gamma. Delta epsilon.") == 1.0


# -- DPR has_answer / Recall@k ----------------------------------------------------------------


def test_dpr_tokenize() -> None:
    assert dpr_tokenize("Hello, World! It's 1,844.") == [
        "hello", ",", "world", "!", "it", "'", "s", "1", ",", "844", ".",
    ]  # fmt: skip
    assert dpr_tokenize("Café\tnaïve") == dpr_tokenize("CAFE\u0301 NAI\u0308VE")


def test_has_answer() -> None:
    assert has_answer(["Chief of Protocol"], "served as chief of protocol of the US.")
    assert has_answer(["U.S.A."], "born in the u.s.a. in 1950")
    assert has_answer("1844", "It ran (1844-1846) in Philadelphia.")  # "-" is its own token
    assert not has_answer("1844", "in 18445")
    assert not has_answer("1844", "1,844 copies")  # "1 , 844" is not "1844"
    assert not has_answer(["hello world"], "Hello, World!")  # the comma is a token
    assert has_answer(["Hello, World"], "hello , world !")
    assert has_answer(["Café"], "at the CAFE\u0301 today")  # NFD, uncased
    assert not has_answer([""], "anything")
    assert not has_answer([], "anything")
    # a Passage is matched on its text only, as DPR does
    assert not has_answer("Shirley Temple", Passage("p", "She was a diplomat.", "Shirley Temple"))


@pytest.mark.skipif(regex is None, reason="the regex package is not installed")
@settings(max_examples=200, deadline=None)
# Characters both Unicode databases agree exist (regex may know newer code points).
@given(st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cn", "Cs")), max_size=40))
def test_dpr_tokenize_matches_dpr_regex(text: str) -> None:
    # DPR's SimpleTokenizer, verbatim (it needs the third-party regex module for \p{..}).
    pattern = regex.compile(
        r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])",
        flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE,
    )
    expected = [m.group().lower() for m in pattern.finditer(unicodedata.normalize("NFD", text))]
    assert dpr_tokenize(text) == expected


def test_recall_at_k() -> None:
    ranked = [
        Passage("B#0#1", "Kevin Drew is a Canadian musician.", "B"),
        Passage("C", "Greyhound buses leave from the Toronto Coach Terminal.", "C"),
        Passage("A#0", "Kevin Drew was born in Toronto.", "A"),
    ]
    assert recall_at_k(ranked, ["Toronto Coach Terminal"], 1) == 0.0
    assert recall_at_k(ranked, ["Toronto Coach Terminal"], 2) == 1.0
    # gold ids: "B" is found through its split piece "B#0#1"; "A#0" only at rank 3
    assert recall_at_k(ranked, ["A#0", "B"], 2, by="id") == 0.5
    assert recall_at_k(ranked, ["A#0", "B"], 3, by="id") == 1.0
    assert recall_at_k(ranked, ["A#01"], 3, by="id") == 0.0
    assert recall_at_k(["x", "A#0"], ["A#0"], 2, by="id") == 1.0  # strings are ids here
    assert recall_at_k([{"id": "A#0", "text": "born in Toronto"}], "Toronto", 1) == 1.0
    with pytest.raises(ValueError):
        recall_at_k(ranked, [], 3, by="id")
    with pytest.raises(ValueError):
        recall_at_k(ranked, ["x"], 0)


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


# -- SearChain analyses -------------------------------------------------------------------------


def _trace(final: str, answer: str = "", nodes: list[Node] | None = None, **kw: object) -> Trace:
    return Trace(question="q", method="m", final_content=final, answer=answer,
                 nodes=nodes or [], **kw)  # type: ignore[arg-type]  # fmt: skip


def test_skc() -> None:
    refs = [Passage("a", "x"), Passage("", ""), Passage("c", "z")]
    text = (
        "Drew is Canadian [1]. He was born in Toronto [2]. Buses leave from the terminal [3]. "
        "So the answer is the terminal."
    )
    cites, _ = citations.resolve(text, refs)
    for c in cites:
        if c.passage_id == "":
            c.passage_id = None  # a step without a passage supports nothing
    final = text.replace("the terminal.", "the terminal [1].")  # post-hoc citation added
    post = Citation(1, "a", "So the answer is the terminal [1].", origin="post-hoc")
    trace = _trace(final, citations=[*cites, post])
    assert skc(trace) == 2
    assert skc(trace, post_hoc=True) == 3
    assert skc(_trace("No marks at all.")) == 0


def _node(i: str, source: str, status: str | None = None) -> Node:
    return Node(id=i, query=i, answer="a", source=source, meta={"status": status} if status else {})


def test_knowledge_source_split() -> None:
    t1 = _trace("", nodes=[
        Node(id="q", query="q", source="question"),
        _node("r1.1", "llm", "verified"),
        _node("r1.2", "ir-corrected", "corrected"),
        _node("r1.3", "llm", "unverified"),  # abandoned after the correction
        _node("r2.3", "llm", "verified"),
    ], meta={"path": ["r1.1", "r1.2", "r2.3"]})  # fmt: skip
    t2 = _trace(
        "", nodes=[_node("r1.1", "ir-completed", "completed"), _node("r1.2", "llm", "duplicate")]
    )
    split = knowledge_source_split([t1, t2, None])
    assert split["nodes"] == 4  # checked: verified x2, corrected, completed
    assert split["llm"] == pytest.approx(2 / 4)
    assert split["ir-corrected"] == pytest.approx(1 / 4)
    assert split["ir-completed"] == pytest.approx(1 / 4)
    everything = knowledge_source_split([t1, t2], scope="all")
    assert everything["nodes"] == 6 and everything["llm"] == pytest.approx(4 / 6)
    path = knowledge_source_split([t1], scope="path")
    assert path["nodes"] == 3 and path["ir-corrected"] == pytest.approx(1 / 3)
    assert knowledge_source_split([])["nodes"] == 0


def test_ir_effects_and_misleading_rate() -> None:
    golds = [["Paris"], ["1844"], ["Toronto"], ["Kabul"], ["Lima"]]

    def said(answer: str, **kw: object) -> Trace:  # correct = cover-EM of the final answer
        return _trace(f"The chain names Paris and Toronto. {answer}", answer, **kw)

    without = [said("Paris"), said("1844"), said("Ottawa"), said("Kabul"), None]
    corrected = [_node("n", "ir-corrected", "corrected")]
    with_ir = [
        said("Paris"),  # right both ways
        said("18445", nodes=corrected),  # misled: right without IR, wrong with it
        said("Toronto", nodes=corrected),  # helped
        said("Kabul"),
        said("Lima"),
    ]
    out = ir_effects(with_ir, without, golds)
    assert out["correct_without_ir"] == 3 and out["misled"] == 1
    assert out["misleading_rate"] == pytest.approx(1 / 3)
    assert out["accuracy_without_ir"] == pytest.approx(3 / 5)
    assert out["accuracy_with_ir"] == pytest.approx(4 / 5)
    assert out["ir_helped"] == 2
    assert out["accuracy_without_ir_on_ir_helped"] == pytest.approx(1 / 2)
    assert out["accuracy_with_ir_on_ir_helped"] == pytest.approx(1 / 2)
    assert ir_misleading_rate(with_ir, without, golds) == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        ir_misleading_rate(with_ir[:2], without, golds)


def test_efficiency() -> None:
    a = _trace(
        "x",
        rounds=1,
        wall_seconds=2.0,
        usage=Usage(llm_calls=2, prompt_tokens=100, completion_tokens=10, llm_seconds=1.5),
    )
    b = _trace(
        "y",
        rounds=3,
        wall_seconds=4.0,
        usage=Usage(llm_calls=4, prompt_tokens=300, completion_tokens=30, llm_seconds=2.5),
    )
    out = efficiency([a, b, None])
    assert out == {
        "questions": 2.0,
        "prompt_tokens": 200.0,
        "completion_tokens": 20.0,
        "rounds": 2.0,
        "seconds": 3.0,
        "llm_calls": 3.0,
        "llm_seconds": 2.0,
    }


# -- bootstrap ------------------------------------------------------------------------------------


def test_bootstrap_ci() -> None:
    values = [1.0] * 30 + [0.0] * 70
    mean, lo, hi = bootstrap_ci(values, seed=0)
    assert mean == pytest.approx(0.3)
    assert lo < mean < hi
    assert 0.18 < lo < 0.26 and 0.34 < hi < 0.42  # ~ 0.3 ± 1.96·sqrt(0.21/100)
    assert bootstrap_ci(values, seed=0) == (mean, lo, hi)  # deterministic
    assert bootstrap_ci(values, seed=1) != (mean, lo, hi)
    assert bootstrap_ci([0.5]) == (0.5, 0.5, 0.5)
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0, 1.0)
    narrow = bootstrap_ci(values, alpha=0.5)
    assert lo < narrow[1] <= narrow[2] < hi
    with pytest.raises(ValueError):
        bootstrap_ci([])


def test_citations_of_any_dataset_are_scored_when_a_judge_is_named() -> None:
    """`searchain eval --nli` scores the citations of a HotpotQA answer as ALCE's would be
    (bench/quality.py's hotpotqa-attribution); without a judge, a non-ALCE item gets none."""
    from searchain.scoring.alce import alce_scores
    from searchain.types import Citation, Trace

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
