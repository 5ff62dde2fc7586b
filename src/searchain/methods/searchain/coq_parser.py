"""A tolerant parser for the Chain-of-Query (CoQ) that SearChain asks the LLM to write.

The prompt asks for::

    [Query 1]: Who is the performer of Spirit If... ?
    [Answer 1]: The performer of Spirit If… is Kevin Drew.
    [Query 2]: Where was Kevin Drew born?
    [Unsolved Query]: Where was Kevin Drew born?
    [Final Content]: The performer of Spirit If… is Kevin Drew [1]. ...

but small models (270M parameters) write variations of it: tags without numbers or brackets,
odd case and spacing, several tags on one line, answers over several lines, the prompt's
"If you don't know the answer:" scaffolding copied back, and a new ``[Question]:`` demo after
the chain. :func:`parse_chain` accepts all of that and never raises.

Rules (what each tag does to the chain being built):

* ``[Query n]:`` starts a node. Its query is the first non-empty line after the tag (what
  follows on later lines before the next tag is the model rambling, not part of a search
  query). A query that is empty after stripping is dropped, and so is an answer that follows
  it without naming another node: it would otherwise be attached to the wrong query.
* ``[Answer n]:`` gives the answer of the most recent node that has no answer yet. It runs to
  the next tag, so answers may span lines. If the model's number ``n`` names an unanswered
  node among those opened since the last answer, that node gets it (so ``[Query 1]
  [Query 2] [Answer 1] [Answer 2]`` pairs up right); otherwise it goes to the current (last)
  node if that one is unanswered, and is ignored when there is none: an answer with no query,
  or a repeated answer, never drifts back to an earlier step's unanswered node.
* ``[Unsolved Query]: q`` marks the current node unsolved when it has no answer yet and ``q``
  is its query (compared ignoring case and punctuation). A different ``q``, or no current
  node, starts a new unsolved node with query ``q``. Text after the unsolved query up to the
  next tag (StrategyQA demos add "Instruction: Please stop your generation.") is ignored.
* The demo's two alternatives, echoed together (``[Unsolved Query]: q`` and ``[Answer]: a``
  for the same node, in either order): the node keeps the answer and is flagged ``both``.
  What such a node is, SearChain decides (``both_tags``): by default unsolved, as the paper's
  server sends every ``[Unsolved Query]`` line to completion; optionally solved (the answer
  wins and verification checks it against retrieval).
* ``[Final Content]:`` takes everything after it, up to the end or to a following
  ``[Question]:`` tag, and ends the chain. It also stops at another bracketed tag
  (``[Query 4]:``, ``[Final Content]:``) or at the prompt's scaffolding: Gemma 3 270M goes on
  writing chain after its final content, and that is no part of it. A bare "Answer:" line is
  kept: it may be how the model states its answer.
* A ``[Question]:`` tag after at least one node also ends the chain (the model has started a
  new demo); before any node it is the model repeating the question, and is skipped. A
  *numbered* ``[Question n]:`` is read as ``[Query n]:``: small models name sub-queries so,
  and a new demo's tag never has a number.
* Nodes are renumbered 1..n in order: the model's own numbers are unreliable (repeated,
  skipped, restarted), so they are only used to pair answers with queries.

The result always satisfies: indices are 1..n, every query is non-empty, and
``unsolved == (answer is None)`` (an empty ``[Answer]:`` leaves the node unsolved); ``both``
only ever flags an answered node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Chain", "CoQNode", "parse_chain", "same_query"]


@dataclass(slots=True)
class CoQNode:
    """One node of the chain: an IR-oriented sub-query and the LLM's answer to it, if any."""

    index: int  # 1-based position in the chain (renumbered; the model's numbers are unreliable)
    query: str
    answer: str | None  # None when unsolved
    unsolved: bool  # always ``answer is None``: IR must complete the node
    both: bool = False  # the model also wrote [Unsolved Query] for this answered node


@dataclass(slots=True)
class Chain:
    """A parsed Chain-of-Query."""

    nodes: list[CoQNode]
    final_content: str  # "" when the model wrote no [Final Content]
    raw: str  # the text parsed, unchanged


# -- the tags -----------------------------------------------------------------------------------
# "unsolved query" and "final content" come before "query" so the longer name wins.
_NAME = r"(?:unsolved[ \t]*query|final[ \t]*content|query|answer|question)"
_NUM = r"(?:[ \t]*\d+)?"
# Line starts may carry list bullets, quote marks, markdown headings or bold.
_LEAD = r"^[ \t>#*-]*"
_BOLD = r"(?:\*\*)?"
_SCAFFOLD = r"if[ \t]+you[ \t]+(?:don['’]?t[ \t]+|do[ \t]+not[ \t]+)?know[ \t]+the[ \t]+answer"
_TAG = re.compile(
    "|".join(
        [
            # [Query 1]: anywhere: models put several tags on one line.
            rf"{_BOLD}\[[ \t]*{_NAME}{_NUM}[ \t]*\]{_BOLD}[ \t]*[:：]{_BOLD}",
            # [Query 1] without a colon only at a line start, where it cannot be prose that
            # mentions a tag ("starting with [Answer].", echoed from the instruction).
            rf"{_LEAD}\[[ \t]*{_NAME}{_NUM}[ \t]*\]{_BOLD}[ \t]*[:：]?{_BOLD}",
            # Query 1: without brackets, also only at a line start.
            rf"{_LEAD}{_NAME}{_NUM}[ \t]*[:：]{_BOLD}",
            # The prompt's scaffolding: a whole line (colon optional) or followed by a colon.
            rf"(?P<scaffold>{_LEAD}{_SCAFFOLD}[ \t]*[:：]?[ \t]*$|{_SCAFFOLD}[ \t]*[:：])",
        ]
    ),
    re.IGNORECASE | re.MULTILINE,
)
_KIND = re.compile(rf"({_NAME})[ \t]*(\d+)?", re.IGNORECASE)
# Copied from the StrategyQA demos' unsolved branch; never part of a search query.
_INSTRUCTION = re.compile(r"\s*instruction\s*[:：].*$", re.IGNORECASE)

_QUERY, _ANSWER, _UNSOLVED, _FINAL, _QUESTION, _SKIP = (
    "query",
    "answer",
    "unsolvedquery",
    "finalcontent",
    "question",
    "skip",
)

# -- cleaning payloads --------------------------------------------------------------------------
_PAIRS = {'"': '"', "'": "'", "“": "”", "„": "“", "‘": "’", "«": "»", "`": "`"}
_DOUBLE = '"“”„«»'
_OPENING_SINGLE = re.compile(r"(?<!\w)['‘]")


def _clean(text: str) -> str:
    """Strip surrounding whitespace and quotes; the text inside stays as written."""
    s = text.strip()
    while len(s) >= 2 and _PAIRS.get(s[0]) == s[-1] and _encloses(s):
        s = s[1:-1].strip()
    # One unbalanced double quote at an end: the model opened a quotation and never closed it
    # (or closed one it never opened). A double quote elsewhere means it belongs to the text.
    if s[:1] in _DOUBLE and not any(c in _DOUBLE for c in s[1:]):
        s = s[1:].strip()
    if s[-1:] in _DOUBLE and not any(c in _DOUBLE for c in s[:-1]):
        s = s[:-1].strip()
    return s


def _encloses(s: str) -> bool:
    # '"A" and "B"' is two quotations, not one quoted text: only strip a pair with no other
    # quote of its kind inside. Apostrophes inside words ('Arthur's Magazine') do not count.
    inner = s[1:-1]
    if s[0] in "'‘":
        return _OPENING_SINGLE.search(inner) is None
    return s[0] not in inner and s[-1] not in inner


def _first_line(text: str) -> str:
    for line in text.split("\n"):
        if line.strip():
            return _clean(_INSTRUCTION.sub("", line))
    return ""


def same_query(a: str, b: str) -> bool:
    # "Who is the performer of Spirit If... ?" and "who is the performer of Spirit If…" are one.
    def key(s: str) -> str:
        return " ".join(re.sub(r"[\W_]+", " ", s.casefold()).split())

    return key(a) == key(b)


# -- parsing ------------------------------------------------------------------------------------
@dataclass(slots=True)
class _Tag:
    kind: str
    number: int | None
    start: int
    end: int
    bracketed: bool = False  # "[Answer]:" rather than "Answer:"


@dataclass(slots=True)
class _Draft:
    query: str
    number: int | None  # the model's number, only used to pair answers with queries
    answer: str | None = None
    unsolved_tag: bool = False  # an [Unsolved Query] tag named this node


def _tags(text: str) -> list[_Tag]:
    tags = []
    for m in _TAG.finditer(text):
        if m.group("scaffold") is not None:
            tags.append(_Tag(_SKIP, None, m.start(), m.end()))
            continue
        k = _KIND.search(m.group())
        if k is None:  # unreachable: every other alternative contains a name
            continue
        digits = k.group(2)
        # int() refuses more than 4300 digits; a number that long is no node number anyway.
        number = int(digits) if digits is not None and len(digits) <= 9 else None
        kind = re.sub(r"\s+", "", k.group(1)).lower()
        tags.append(_Tag(kind, number, m.start(), m.end(), "[" in m.group()))
    return tags


class _Builder:
    """The chain under construction, one tag at a time."""

    def __init__(self) -> None:
        self.drafts: list[_Draft] = []
        self.current: _Draft | None = None  # the node an unnumbered answer belongs to
        # Nodes opened since the last answer: the only ones a numbered answer may name, so a
        # repeated "[Answer 1]" cannot drift back to an unanswered node from an earlier step.
        # By the model's number, in order (a dict, so long chains stay linear).
        self.batch: dict[int, list[_Draft]] = {}
        self.answered_batch = False

    def _open(self, query: str, number: int | None) -> None:
        if self.answered_batch:
            self.batch, self.answered_batch = {}, False
        # An empty query opens nothing, and the answer after it has no node to go to.
        self.current = _Draft(query, number) if query else None
        if self.current is not None:
            self.drafts.append(self.current)
            if number is not None:
                self.batch.setdefault(number, []).append(self.current)

    def query(self, payload: str, number: int | None) -> None:
        self._open(_first_line(payload), number)

    def answer(self, payload: str, number: int | None) -> None:
        target = None
        if number is not None and number in self.batch:
            named = self.batch[number]
            while named and named[-1].answer is not None:
                named.pop()  # answered: no longer a candidate
            target = named[-1] if named else None
        if target is None and self.current is not None and self.current.answer is None:
            target = self.current
        if target is not None:
            target.answer = _clean(payload) or None
            self.answered_batch = True

    def unsolved(self, payload: str, number: int | None) -> None:
        query = _first_line(payload)
        current = self.current
        if current is not None and (not query or same_query(query, current.query)):
            # Marks the current node unsolved, which it already is while it has no answer; if
            # it has one (or gets one), the model echoed both of the demo's alternatives.
            current.unsolved_tag = True
            return
        if query:
            # A reworded unsolved query under a pending node is the same step: it takes that
            # node's number, so "[Answer n]" pairs with it as an unnumbered answer would.
            if number is None and current is not None and current.answer is None:
                number = current.number
            self._open(query, number)
            if self.current is not None:
                self.current.unsolved_tag = True

    def nodes(self) -> list[CoQNode]:
        return [
            CoQNode(
                index=i,
                query=d.query,
                answer=d.answer,
                unsolved=d.answer is None,
                both=d.unsolved_tag and d.answer is not None,
            )
            for i, d in enumerate(self.drafts, 1)
        ]


def _ends_final(tag: _Tag) -> bool:
    return tag.kind in (_QUESTION, _SKIP) or tag.bracketed


def parse_chain(text: str) -> Chain:
    """Parse an LLM's Chain-of-Query; never raises (``None`` reads as the empty text)."""
    raw = text if isinstance(text, str) else ("" if text is None else str(text))
    # Normalise line ends so the line-anchored tags see "\r\n" and "\r" lines too.
    body = raw.replace("\r\n", "\n").replace("\r", "\n")
    tags = _tags(body)
    chain = _Builder()
    final_content = ""
    for i, tag in enumerate(tags):
        payload = body[tag.end : tags[i + 1].start if i + 1 < len(tags) else len(body)]
        if tag.kind == _QUESTION and tag.number is not None:
            # "[Question 2]: When was Niels Bohr born?" is Gemma 3 270M writing a sub-query
            # under the wrong name; a new demo's "[Question]:" never carries a number.
            chain.query(payload, tag.number)
        elif tag.kind == _QUESTION:
            if chain.drafts:
                break  # the model has started a new demo
            # else: the model repeating the question before its chain; skipped
        elif tag.kind == _FINAL:
            end = next((t.start for t in tags[i + 1 :] if _ends_final(t)), len(body))
            final_content = body[tag.end : end].strip()
            break
        elif tag.kind == _QUERY:
            chain.query(payload, tag.number)
        elif tag.kind == _ANSWER:
            chain.answer(payload, tag.number)
        elif tag.kind == _UNSOLVED:
            chain.unsolved(payload, tag.number)
        # _SKIP (scaffolding) only ends the previous payload.
    return Chain(nodes=chain.nodes(), final_content=final_content, raw=raw)
