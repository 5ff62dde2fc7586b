"""Metrics on hand-checked cases: every expected value below was worked out by hand from the
definition the metric's docstring cites. Answer matching, labels, ROUGE-L and DPR's
has_answer / Recall@k here; citations and ALCE's answer metrics: test_citation_metrics.py."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchain.scoring import (
    cover_em,
    dpr_tokenize,
    exact_match,
    extract_label,
    has_answer,
    label_accuracy,
    recall_at_k,
    rouge_l,
    token_f1,
)
from searchain.types import Passage

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
