"""The Chain-of-Query parser on real Gemma 3 270M outputs (greedy and sampled, the spec's
multi-hop CoQ prompt), kept verbatim."""

from __future__ import annotations

from coq_kit import GEMMA_BOTH, pairs
from searchain.methods.searchain.coq_parser import parse_chain


# -- real Gemma 3 270M outputs (greedy and sampled, spec's multi-hop CoQ prompt) ------------------
def test_gemma_numbered_question_is_a_query() -> None:
    text = """\
[Query 1]: Who was born first, Albert Einstein?
[Answer 1]: Einstein.
[Question 2]: When was Niels Bohr born?
[Answer 1]: 1922.
[Final Content]: Niels Bohr was born in Denmark [2].
[Question 3]: Where was Einstein born?
[Answer 1]: Cairo [3]."""
    chain = parse_chain(text)
    assert pairs(chain) == [
        ("Who was born first, Albert Einstein?", "Einstein."),
        ("When was Niels Bohr born?", "1922."),
    ]
    assert chain.final_content == "Niels Bohr was born in Denmark [2]."


def test_gemma_chain_after_final_content_is_cut_off() -> None:
    text = """\
[Query 1]: the director of the film Jaws is Adam Geyer
[Answer 1]: France [2]
[Question 2]: The name of the film is Jaws
[Final Content]: The name of the film is Jaws
[Unsolved Query]: The name of the film is Jaws
[Answer 2]: France [3]: The name of the film is Jaws
[Final Content]:
[Question]: "What is the nationality of the director of the film Jaws?"
[Query 1]: The director of the film Jaws is Paul Greengrass."""
    chain = parse_chain(text)
    assert pairs(chain) == [
        ("the director of the film Jaws is Adam Geyer", "France [2]"),
        ("The name of the film is Jaws", None),
    ]
    assert chain.final_content == "The name of the film is Jaws"


def test_final_content_keeps_a_bare_answer_line() -> None:
    text = "[Query 1]: Who directed Jaws?\n[Answer 1]: Steven Spielberg.\n"
    text += "[Final Content]: Steven Spielberg directed Jaws [1].\nAnswer: Steven Spielberg\n"
    text += "If you know the answer:\n[Answer 2]: more"
    assert parse_chain(text).final_content == (
        "Steven Spielberg directed Jaws [1].\nAnswer: Steven Spielberg"
    )


def test_gemma_answers_before_queries_and_repeats() -> None:
    text = """\
[Answer 1]: No, they were not.
[Query 1]: Where was Scott Derrickson born?
[Answer 1]: Los Angeles.
[Answer 2]: Los Angeles
[Query 2]: Where was Ed Wood of the same nationality?
[Answer 1]: Detroit.
[Answer 3]: Detroit.
[Query 4]: Who is the performer of Spirit If...
[Answer 1]: The performer of Spirit If... is John T. Burdick [2].
<b>Question 1:</b>
[Answer 2]: 2002.
[Query 5]: Where was John T. Burdick born?
[Answer 4]: Los Angeles.
[Query 6]: Where were the &quot;Greyhound Buses in Los Angeles during the year 2002?
[Answer 5"""
    assert pairs(parse_chain(text)) == [
        ("Where was Scott Derrickson born?", "Los Angeles."),
        ("Where was Ed Wood of the same nationality?", "Detroit."),
        (
            "Who is the performer of Spirit If...",
            "The performer of Spirit If... is John T. Burdick [2].\n<b>Question 1:</b>",
        ),
        ("Where was John T. Burdick born?", "Los Angeles."),
        ("Where were the &quot;Greyhound Buses in Los Angeles during the year 2002?", None),
    ]


def test_gemma_demo_loop_keeps_the_first_chain() -> None:
    text = """\
[Query 1]: Were Scott Derrickson and Ed Wood of the same nationality?
[Answer 1]: Yes.
[Query 2]: Were Scott Derrickson and Ed Wood of the same nationality?
[Answer 1]: Yes.
[Final Content]: Scott Derrickson and Ed Wood of the same nationality.
[Question]: "Were Scott Derrickson and Ed Wood of the same nationality?"
[Query 1]: Were Scott Derrickson and Ed Wood of the same nationality?
[Answer 1]: Yes.
[Query 2"""
    chain = parse_chain(text)
    assert (
        pairs(chain) == [("Were Scott Derrickson and Ed Wood of the same nationality?", "Yes.")] * 2
    )
    assert chain.final_content == "Scott Derrickson and Ed Wood of the same nationality."


def test_gemma_bracketed_prose_and_echoed_scaffolding() -> None:
    text = (
        GEMMA_BOTH
        + """
[Question]: "Which magazine was started first Arthur's Magazine or First for Women?"
[Query 1]: When was Arthur's Magazine started?"""
    )
    chain = parse_chain(text)
    assert pairs(chain) == [
        ("The husband of the performer is the husband of [Answer: Annabelle].", None),
        (
            "Who is the husband of the performer of Thriller?",
            "The wife of the husband is the wife of the performer of Thriller.",
        ),
    ]
    assert [n.both for n in chain.nodes] == [False, True]  # an unsolved query, then answered
    assert chain.final_content == "The wife of the husband is the wife of [Answer: Annabelle]."


def test_gemma_answers_only() -> None:
    text = """\
[Answer 1]: Paris
[Question]: "Which city is the capital of the country where the Eiffel Tower is? "
[Answer 1]: Paris.
[Final Content]: The Eiffel Tower is the capital of France.
[Question]: "Which city is the capital of the country where the Eiffel Tower is? "
[Answer 1]: London."""
    chain = parse_chain(text)
    assert chain.nodes == []
    assert chain.final_content == "The Eiffel Tower is the capital of France."
