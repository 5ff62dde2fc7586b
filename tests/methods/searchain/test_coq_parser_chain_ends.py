"""The Chain-of-Query parser on unsolved queries and where a chain ends (final content, a new
question, no tags at all)."""

from __future__ import annotations

from coq_kit import (
    DEMO_1,
    DEMO_1_FINAL,
    DEMO_1_PAIRS,
    DEMO_2,
    pairs,
)
from searchain.methods.searchain.coq_parser import Chain, CoQNode, parse_chain


# -- unsolved queries ------------------------------------------------------------------------------
def test_unsolved_query_marks_the_current_node() -> None:
    text = "[Query 1]: Where was Kevin Drew born?\n[Unsolved Query]: where was kevin drew born\n"
    chain = parse_chain(text)
    assert chain.nodes == [CoQNode(1, "Where was Kevin Drew born?", None, True)]


def test_unsolved_query_with_new_text_starts_a_node() -> None:
    text = """\
[Query 1]: Where was Kevin Drew born?
[Unsolved Query]: In which city was the singer Kevin Drew born?
[Query 2]: Where do greyhound buses leave from in that city?
[Answer 2]: The bus terminal."""
    chain = parse_chain(text)
    assert chain.nodes == [
        CoQNode(1, "Where was Kevin Drew born?", None, True),
        CoQNode(2, "In which city was the singer Kevin Drew born?", None, True),
        CoQNode(3, "Where do greyhound buses leave from in that city?", "The bus terminal.", False),
    ]


def test_unsolved_query_without_a_query_before_it() -> None:
    text = "[Unsolved Query]: Who is the performer of Spirit If... ?\n[Query 2]: Where was he born?"
    assert pairs(parse_chain(text)) == [
        ("Who is the performer of Spirit If... ?", None),
        ("Where was he born?", None),
    ]


def test_unsolved_query_after_an_answered_node_with_new_text() -> None:
    text = "[Query 1]: Who directed Jaws?\n[Answer 1]: Steven Spielberg.\n"
    text += "[Unsolved Query]: Where was Steven Spielberg born?\n"
    assert pairs(parse_chain(text)) == [
        ("Who directed Jaws?", "Steven Spielberg."),
        ("Where was Steven Spielberg born?", None),
    ]


def test_text_after_unsolved_query_is_ignored() -> None:
    # StrategyQA demos: the unsolved branch ends with an instruction to stop.
    text = """\
[Question]: Is it common to see frost during some college commencements?
[Query 1]: What seasons can you expect to see frost?
[Answer 1]: Frost usually can be seen in the winter.
[Query 2]: What months do college commencements occur?
[Unsolved Query]: What months do college commencements occur?
Instruction: Please stop your generation.
Commencements happen whenever.
[Query 3]: Do any of the months December, May, and sometimes June occur during winter?
[Unsolved Query]: Do any of the months December, May, and sometimes June occur during winter? \
Instruction: Please stop your generation."""
    chain = parse_chain(text)
    assert pairs(chain) == [
        ("What seasons can you expect to see frost?", "Frost usually can be seen in the winter."),
        ("What months do college commencements occur?", None),
        ("Do any of the months December, May, and sometimes June occur during winter?", None),
    ]


# -- where the chain ends --------------------------------------------------------------------------
def test_no_final_content() -> None:
    text = DEMO_2.split("[Final Content]")[0]
    chain = parse_chain(text)
    assert len(chain.nodes) == 2
    assert chain.final_content == ""


def test_final_content_stops_at_a_new_question() -> None:
    text = DEMO_1 + '\n[Question]: "Which magazine was started first?"\n' + DEMO_2
    chain = parse_chain(text)
    assert pairs(chain) == DEMO_1_PAIRS
    assert chain.final_content == DEMO_1_FINAL


def test_final_content_spans_lines() -> None:
    text = "[Query 1]: Who directed Jaws?\n[Answer 1]: Steven Spielberg.\n"
    text += "[Final Content]:\nSteven Spielberg directed Jaws [1].\nSo the answer is Spielberg.\n"
    assert parse_chain(text).final_content == (
        "Steven Spielberg directed Jaws [1].\nSo the answer is Spielberg."
    )


def test_new_question_after_nodes_ends_the_chain() -> None:
    text = """\
[Query 1]: When was Arthur's Magazine started?
[Answer 1]: 1844.
[Question]: "Which magazine was started first Arthur's Magazine or First for Women?"
[Query 1]: When was First for Women started?
[Answer 1]: 1989
[Final Content]: So the answer is Arthur's Magazine."""
    chain = parse_chain(text)
    assert pairs(chain) == [("When was Arthur's Magazine started?", "1844.")]
    assert chain.final_content == ""


def test_question_before_the_chain_is_skipped() -> None:
    text = '[Question]: "Which magazine was started first?"\nQuestion: again?\n' + DEMO_2
    assert pairs(parse_chain(text)) == pairs(parse_chain(DEMO_2))


def test_final_content_without_a_chain() -> None:
    chain = parse_chain("Sure! [Final Content]: Arthur's Magazine.")
    assert chain.nodes == []
    assert chain.final_content == "Arthur's Magazine."


def test_text_without_tags() -> None:
    for text in ["", "   \n", "I don't know.", "[1] [2]: nothing"]:
        chain = parse_chain(text)
        assert chain == Chain(nodes=[], final_content="", raw=text)


def test_none_reads_as_empty_text() -> None:
    assert parse_chain(None) == Chain([], "", "")  # type: ignore[arg-type]


def test_huge_node_number_does_not_raise() -> None:
    text = f"[Query {'9' * 5000}]: Who directed Jaws?\n[Answer {'1' * 5000}]: Spielberg."
    assert pairs(parse_chain(text)) == [("Who directed Jaws?", "Spielberg.")]


def test_echoed_unsolved_query_reworded() -> None:
    # The echoed demo with a reworded "[Unsolved Query]": it is a new node of the same step, and
    # the answer goes to it (the last open node), as an unnumbered answer would.
    text = """\
 "Which city is the capital of the country where the Eiffel Tower is?"
[Query 1]: Where is the Eiffel Tower?
If you don't know the answer:
[Unsolved Query]: Where is the Eiffel Tower located?
If you know the answer:
[Answer 1]: The Eiffel Tower is in Paris, France.
[Query 2]: What is the capital of France?
[Answer 2]: Paris
[Final Content]: The capital of France is Paris [2]. So the final answer is Paris."""
    assert pairs(parse_chain(text)) == [
        ("Where is the Eiffel Tower?", None),
        ("Where is the Eiffel Tower located?", "The Eiffel Tower is in Paris, France."),
        ("What is the capital of France?", "Paris"),
    ]


def test_stray_numbered_answer_does_not_drift_to_an_earlier_step() -> None:
    text = """\
[Query 1]: Who directed Jaws?
[Query 2]: Where was Steven Spielberg born?
[Answer 2]: Cincinnati.
[Query 3]: Is Cincinnati in Ohio?
[Answer 3]: Yes.
[Answer 1]: Steven Spielberg."""
    assert pairs(parse_chain(text)) == [
        ("Who directed Jaws?", None),
        ("Where was Steven Spielberg born?", "Cincinnati."),
        ("Is Cincinnati in Ohio?", "Yes."),
    ]
