"""The Chain-of-Query parser: the paper's demos, what small models really write, and properties
(never raises; canonical chains round-trip)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchain.methods.searchain.coq_parser import Chain, CoQNode, parse_chain

# The spec's CoQ prompt demos (paper, figure/appendix prompt for multi-hop QA).
DEMO_1 = """\
[Query 1]: Who is the performer of Spirit If... ?
[Answer 1]: The performer of Spirit If… is Kevin Drew.
[Query 2]: Where was Kevin Drew born?
[Answer 2]: Toronto.
[Query 3]: Where do greyhound buses in Toronto leave from?
[Answer 3]: Toronto Coach Terminal.
[Final Content]: The performer of Spirit If… is Kevin Drew [1]. Kevin Drew was born in \
Toronto [2]. Greyhound buses in Toronto leave from Toronto Coach Terminal [3]. So the final \
answer is Toronto Coach Terminal."""
DEMO_1_FINAL = (
    "The performer of Spirit If… is Kevin Drew [1]. Kevin Drew was born in Toronto [2]. "
    "Greyhound buses in Toronto leave from Toronto Coach Terminal [3]. So the final answer is "
    "Toronto Coach Terminal."
)
DEMO_1_PAIRS = [
    ("Who is the performer of Spirit If... ?", "The performer of Spirit If… is Kevin Drew."),
    ("Where was Kevin Drew born?", "Toronto."),
    ("Where do greyhound buses in Toronto leave from?", "Toronto Coach Terminal."),
]

DEMO_2 = """\
[Query 1]: When was Arthur's Magazine started?
[Answer 1]: 1844.
[Query 2]: When was First for Women started?
[Answer 2]: 1989
[Final Content]: Arthur's Magazine started in 1844 [1]. First for Women started in 1989 [2]. \
So Arthur's Magazine was started first. So the answer is Arthur's Magazine."""

# The first demo exactly as the prompt shows it: both alternatives at every node.
DEMO_1_ECHOED = """\
[Question]: "Where do greyhound buses leave from in the city where the performer of Spirit If... \
was born?"
[Query 1]: Who is the performer of Spirit If... ?
If you don't know the answer:
[Unsolved Query]: Who is the performer of Spirit If... ?
If you know the answer:
[Answer 1]: The performer of Spirit If… is Kevin Drew.
[Query 2]: Where was Kevin Drew born?
If you don't know the answer:
[Unsolved Query]: Where was Kevin Drew born?
If you know the answer:
[Answer 2]: Toronto.
[Query 3]: Where do greyhound buses in Toronto leave from?
If you don't know the answer:
[Unsolved Query]: Where do greyhound buses in Toronto leave from?
If you know the answer:
[Answer 3]: Toronto Coach Terminal.
[Final Content]: The performer of Spirit If… is Kevin Drew [1]. Kevin Drew was born in \
Toronto [2]. Greyhound buses in Toronto leave from Toronto Coach Terminal [3]. So the final \
answer is Toronto Coach Terminal."""


def pairs(chain: Chain) -> list[tuple[str, str | None]]:
    return [(n.query, n.answer) for n in chain.nodes]


def assert_well_formed(chain: Chain) -> None:
    assert isinstance(chain, Chain)
    assert isinstance(chain.final_content, str)
    assert [n.index for n in chain.nodes] == list(range(1, len(chain.nodes) + 1))
    for n in chain.nodes:
        assert isinstance(n, CoQNode)
        assert isinstance(n.query, str) and n.query.strip() == n.query and n.query
        assert n.unsolved == (n.answer is None)
        assert not n.both or n.answer is not None  # "both" flags an answered node
        if n.answer is not None:
            assert n.answer and n.answer.strip() == n.answer


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
    text = """\
[Query 1]: The husband of the performer is the husband of [Answer: Annabelle].
If you don't know the answer:
[Unsolved Query]: Who is the husband of the performer of Thriller?
If you know the answer:
[Answer 3]: The wife of the husband is the wife of the performer of Thriller.
[Final Content]: The wife of the husband is the wife of [Answer: Annabelle].
[Question]: "Which magazine was started first Arthur's Magazine or First for Women?"
[Query 1]: When was Arthur's Magazine started?"""
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


# -- properties ------------------------------------------------------------------------------------
_TAG_PIECES = [
    "[Query 1]:",
    "[Query]:",
    "Query 2:",
    "[query 3] :",
    "[Answer 1]:",
    "[Answer]:",
    "Answer:",
    "[Unsolved Query]:",
    "Unsolved Query:",
    "[Final Content]:",
    "Final Content:",
    "[Question]:",
    "Question:",
    "If you don't know the answer:",
    "If you know the answer:",
    "\n",
    "\r\n",
    " ",
    '"',
    "'",
    "**",
    "[",
    "]",
    ":",
    "Instruction: Please stop your generation.",
    "9" * 20,
]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_property_arbitrary_text_never_raises(text: str) -> None:
    chain = parse_chain(text)
    assert_well_formed(chain)
    assert chain.raw == text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_TAG_PIECES), st.text(max_size=12)), max_size=40))
def test_property_tag_soup_never_raises(pieces: list[str]) -> None:
    text = "".join(pieces)
    chain = parse_chain(text)
    assert_well_formed(chain)
    assert chain.raw == text


# Payloads free of tag syntax: no brackets or colons, ends alphanumeric (so there is nothing to
# strip), quotes and apostrophes allowed inside.
_ALPHABET = "abcXYZ019 .,?!'\"-()…éß&/"
_INNER = st.text(alphabet=st.sampled_from(list(_ALPHABET)), max_size=30)
_EDGE = st.sampled_from(list("aZ7éß"))
_LINE = st.one_of(_EDGE, st.builds(lambda a, m, b: a + m + b, _EDGE, _INNER, _EDGE))
_MULTILINE = st.lists(_LINE, min_size=1, max_size=3).map("\n".join)


@st.composite
def _chains(draw: st.DrawFn) -> tuple[str, list[tuple[str, str | None]], str]:
    nodes = draw(st.lists(st.tuples(_LINE, st.one_of(st.none(), _MULTILINE)), max_size=6))
    numbered = draw(st.booleans())
    scaffold = draw(st.booleans())  # echo the demo's "If you (don't) know the answer:" lines
    lines = []
    for i, (query, answer) in enumerate(nodes, 1):
        n = f" {i}" if numbered else ""
        lines.append(f"[Query{n}]: {query}")
        if scaffold:
            lines += ["If you don't know the answer:", f"[Unsolved Query]: {query}"]
            if answer is not None:
                lines += ["If you know the answer:", f"[Answer{n}]: {answer}"]
        elif answer is None:
            if draw(st.booleans()):  # an unsolved node may also just have no answer
                lines.append(f"[Unsolved Query]: {query}")
        else:
            lines.append(f"[Answer{n}]: {answer}")
    final = ""
    if draw(st.booleans()):
        sentences = draw(st.lists(st.tuples(_LINE, st.booleans()), min_size=1, max_size=3))
        final = " ".join(
            s + (f" [{k}]." if mark else "") for k, (s, mark) in enumerate(sentences, 1)
        )
        lines.append(f"[Final Content]: {final}")
        if draw(st.booleans()):
            lines += ['[Question]: "Which magazine was started first?"', "[Query 1]: When?"]
    if draw(st.booleans()):
        lines.insert(0, '[Question]: "What is the question?"')
    return "\n".join(lines), nodes, final


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_chains())
def test_property_canonical_chains_round_trip(
    case: tuple[str, list[tuple[str, str | None]], str],
) -> None:
    text, nodes, final = case
    chain = parse_chain(text)
    assert_well_formed(chain)
    assert pairs(chain) == nodes
    assert chain.final_content == final


def test_generated_payloads_hold_no_tag_syntax() -> None:
    # The round-trip generator's alphabet must stay free of what the parser treats as syntax.
    assert not re.search(r"[\[\]:：\n]", _ALPHABET)
