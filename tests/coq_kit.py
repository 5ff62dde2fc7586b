"""The Chain-of-Query parser's shared texts: the spec's prompt demos (the paper's multi-hop
prompt), the first one echoed as the prompt shows it, and what every parsed chain must be."""

from __future__ import annotations

from searchain.methods.searchain.coq_parser import Chain, CoQNode

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


# Gemma 3 270M's real chain (greedy, the spec's multi-hop CoQ prompt): its second node is an
# unsolved query the model then answered (both tags on one node).
GEMMA_BOTH = """\
[Query 1]: The husband of the performer is the husband of [Answer: Annabelle].
If you don't know the answer:
[Unsolved Query]: Who is the husband of the performer of Thriller?
If you know the answer:
[Answer 3]: The wife of the husband is the wife of the performer of Thriller.
[Final Content]: The wife of the husband is the wife of [Answer: Annabelle]."""


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
