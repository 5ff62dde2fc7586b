"""Properties of the Chain-of-Query parser: arbitrary text and tag soup never raise, canonical
chains round-trip."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coq_kit import (
    assert_well_formed,
    pairs,
)
from searchain.methods.searchain.coq_parser import parse_chain

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
