"""The Chain-of-Query parser on the paper's demos and the tags, answers and queries small models
really write (scaffolding echoed from the prompt, tags without numbers or brackets, repeats)."""

from __future__ import annotations

from coq_kit import (
    DEMO_1,
    DEMO_1_ECHOED,
    DEMO_1_FINAL,
    DEMO_1_PAIRS,
    DEMO_2,
    pairs,
)
from searchain.methods.searchain.coq_parser import CoQNode, parse_chain


# -- the paper's demos ----------------------------------------------------------------------------
def test_demo_1_parses_exactly() -> None:
    chain = parse_chain(DEMO_1)
    assert chain.nodes == [CoQNode(i, q, a, False) for i, (q, a) in enumerate(DEMO_1_PAIRS, 1)]
    assert chain.final_content == DEMO_1_FINAL
    assert chain.raw == DEMO_1


def test_demo_2_parses_exactly() -> None:
    chain = parse_chain(DEMO_2)
    assert chain.nodes == [
        CoQNode(1, "When was Arthur's Magazine started?", "1844.", False),
        CoQNode(2, "When was First for Women started?", "1989", False),
    ]
    assert chain.final_content == (
        "Arthur's Magazine started in 1844 [1]. First for Women started in 1989 [2]. "
        "So Arthur's Magazine was started first. So the answer is Arthur's Magazine."
    )


def test_brief_example_with_an_unsolved_node() -> None:
    text = """\
[Query 1]: Who is the performer of Spirit If... ?
[Answer 1]: The performer of Spirit If… is Kevin Drew.
[Query 2]: Where was Kevin Drew born?
[Unsolved Query]: Where was Kevin Drew born?
[Query 3]: Where do greyhound buses in Toronto leave from?
[Answer 3]: Toronto Coach Terminal.
[Final Content]: The performer of Spirit If… is Kevin Drew [1]. So the final answer is \
Toronto Coach Terminal."""
    chain = parse_chain(text)
    assert chain.nodes == [
        CoQNode(1, *DEMO_1_PAIRS[0], False),
        CoQNode(2, "Where was Kevin Drew born?", None, True),
        CoQNode(3, *DEMO_1_PAIRS[2], False),
    ]
    assert chain.final_content.endswith("So the final answer is Toronto Coach Terminal.")


# -- scaffolding echoed from the prompt ------------------------------------------------------------
def test_echoed_demo_with_both_alternatives_keeps_the_answer_and_flags_both() -> None:
    chain = parse_chain(DEMO_1_ECHOED)
    # The leading [Question] is skipped, the scaffolding leaves no trace, and every node that
    # carries both "[Unsolved Query]" and "[Answer]" keeps its answer, flagged: SearChain
    # decides what it is (both_tags; the paper sends it to completion).
    assert pairs(chain) == DEMO_1_PAIRS
    assert not any(n.unsolved for n in chain.nodes)
    assert all(n.both for n in chain.nodes)
    assert chain.final_content == DEMO_1_FINAL
    for n in chain.nodes:
        assert "know the answer" not in n.query + (n.answer or "")


def test_both_tags_in_either_order() -> None:
    text = "[Query 1]: Where was Kevin Drew born?\n[Answer 1]: Toronto.\n"
    text += "[Unsolved Query]: Where was Kevin Drew born?\n"
    chain = parse_chain(text)
    assert pairs(chain) == [("Where was Kevin Drew born?", "Toronto.")]
    assert chain.nodes[0].both
    # An unsolved query alone, or an answer alone, is no "both".
    alone = parse_chain("[Unsolved Query]: Where was Kevin Drew born?\n[Query 2]: Who?\n")
    assert [n.both for n in alone.nodes] == [False, False]
    assert not parse_chain(DEMO_2).nodes[0].both


def test_scaffolding_alone_keeps_the_node_unsolved() -> None:
    text = """\
[Query 1]: Who founded Rage Against the Machine?
If you don't know the answer:
[Unsolved Query]: Who founded Rage Against the Machine?
If you know the answer:
[Query 2]: When was Rage Against the Machine formed?
If you know the answer:
[Answer 2]: 1991."""
    assert pairs(parse_chain(text)) == [
        ("Who founded Rage Against the Machine?", None),
        ("When was Rage Against the Machine formed?", "1991."),
    ]


def test_scaffolding_on_the_query_line_is_cut_off() -> None:
    text = "[Query 1]: Who is Kevin Drew? If you don't know the answer: [Unsolved Query]: "
    text += "Who is Kevin Drew?\n"
    assert pairs(parse_chain(text)) == [("Who is Kevin Drew?", None)]


# -- tag tolerance ---------------------------------------------------------------------------------
def test_tags_without_numbers() -> None:
    text = """\
[Query]: When was Arthur's Magazine started?
[Answer]: 1844.
[Query]: When was First for Women started?
[Answer]: 1989
[Final Content]: So the answer is Arthur's Magazine."""
    chain = parse_chain(text)
    assert pairs(chain) == [
        ("When was Arthur's Magazine started?", "1844."),
        ("When was First for Women started?", "1989"),
    ]
    assert chain.final_content == "So the answer is Arthur's Magazine."


def test_tags_without_brackets() -> None:
    text = """\
Query 1: When was Arthur's Magazine started?
Answer 1: 1844.
Query 2: When was First for Women started?
Unsolved Query: When was First for Women started?
Final Content: Arthur's Magazine started in 1844 [1]."""
    chain = parse_chain(text)
    assert pairs(chain) == [
        ("When was Arthur's Magazine started?", "1844."),
        ("When was First for Women started?", None),
    ]
    assert chain.final_content == "Arthur's Magazine started in 1844 [1]."


def test_tag_case_and_whitespace_vary() -> None:
    text = """\
[query 1] : Who directed Jaws?
[ANSWER  1]:Steven Spielberg.
  [ Query2 ]  :   What is the nationality of Steven Spielberg?
[answer 2] :
   American.
[unsolved query] : Where was Steven Spielberg born?
[FINAL CONTENT] : The director is American [2]."""
    chain = parse_chain(text)
    assert pairs(chain) == [
        ("Who directed Jaws?", "Steven Spielberg."),
        ("What is the nationality of Steven Spielberg?", "American."),
        ("Where was Steven Spielberg born?", None),
    ]
    assert chain.final_content == "The director is American [2]."


def test_markdown_decorations_and_missing_colon_at_line_start() -> None:
    text = """\
**[Query 1]:** Who directed Jaws?
- [Answer 1] Steven Spielberg.
### Final Content: Steven Spielberg directed Jaws [1]."""
    chain = parse_chain(text)
    assert pairs(chain) == [("Who directed Jaws?", "Steven Spielberg.")]
    assert chain.final_content == "Steven Spielberg directed Jaws [1]."


def test_several_tags_on_one_line() -> None:
    text = "[Query 1]: When was Arthur's Magazine started? [Answer 1]: 1844. [Query 2]: When "
    text += "was First for Women started? [Answer 2]: 1989 [Final Content]: Arthur's Magazine."
    chain = parse_chain(text)
    assert pairs(chain) == [
        ("When was Arthur's Magazine started?", "1844."),
        ("When was First for Women started?", "1989"),
    ]
    assert chain.final_content == "Arthur's Magazine."


def test_tag_words_in_prose_are_not_tags() -> None:
    # Mid-line mentions without a colon, and "Answer ..." words that are not "Answer:".
    text = """\
[Query 1]: What does the prompt ask to start with [Answer] and [Query]?
[Answer 1]: It says to start answers with [Answer] and the answer should
Answer the question.
[Final Content]: Done."""
    chain = parse_chain(text)
    assert pairs(chain) == [
        (
            "What does the prompt ask to start with [Answer] and [Query]?",
            "It says to start answers with [Answer] and the answer should\nAnswer the question.",
        )
    ]


def test_crlf_line_endings() -> None:
    text = DEMO_2.replace("\n", "\r\n")
    chain = parse_chain(text)
    assert pairs(chain) == pairs(parse_chain(DEMO_2))
    assert chain.raw == text


# -- answers ---------------------------------------------------------------------------------------
def test_multi_line_answer_runs_to_the_next_tag() -> None:
    text = """\
[Query 1]: What causes the trail behind jets at high altitude?
[Answer 1]: Contrails form when hot, humid exhaust meets cold air.
The water vapour condenses and freezes into ice crystals.

They persist when the air is already near saturation.
[Query 2]: Why do some contrails vanish quickly?
[Answer 2]: Dry air."""
    chain = parse_chain(text)
    assert chain.nodes[0].answer == (
        "Contrails form when hot, humid exhaust meets cold air.\n"
        "The water vapour condenses and freezes into ice crystals.\n\n"
        "They persist when the air is already near saturation."
    )
    assert chain.nodes[1].answer == "Dry air."


def test_answer_without_a_query_is_ignored() -> None:
    text = "[Answer 1]: Kevin Drew.\n[Query 1]: Where was Kevin Drew born?\n[Answer 2]: Toronto."
    assert pairs(parse_chain(text)) == [("Where was Kevin Drew born?", "Toronto.")]


def test_repeated_answer_is_ignored() -> None:
    text = """\
[Query 1]: Who is the performer of Spirit If... ?
[Query 2]: Where was Kevin Drew born?
[Answer 2]: Toronto.
[Answer 2]: Toronto, Ontario."""
    # Query 1 stays unsolved: the repeat does not drift back onto it.
    assert pairs(parse_chain(text)) == [
        ("Who is the performer of Spirit If... ?", None),
        ("Where was Kevin Drew born?", "Toronto."),
    ]


def test_queries_first_then_numbered_answers() -> None:
    text = """\
[Query 1]: When was Arthur's Magazine started?
[Query 2]: When was First for Women started?
[Answer 1]: 1844.
[Answer 2]: 1989."""
    assert pairs(parse_chain(text)) == [
        ("When was Arthur's Magazine started?", "1844."),
        ("When was First for Women started?", "1989."),
    ]


def test_empty_answer_leaves_node_unsolved() -> None:
    text = "[Query 1]: Where was Kevin Drew born?\n[Answer 1]:   \n[Query 2]: Who is he?\n"
    text += '[Answer 2]: ""'
    chain = parse_chain(text)
    assert chain.nodes == [
        CoQNode(1, "Where was Kevin Drew born?", None, True),
        CoQNode(2, "Who is he?", None, True),
    ]


# -- queries ---------------------------------------------------------------------------------------
def test_empty_query_is_dropped_with_its_answer() -> None:
    text = """\
[Query 1]: Who directed Jaws?
[Answer 1]: Steven Spielberg.
[Query 2]:
[Answer 2]: American.
[Query 3]:   ""
[Query 4]: When was Jaws released?
[Answer 4]: 1975."""
    chain = parse_chain(text)
    assert pairs(chain) == [
        ("Who directed Jaws?", "Steven Spielberg."),
        ("When was Jaws released?", "1975."),
    ]
    assert [n.index for n in chain.nodes] == [1, 2]


def test_query_on_the_next_line_and_rambling_after_it() -> None:
    text = """\
[Query 1]:
   Who directed Jaws?
   I will search for the director of the film.
[Answer 1]: Steven Spielberg."""
    assert pairs(parse_chain(text)) == [("Who directed Jaws?", "Steven Spielberg.")]


def test_model_numbers_are_renumbered() -> None:
    text = """\
[Query 3]: Who directed Jaws?
[Answer 3]: Steven Spielberg.
[Query 3]: Where was Steven Spielberg born?
[Answer 1]: Cincinnati.
[Query 7]: Is Cincinnati in Ohio?
[Answer]: Yes."""
    chain = parse_chain(text)
    assert [n.index for n in chain.nodes] == [1, 2, 3]
    assert pairs(chain) == [
        ("Who directed Jaws?", "Steven Spielberg."),
        ("Where was Steven Spielberg born?", "Cincinnati."),
        ("Is Cincinnati in Ohio?", "Yes."),
    ]


def test_quotes_and_whitespace_are_stripped_inner_text_kept() -> None:
    text = """\
[Query 1]:   "Who wrote 'The Raven'?"
[Answer 1]: “Edgar Allan Poe”
[Query 2]: 'When was Arthur's Magazine started?'
[Answer 2]: "1844.
[Query 3]: What did he say?
[Answer 3]: "Nevermore" and "never again"
[Query 4]: Which 12" record?
[Answer 4]: The Beatles' album"""
    assert pairs(parse_chain(text)) == [
        ("Who wrote 'The Raven'?", "Edgar Allan Poe"),
        ("When was Arthur's Magazine started?", "1844."),
        ("What did he say?", '"Nevermore" and "never again"'),
        ('Which 12" record?', "The Beatles' album"),
    ]
