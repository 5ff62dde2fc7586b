"""What a node of SearChain's Tree-of-Reasoning is labelled once IR has read it.

The paper's rule decides *when IR corrects* a node: a confident reader (confidence > θ) whose
answer g is not contained in the node's answer a. It never promised a label, and read as one
it claims too much: a span that only repeats the node's query ("Human Events" for "Who
publishes Human Events?") is contained in an answer that restates the query, and "agrees".

So the label has a rule of its own (version 3). A node the chain kept as the LLM wrote it is
**verified** only when

* IR checked it (verification is on) and the reader's answer is a span of its passage;
* the reader is confident (confidence > θ);
* the reader's answer is not words the node's query already says — except where it is one
  option of a choice the query offers ("X or Y?", :func:`choice_options`) and the passage
  states the comparison (:func:`states_comparison`: it names every option and, when the query
  says what is compared, one of those words);
* the reader's answer matches the node's: for a choice, the node's answer names the reader's
  pick and no other option; otherwise the words of the node's short answer that its query does
  not already say lie within the reader's span, or their token F1 is above
  :data:`AGREEMENT_F1` — and, either way, the two name nothing different (:func:`conflict`:
  no differing number, no differing name token, no name cut short at either end);
* and it is not a bare Yes or No: a passage holds a span, never a verdict, so only an
  entailment check (the NLI judge, ``yesno_check="nli"``) can verify one.

A node IR corrected or completed holds the reader's answer, which the same checks read
(:func:`ir_label`): a span of the passage, the reader confident, not a repeat of the query's
words (a choice's option only where the passage states the comparison), not a bare Yes or No.
One that passes is **corrected** or **completed** (what the evidence step and the confidence
signals count as confirmed); one that fails is **unconfirmed** too, its answer kept, with what
the check found ("IR corrected it, but ...").

Every other node the chain kept is **unconfirmed**, with what the check found. The label
changes no node's answer, no path and no chain prompt (when IR corrects stays the paper's
rule); what reads it is the evidence step (a node not confirmed is "(unchecked)" in its plan,
its passage read as searched, not as confirming: evidence_answer.py) and the confidence
signals. :data:`LABEL_RULE` is the rule's version; traces and run manifests record it, so
signals read from one rule's labels are not mixed with another's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise

from searchain.answers import short_answer
from searchain.methods.searchain.yesno_check import yes_no_answer
from searchain.readers.base import ReaderOutput
from searchain.text import contains_answer, normalize_answer

# The rule's version, recorded in each trace (meta "label_rule") and run manifest. Traces without
# it were labelled by version 1: verified when a confident reader's span was contained in the
# node's answer (the paper's containment, read as a label). Version 2 (issue 47): the checks
# above, but any query saying "or" exempted the span from the query check and compared it by
# containment alone, the token F1 agreed without the conflict check, and a corrected or
# completed node was always confirmed. Version 3 (issue 61): as the module doc says. A trace's
# labels are read as the version it records; nothing relabels it on loading.
LABEL_RULE = 3
FIRST_LABEL_RULE = 1
# Token F1 between the reader's span and the node answer's own words (those its query does not
# already say, function words aside) above which the two agree. Chosen on the calibration items'
# recorded nodes (bench/node_labels.py --pairs lists the pairs it decides): above 0.4 keeps 11 of
# their 12 agreeing pairs (all but a span of one of three words) and refuses every span that
# states one of four or more of the node's words ("China" for "located in Jiangsu Province,
# China"); 0.3 would accept those, 0.5 would lose two more agreeing pairs (docs/searchain.md).
# Since version 3 an F1 above it agrees only where :func:`conflict` finds nothing different: a
# two-word answer sharing one word ("Virginia" for "West Virginia") is above it.
AGREEMENT_F1 = 0.4
# Words that carry no claim of their own: "Taizhou is located in Jiangsu" claims "located Jiangsu".
FUNCTION_WORDS = frozenset(
    "is was are were be been being it its he she they his her their in of on at by for and "
    "to from with as that this which who also".split()
)
# The words a question asks with, which say nothing of what a choice compares.
QUESTION_WORDS = frozenset(
    "who whom whose which what when where why how do does did has have had can could would "
    "should will or than more most less least one".split()
)
# Words that join the capitalised words of a choice's option ("First for Women").
NAME_JOINERS = frozenset("of the for de da del der di du la le van von y".split())
# The kind of thing a name is, which a span may leave out: "Jiangsu" states "Jiangsu Province".
GENERIC_NAME_WORDS = frozenset(
    "province county state district region prefecture municipality parish borough township "
    "river lake mount mountain mountains island islands republic film band company inc ltd "
    "jr sr".split()
)
_POSSESSIVE = re.compile(r"['’]s\b")
_WORD = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*")
_OR = re.compile(r"(?<!\w)or(?!\w)")


@dataclass(frozen=True)
class NodeLabel:
    status: str  # "verified" | "corrected" | "completed" | "unconfirmed"
    check: str | None = None  # what the check found, for an unconfirmed node

    def meta(self) -> dict[str, str]:
        """What a node's ``meta`` records of its label: the status, and the check if any."""
        return {"status": self.status, **({"check": self.check} if self.check else {})}


def repeats_query(answer: str, query: str) -> bool:
    """Whether ``answer`` is words the query itself says (normalised, whole words), where the
    query does not say "or". What ``answer_in_query="ignore"`` sets aside (a setting of the
    method, not the label: the label's check is :func:`drawn_from_query`)."""
    return contains_answer(query, answer) and not is_choice(query)


def is_choice(query: str) -> bool:
    return contains_answer(query, "or")


def drawn_from_query(answer: str, query: str) -> bool:
    """Whether ``answer`` is words the query itself says, also without its possessives
    ("Joby Harold" is drawn from "Who directed Joby Harold's film?"). A choice's option is
    drawn from the query too: :func:`choice_pick` says when that is allowed."""
    return contains_answer(query, answer) or contains_answer(_POSSESSIVE.sub("", query), answer)


def _words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


def _is_name(word: str) -> bool:
    return word[:1].isupper()


def _option(words: list[tuple[str, int, int]], text: str, step: int) -> str:
    """The option beside "or", read outwards from it (``step`` -1: leftwards, 1: rightwards):
    a run of capitalised words (joined by "of", "the", ...), or one lower-case word (an article
    aside); it ends at punctuation and at the question's own words ("Is", "Who")."""
    if not words:
        return ""
    if step > 0 and len(words) > 1 and words[0][0].lower() in ("a", "an", "the"):
        words = words[1:]  # "or a dog", "or the Walkmen"
    first = words[0][0]
    if not _is_name(first) and not first[0].isdigit():
        return first
    run = [words[0]]
    for prev, word in pairwise(words):
        between = text[min(prev[2], word[2]) : max(prev[1], word[1])]
        if between.strip():  # a comma, a bracket: the option ended
            break
        if word[0].lower() in QUESTION_WORDS or word[0].lower() in FUNCTION_WORDS - NAME_JOINERS:
            break
        if not (_is_name(word[0]) or word[0][0].isdigit() or word[0].lower() in NAME_JOINERS):
            break
        run.append(word)
    while run and not (_is_name(run[-1][0]) or run[-1][0][0].isdigit()):
        run.pop()  # a joiner is inside a name, never at its end
    if step < 0:
        run.reverse()
    return text[run[0][1] : run[-1][2]] if run else ""


def choice_options(query: str) -> list[str]:
    """The options of a choice the query offers ("Who was born first, X or Y?", "Is X or Y
    closer?"): the words on each side of its "or", as :func:`_option` reads them; empty when
    the query says no "or" or a side is empty."""
    m = _OR.search(query)
    if m is None:
        return []
    left = _words(query[: m.start()])[::-1]
    right = _words(query[m.end() :])
    options = [_option(left, query, -1), _option(right, query[m.end() :], 1)]
    return options if all(normalize_answer(o) for o in options) else []


def choice_pick(query: str, answer: str) -> str | None:
    """The option the reader picked: its answer is drawn from the query and names one option
    of the query's choice, and only one. None otherwise (no choice, or not a pick)."""
    options = choice_options(query)
    named = [o for o in options if contains_answer(_POSSESSIVE.sub("", answer), o)]
    if len(named) != 1 or not drawn_from_query(answer, query):
        return None
    return named[0]


def compared_words(query: str) -> list[str]:
    """What a choice compares: the query's words outside its options, function words and the
    words a question asks with ("born", "first" of "Who was born first, X or Y?")."""
    options = {
        w
        for o in choice_options(query)
        for w in normalize_answer(f"{o} {_POSSESSIVE.sub('', o)}").split()
    }
    words = normalize_answer(_POSSESSIVE.sub("", query)).split()
    skip = options | FUNCTION_WORDS | QUESTION_WORDS
    return list(dict.fromkeys(w for w in words if w not in skip))


def states_comparison(passage: str, query: str) -> str | None:
    """Whether the passage states the comparison the query's choice asks for, as text matching
    can tell: it names every option, and one of the words saying what is compared when the
    query has any. Which way the comparison goes it cannot read: that is the node's pick,
    checked against the reader's. None when it does; else why not, in words."""
    missing = [o for o in choice_options(query) if not contains_answer(passage, o)]
    if missing:
        return f"the passage does not state the comparison: it does not name {missing[0]}"
    compared = compared_words(query)
    if compared and not any(contains_answer(passage, w) for w in compared):
        return (
            "the passage does not state the comparison: it says nothing of "
            f"{' or '.join(repr(w) for w in compared)}"
        )
    return None


def own_words(node_answer: str, query: str) -> list[str]:
    """The words of the node's short answer that its query does not already say."""
    said = set(normalize_answer(query).split()) | set(
        normalize_answer(_POSSESSIVE.sub("", query)).split()
    )
    words = normalize_answer(short_answer(node_answer)).split()
    return [w for w in words if w not in said and w not in FUNCTION_WORDS]


def _f1(found: list[str], claimed: list[str]) -> float:
    common = sum((Counter(found) & Counter(claimed)).values())
    if not common:
        return 0.0
    precision, recall = common / len(found), common / len(claimed)
    return 2 * precision * recall / (precision + recall)


def names(text: str) -> list[list[str]]:
    """The names ``text`` states: runs of adjacent capitalised words (a lower-case word, a
    number, a comma or a bracket ends one), each as its normalised words, function words
    aside ("Jiangsu Province, China": [jiangsu, province], [china]; "Nobel Prize for
    Literature": [nobel, prize], [literature])."""
    out: list[list[str]] = []
    run: list[str] = []
    words = _words(text)
    for i, (word, start, _) in enumerate(words):
        joined = i > 0 and not text[words[i - 1][2] : start].strip()
        name = _is_name(word) and not any(c.isdigit() for c in word)
        if not joined or not name:
            if run:
                out.append(run)
            run = []
        if name:
            norm = normalize_answer(word)
            if norm and norm not in FUNCTION_WORDS:
                run.append(norm)
    if run:
        out.append(run)
    return [r for r in out if r]


def _numbers(words: set[str]) -> set[str]:
    return {w for w in words if any(c.isdigit() for c in w)}


def conflict(node_answer: str, reader_answer: str, query: str) -> str | None:
    """Whether the reader's span and the node's short answer name something different, in
    words (None when they do not), the query's own words aside:

    * a differing number: each has a number the other lacks ("December 1951" for "December
      1950");
    * a differing name: each has a capitalised word the other lacks ("George Bush" for
      "George Washington");
    * a name cut short: one states part of a name of the other without its first or last word,
      a kind of thing aside ("Virginia" for "West Virginia", either way round; "Jiangsu" for
      "Jiangsu Province" and "Peter Schmeichel" for "Peter Bolesław Schmeichel" agree, and
      "Kasper" for "Kasper Schmeichel" where the query says "Schmeichel").
    """
    said = set(normalize_answer(query).split()) | set(
        normalize_answer(_POSSESSIVE.sub("", query)).split()
    )
    node = short_answer(node_answer)
    node_words, span_words = (set(normalize_answer(t).split()) for t in (node, reader_answer))
    lacks = _numbers(node_words) - span_words - said, _numbers(span_words) - node_words - said
    if all(lacks):
        return f"another number ({sorted(lacks[1])[0]}, not {sorted(lacks[0])[0]})"
    node_names, span_names = names(node), names(reader_answer)
    lacks = (
        {w for n in node_names for w in n} - span_words - said,
        {w for n in span_names for w in n} - node_words - said,
    )
    if all(lacks):
        return f"another name ({sorted(lacks[1])[0]}, not {sorted(lacks[0])[0]})"
    for found, other in ((node_names, span_words | said), (span_names, node_words | said)):
        for name in found:
            core = [w for w in name if w not in GENERIC_NAME_WORDS] or name
            if any(w in other for w in core) and not (core[0] in other and core[-1] in other):
                return f"part of a name ({' '.join(core)})"
    return None


def agreement(node_answer: str, reader_answer: str, query: str) -> float:
    """How far the reader's span states the node's answer, 0-1: 0 when the two name something
    different (:func:`conflict`); else 1 when the node's own words all lie within the span,
    else their token F1. For a choice the pick is what is compared: 1 when the node's answer
    names the reader's pick and no other option, else 0."""
    pick = choice_pick(query, reader_answer)
    if pick is not None:
        node = short_answer(node_answer)
        named = [o for o in choice_options(query) if contains_answer(node, o)]
        return float(named == [pick])
    if conflict(node_answer, reader_answer, query) is not None:
        return 0.0
    claimed = own_words(node_answer, query)
    found = normalize_answer(reader_answer).split()
    if not claimed or not found:
        return 0.0
    if all(w in found for w in claimed):
        return 1.0
    return _f1(found, claimed)


def _span_check(query: str, reader: ReaderOutput, passage: str) -> str | None:
    """What keeps the reader's span from confirming anything, the confidence aside: drawn
    from the query (outside a choice's pick), or a pick the passage does not compare."""
    if choice_pick(query, reader.answer) is not None:
        return states_comparison(passage, query)
    if drawn_from_query(reader.answer, query):
        return "the reader's span only repeats the node's query"
    return None


def label(
    query: str,
    node_answer: str,
    reader: ReaderOutput,
    theta: float,
    verification: bool,
    *,
    passage: str,
) -> NodeLabel:
    """The label of a node that IR read and did not correct (no NLI judge for it);
    ``passage``: the text the reader read (its title too)."""
    if not verification:
        return NodeLabel("unconfirmed", "not checked (verification is off)")
    if yes_no_answer(node_answer) is not None:
        return NodeLabel("unconfirmed", "a yes/no answer is not a span (no NLI judge checked it)")
    if not reader.grounded:
        return NodeLabel(
            "unconfirmed", "inconclusive: the reader's answer is not a span of the passage"
        )
    match = agreement(node_answer, reader.answer, query) > AGREEMENT_F1
    if reader.confidence <= theta:
        said = "agrees" if match else "disagrees"
        return NodeLabel("unconfirmed", f"the reader {said}, below the confidence threshold θ")
    if (why := _span_check(query, reader, passage)) is not None:
        return NodeLabel("unconfirmed", why)
    if not match:
        check = "the reader's span does not match the node's answer"
        if choice_pick(query, reader.answer) is None:
            if (other := conflict(node_answer, reader.answer, query)) is not None:
                check += f": it names {other}"
        else:
            check += " (the node's answer does not pick the reader's option alone)"
        return NodeLabel("unconfirmed", check)
    return NodeLabel("verified")


IR_STATUS = {"verify": "corrected", "complete": "completed"}


def ir_label(
    kind: str, query: str, reader: ReaderOutput, theta: float, *, passage: str
) -> NodeLabel:
    """The label of a node IR corrected (``kind`` "verify") or completed ("complete") with the
    reader's answer: "corrected"/"completed" when that answer passes the label's checks (a
    span of the passage, a confident reader, not the query's words unless a choice's pick the
    passage compares, not a bare Yes or No), else "unconfirmed" and why. A correction by the
    NLI judge is not read here: the judge's entailment checked it."""
    status = IR_STATUS[kind]
    did = f"IR {status} it"
    if yes_no_answer(reader.answer) is not None:
        return NodeLabel("unconfirmed", f"{did}, but a yes/no answer is not a span")
    if not reader.grounded:
        return NodeLabel(
            "unconfirmed", f"{did}, but the reader's answer is not a span of the passage"
        )
    if reader.confidence <= theta:
        return NodeLabel(
            "unconfirmed", f"{did}, but the reader is below the confidence threshold θ"
        )
    if (why := _span_check(query, reader, passage)) is not None:
        return NodeLabel("unconfirmed", f"{did}, but {why}")
    return NodeLabel(status)
