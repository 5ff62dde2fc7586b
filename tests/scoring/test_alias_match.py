"""``alias_match``: the grading rule of alias golds (the real-doc questions' ``answers``):
lower case, no punctuation, no whitespace, substring; every part of a multi-part gold."""

from __future__ import annotations

import pytest

from searchain.scoring.match import alias_match, squash


def test_squash_drops_case_punctuation_and_whitespace() -> None:
    assert squash("Debian-Mentors @ lists.debian.org") == "debianmentorslistsdebianorg"
    assert squash("“H.323” — SIP…\n") == "h323sip"
    assert squash(" ~/.quiltrc-dpkg ") == "quiltrcdpkg"


@pytest.mark.parametrize(
    ("answer", "answers"),
    [
        # case, punctuation and whitespace differ from the alias
        ("Ask on debian-mentors@lists.debian.org.", ["debian-mentors"]),
        ("The DEBIAN MENTORS list", ["debian-mentors"]),
        ("Use the `YYYY-MM-DD`-like YYYYMMDD layout", ["YYYYMMDD"]),
        ("It is Fails-to-build-from-source (FTBFS).", ["Fails To Build From Source"]),
        ("Set DH_VERBOSE=1 in debian/rules", ["DH_VERBOSE"]),
        ("dquilt passes ~/.quiltrc-dpkg", [".quiltrc-dpkg"]),
        ("Keep it within 30 characters.", ["30 char", "thirty char"]),
        ("thirty-character limit", ["30 char", "thirty char"]),
        ("After a 21-day delay", ["21 day", "three weeks"]),
        ("the GPL (version 2 or later)", ["version 2 or later"]),
        # any one alias of a flat list suffices
        ("apt-cacher-ng", ["squid-deb-proxy", "apt-cacher-ng"]),
        ("Its name is Bookworm.", ["bookworm", "toy worm"]),
    ],
)
def test_one_part_right(answer: str, answers: list[str]) -> None:
    assert alias_match(answer, answers)


@pytest.mark.parametrize(
    ("answer", "answers"),
    [
        ("Ask on debian-devel@lists.debian.org.", ["debian-mentors"]),  # the experts' list
        ("Use the 0~YYMMDD format", ["YYYYMMDD"]),
        ("It was dropped in Sarge (Debian 3.1).", ["Debian 4.0", "in Etch"]),
        ("A priority above 990", ["1000", "1001"]),
        ("I don't know.", ["tmpfs"]),
        ("", ["tmpfs"]),
    ],
)
def test_one_part_wrong(answer: str, answers: list[str]) -> None:
    assert not alias_match(answer, answers)


def test_two_parts_need_both() -> None:
    gold = [["1.5+nmu4"], ["21 day", "three weeks"]]
    assert alias_match("The NMU is 1.5+nmu4; the salvaging delay is 21 days.", gold)
    assert alias_match("three weeks, and version 1.5+NMU4", gold)  # order and case free
    assert not alias_match("The NMU gets version 1.5+nmu4.", gold)  # one part only
    assert not alias_match("1.5-0.1 and 21 days", gold)  # the first part wrong
    pin = [["1000", "1001"], ["priority of 1", "priority is 1"]]
    assert alias_match("Only above 1000; NotAutomatic archives get a priority of 1.", pin)
    assert not alias_match("Only above 1000.", pin)


def test_citation_marks_are_not_read() -> None:
    """A citation mark "[10]" is not the compatibility level 10."""
    gold = [["10"], ["UNRELEASED"]]
    assert not alias_match("Set it to 9 [10] and use UNRELEASED [2].", gold)
    assert alias_match("Level 10 [1], and UNRELEASED [2].", gold)


def test_no_word_boundaries() -> None:
    """The rule is a plain substring test, as the frozen set's: an alias should be specific
    enough (the golds avoid bare "etch", a substring of "stretch")."""
    assert alias_match("Debian 9 stretch", ["etch"])
    assert alias_match("at most 130 characters", ["30 char"])


def test_empty_aliases_and_golds_never_hold() -> None:
    assert not alias_match("anything at all", [])
    assert not alias_match("anything at all", ["..."])  # squashes to nothing
    assert not alias_match("anything at all", [["anything"], []])
    with pytest.raises(TypeError):
        alias_match("x", ["x", ["x"]])  # type: ignore[list-item]
