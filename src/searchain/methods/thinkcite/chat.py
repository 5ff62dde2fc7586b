"""Think&Cite in chat form (instruct models): the action prompt as a dialogue and a tolerant
reader of the model's reply.

Protocol: the system turn is the instruction (``prompts/thinkcite/action.chat.txt``); each ALCE
demo (:func:`prompting.header_parts`, the completion form's demos) and then the question's path
so far (:func:`prompting.render_history` plus the current step) follow as a dialogue: a user
turn shows the new observations (the question, the documents of a search) and asks for the
next action (:data:`REQUESTS`), the assistant turn is that action (``Search: ...``,
``Reflexion: ...``, ``Output: ... [n]``, ``End``); the last user turn asks for the action
wanted now. The completion form forces an action by ending the prompt with its label
(``Search:``); a chat reply cannot be prefilled, so the request asks for it and
:func:`parse_reply` reads it back out of chat habits (markdown, a preamble, quotes, an
``Action:`` label, citation marks before the label, a missing label).

Why a dialogue and not the demos in the system turn with the path as one user turn: with the
latter the 0.5B test model copied the demo's answer (Mawsynram's rainfall) into its Output
for a question about an actress, in every sampled child; as a dialogue it wrote from the
retrieved documents.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from searchain import citations, prompts

TEMPLATE = "thinkcite/action"
# What the user turn asks for. "next": after a sentence, search on or end; "decide": after a
# reflected search, write the sentence or reflect again.
# No placeholder in them: a small model copies "Search: key words" literally.
REQUESTS = {
    "next": "What should be searched next to complete the answer? Reply with one line that "
    "starts with `Search:`, or reply `End` if the answer so far already answers the question.",
    "search": "What should be searched to answer the question? Reply with one line that starts "
    "with `Search:`.",
    "reflexion": "Are these documents enough to answer the question? Reply with one line that "
    "starts with `Reflexion:` and says what they lack and what to search instead.",
    "decide": "If the documents above support a sentence of the answer, reply with one line "
    "that starts with `Output:`, then the sentence, then the numbers of the 1 to 3 documents "
    "that support it in square brackets{choices}. Otherwise reply with one line that starts "
    "with `Reflexion:` and says what is missing.",
    "output": "Write the next sentence of the answer to this question, using only the "
    "documents above. Reply with one line that starts with `Output:`, then the sentence, then "
    "the numbers of the 1 to 3 documents that support it in square brackets{choices}.",
}
# {choices}: the marks the sentence may cite, the documents of the current step (a model left
# to "[n]" alone often wrote none, or copied the placeholder).
CHOICES = ", chosen from {marks}"
_DOC_LINE = re.compile(r"^Document \[(\d+)\]")
# A reply is one turn; these only cut a model that goes on to invent the next observation.
STOP = ("\nDocument [", "\nQuestion:")

# Action labels and the synonyms chat models use for them.
_KINDS = {
    "search": "search",
    "query": "search",
    "search query": "search",
    "keywords": "search",
    "key words": "search",
    "reflexion": "reflexion",
    "reflection": "reflexion",
    "reflect": "reflexion",
    "thought": "reflexion",
    "thoughts": "reflexion",
    "output": "output",
    "answer": "output",
    "final answer": "output",
    "sentence": "output",
    "end": "end",
}
_NAMES = "|".join(sorted((re.escape(k).replace(r"\ ", r"\s+") for k in _KINDS), key=len)[::-1])
_LABEL = re.compile(
    rf"^(?:(?:next\s+)?action(?:\s*\d+)?\s*[:\-]\s*)?({_NAMES})\b\s*(?:([:\-–(\[])\s*(.*)|(.*))$",
    re.I,
)
_LEAD = re.compile(r"^(?:[-*+>•]\s+|\d+[.)]\s+|#{1,6}\s+)+")  # bullets, numbers, quotes, headings
_EMPHASIS = re.compile(r"\*\*|__|`")
# Chat pleasantries before the content ("Sure!", "Certainly, here it is.").
_PREAMBLE = re.compile(
    r"^(?:sure|okay|ok|certainly|of course|here is|here's)\b[^.!]{0,40}[.!]?$", re.I
)
_PREAMBLE_START = re.compile(
    r"^(?:sure|okay|ok|certainly|of course|alright)\b[^.!:]{0,40}[.!:,]\s*", re.I
)
_MARKS_FIRST = re.compile(r"^((?:\[\d+\]\s*)+)[-:–]?\s*(.*)$", re.S)  # "[2] output: ..."
# The request's own words copied as the argument ("Search: key words", "Output: sentence").
_PLACEHOLDER = re.compile(
    r"^(?:<[^>]*>|\.\.\.|key\s*words?|sentence|thoughts?|query)\s*(?:\[[\dn]\])?\.?$", re.I
)
_QUOTES = "\"'“”‘’"


def messages(instruction: str, demos: list[str], history: str, action: str) -> list[dict[str, str]]:
    """The chat messages of one action call: the system turn, each demo as a dialogue, then
    the question's path so far as a dialogue that ends asking for ``action`` (a key of
    :data:`REQUESTS`). ``instruction`` and ``demos`` are :func:`prompting.header_parts`."""
    out = prompts.messages(TEMPLATE, instruction=instruction)
    for demo in demos:
        out += dialogue(demo, None)
    return out + dialogue(history.strip("\n"), action)


def request_text(action: str, marks: Sequence[str] = ()) -> str:
    """The request for ``action``, naming the citable ``marks`` (``["[4]", "[5]"]``)."""
    choices = CHOICES.format(marks=" ".join(marks)) if marks else ""
    return REQUESTS[action].replace("{choices}", choices)


_ACTION_LINE = re.compile(r"^(Search|Reflexion|Output|End)\b")


def dialogue(trace: str, action: str | None) -> list[dict[str, str]]:
    """An action trace (``Question:``/``Document`` lines and action lines) as turns: each
    action an assistant reply to a user turn holding the lines before it (the observations)
    and the request that asks for it; ``action``, if given, is requested in a last user turn."""
    out: list[dict[str, str]] = []
    seen: list[str] = []
    marks: list[str] = []  # the documents of the current step, citable by its Output
    last = ""

    def ask(action: str) -> None:
        request = request_text(action, marks)
        body = "\n".join(seen)
        out.append({"role": "user", "content": f"{body}\n\n{request}" if body else request})
        seen.clear()

    for line in trace.splitlines():
        m = _ACTION_LINE.match(line)
        if m is None:
            seen.append(line)
            doc = _DOC_LINE.match(line)
            marks.extend([f"[{doc.group(1)}]"] if doc else [])
            continue
        kind = m.group(1).lower()
        ask("next" if last == "output" or kind == "end" else kind)
        out.append({"role": "assistant", "content": line})
        if kind in ("output", "end"):
            marks.clear()
        last = kind
    if action is not None:
        ask(action)
    return out


def _clean(line: str) -> str:
    line = _EMPHASIS.sub("", line).strip()
    return _LEAD.sub("", line).strip()


def _unwrap(arg: str) -> str:
    """An action's argument without the wrapping chat models add: brackets, quotes."""
    arg = arg.strip()
    if arg[:1] in "([" and arg[-1:] in ")]" and not re.fullmatch(r"\[\d+\]", arg):
        arg = arg[1:-1].strip()
    if len(arg) >= 2 and arg[0] in _QUOTES and arg[-1] in _QUOTES:
        arg = arg[1:-1].strip()
    return arg


def _label(line: str) -> tuple[str, str] | None:
    """``(kind, argument)`` of a line that starts with an action label, else ``None``.
    ``End`` counts only alone ("End of the war ..." is a sentence); the other labels need a
    separator (``:``, ``-``, a bracket) so a sentence starting "Search for" stays a sentence.
    Citation marks written before or right after the label ("[2] Output: ...", "Sentence [2] -
    ...") are kept, at the end of the argument."""
    lead = _MARKS_FIRST.match(line)
    marks, line = (lead.group(1).strip(), lead.group(2)) if lead else ("", line)
    m = _LABEL.match(line)
    if not m:
        return None
    kind = _KINDS[re.sub(r"\s+", " ", m.group(1).lower())]
    sep, arg, bare = m.group(2), m.group(3), m.group(4)
    if kind == "end":
        rest = (arg or bare or "").strip()
        return ("end", "") if not rest.strip(".!:;)]") else None
    if sep is None:
        return (kind, marks) if not (bare or "").strip() else None  # a label alone ("**Output**")
    arg = (sep + (arg or "")) if sep in "([" else (arg or "")
    after = _MARKS_FIRST.match(arg)
    if after and after.group(2):  # "Sentence [2] - text"
        marks, arg = f"{marks} {after.group(1).strip()}".strip(), after.group(2)
    arg = _unwrap(arg)
    if _PLACEHOLDER.match(arg):
        arg = ""
    return kind, _append_marks(arg, marks) if arg else ""


def _append_marks(text: str, marks: str) -> str:
    """``text`` with citation ``marks`` before its final punctuation."""
    if not marks:
        return text
    end = text[-1] if text[-1:] in ".!?" else ""
    return f"{text.removesuffix(end).rstrip()} {marks}{end}"


def parse_reply(text: str) -> tuple[str, str, bool]:
    """``(kind, argument, labelled)`` of a chat reply: the first line that carries an action
    label (``kind`` one of search/reflexion/output/end); a label alone on its line takes the
    next line as its argument. With no label anywhere, ``("", first content line, False)``,
    skipping fences and preambles ("Sure! Here is the next action:"). An argument that only
    repeats the request's words ("key words", "sentence") is empty."""
    lines = [_clean(ln) for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("```")]
    for i, line in enumerate(lines):
        found = _label(line) or _label(_PREAMBLE_START.sub("", line))
        if found is None:
            continue
        kind, arg = found
        if kind != "end" and (not arg or citations.strip_marks(arg) == ""):
            nxt = next((ln for ln in lines[i + 1 :] if _label(ln) is None), "")
            arg = _append_marks(_unwrap(nxt), arg) if nxt else ""
        return kind, arg, True
    content = [ln for ln in lines if not ln.endswith(":") and not _PREAMBLE.match(ln)]
    return "", _unwrap(content[0]) if content else "", False


def reply_argument(text: str, want: str) -> tuple[str, str | None]:
    """The argument of a reply to a request for action ``want``, and a note when the reply
    did not carry that label (kept with the raw text; ``None`` when it did)."""
    kind, arg, labelled = parse_reply(text)
    if labelled and kind == want and arg:
        return arg, None
    how = f"labelled {kind!r}" if labelled else "unlabelled"
    if labelled and kind == want:
        how = "empty"
    return arg, f"chat reply {how} where {want!r} was asked; used {arg!r} (raw: {text!r})"
