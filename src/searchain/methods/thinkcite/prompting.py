"""Think&Cite's prompt: the four-action instruction, ALCE demos rewritten as action traces, the
history of a search path, and the parsing and citation rules for what the model writes.

Documents are numbered globally along a path: every document shown (also those a Reflexion
rejected) takes the next number, so ``[n]`` means the same passage wherever it appears in the
path and in the final reference list (the research code hard-coded 3 per layer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from searchain import citations, prompts
from searchain.types import Passage

FAMILIES = ("asqa", "qampari", "eli5")
# The family's own ask, spliced into the shared instruction frame (spec: "QAMPARI and ELI5 use
# the same frame with their own four demos").
TASK_LINE = {
    "asqa": "The question may be ambiguous: cover its different interpretations.",
    "qampari": "The answer is a list: give the items separated by commas, each with the one "
    "document that supports it.",
    "eli5": "Explain why or how in a few sentences, as you would to a five-year-old.",
}
# "paper": the paper's instruction, then "Here are some examples:" and the demos;
# "task-line": this code's earlier prompt (a task line per family, no examples line).
STYLES = ("paper", "task-line")
EXAMPLES = "Here are some examples:"
FALLBACK_DOC_WORDS = 60  # demo documents cut to this when whole ones do not fit the context
DOC = "Document [{n}](Title: {title}): {text}"
REFLEXION = "Reflexion: Document [{n}] does not answer the question; better search {keywords}."
ACTION = re.compile(r"^\s*(Search|Reflexion|Reflection|Output|End)\b\s*:?\s*(.*)$", re.I | re.S)


@dataclass(slots=True)
class Search:
    """One ``Search:`` of a step, the documents it showed and the Reflexion that followed."""

    query: str
    first: int  # global number of its first document
    documents: list[Passage] = field(default_factory=list)
    reflexion: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "first": self.first,
            "documents": [p.id for p in self.documents],
            "reflexion": self.reflexion,
        }


@dataclass(slots=True)
class Step:
    """A node of the search tree: one Think → Search (→ Reflexion → Search …) → Output, or End.
    ``sentence`` keeps its ``[n]`` marks (global numbers); ``citations`` are those numbers."""

    action: str  # "root" | "output" | "end"
    searches: list[Search] = field(default_factory=list)
    sentence: str = ""
    citations: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # citation repairs and other events

    @property
    def query(self) -> str:
        return self.searches[-1].query if self.searches else ""

    @property
    def documents(self) -> list[Passage]:
        return [p for s in self.searches for p in s.documents]


def family_for(task: str | None, alce: str | None = None) -> str:
    """The demo family for a dataset: QAMPARI for list questions, ELI5 for why/how, else ASQA."""
    if alce in FAMILIES:
        return alce  # type: ignore[return-value]
    return "qampari" if task == "list" else "asqa"


@lru_cache(maxsize=8)
def alce_prompt_file(family: str) -> dict[str, Any]:
    if family not in FAMILIES:
        raise ValueError(f"unknown demo family {family!r}; choose one of {', '.join(FAMILIES)}")
    text = (resources.files(prompts) / "thinkcite" / f"alce_{family}.json").read_text("utf-8")
    return json.loads(text)


def _units(answer: str, family: str) -> list[str]:
    """A demo answer cut into Output units: sentences; for list answers, runs of items that
    cite the same document (``"A [1], B [1]"``)."""
    if family != "qampari":
        return citations.split_sentences(answer)
    items = [x.strip() for x in answer.rstrip().rstrip(".").split(",") if x.strip()]
    units: list[list[str]] = []
    for item in items:
        if units and citations.marks(units[-1][-1]) == citations.marks(item):
            units[-1].append(item)
        else:
            units.append([item])
    return [", ".join(u) + "," for u in units[:-1]] + [", ".join(units[-1]) + "."] if units else []


def action_demo(demo: dict[str, Any], family: str, doc_words: int | None) -> str:
    """An ALCE demo (question, cited answer, documents) as a Think&Cite action trace: for each
    unit of the answer, ``Search:`` the titles of the documents it newly cites, show those
    documents with global numbers, ``Output:`` the unit with renumbered marks; then ``End``."""
    docs = demo["docs"]
    lines = [f"Question: {demo['question']}"]
    number: dict[int, int] = {}  # ALCE number -> our global number
    units = _units(demo["answer"], family)
    cited_all = {m for u in units for m in citations.marks(u)}
    uncited = [i for i in range(1, len(docs) + 1) if i not in cited_all]
    if uncited and units:
        # A search whose document the answer never cites, and the Reflexion it calls for:
        # the demo then shows all four actions, as the paper's demo does.
        lines.append(f"Search: {demo['question'].rstrip('?')}")
        lines.append(_doc_line(len(number) + 1, docs[uncited[0] - 1], doc_words))
        first_titles = [docs[m - 1]["title"] for m in citations.marks(units[0]) if m <= len(docs)]
        lines.append(REFLEXION.format(n=1, keywords=" ".join(dict.fromkeys(first_titles))))
        number[-uncited[0]] = 1  # takes number 1; never cited
    for unit in units:
        cited = [m for m in dict.fromkeys(citations.marks(unit)) if 1 <= m <= len(docs)]
        new = [m for m in cited if m not in number]
        if new:
            titles = list(dict.fromkeys(docs[m - 1]["title"] for m in new))
            lines.append("Search: " + " ".join(titles))
            for m in new:
                number[m] = len(number) + 1
                lines.append(_doc_line(number[m], docs[m - 1], doc_words))
        renumbered = re.sub(
            r"\[(\d+)\]", lambda g: f"[{number.get(int(g.group(1)), int(g.group(1)))}]", unit
        )
        lines.append(f"Output: {renumbered}")
    lines.append("End")
    return "\n".join(lines)


def _doc_line(n: int, doc: dict[str, Any], doc_words: int | None) -> str:
    text = doc["text"] if doc_words is None else " ".join(doc["text"].split()[:doc_words])
    return DOC.format(n=n, title=doc["title"], text=text)


def header(family: str, n_demos: int, doc_words: int | None, style: str = "paper") -> str:
    """Instruction and demos: the fixed prefix of every prompt of a question (so the local
    backend's KV-cache reuse covers it)."""
    instruction, demos = header_parts(family, n_demos, doc_words, style)
    return instruction + "\n\n" + "\n\n".join(demos)


def header_parts(
    family: str, n_demos: int, doc_words: int | None, style: str = "paper"
) -> tuple[str, list[str]]:
    """:func:`header`'s instruction and its demos (action traces)."""
    if style not in STYLES:
        raise ValueError(f"prompt style {style!r}: one of {', '.join(STYLES)}")
    data = alce_prompt_file(family)
    demos = [action_demo(d, family, doc_words) for d in data["demos"][:n_demos]]
    if style == "task-line":
        return prompts.fill("thinkcite/instruction", task=" " + TASK_LINE[family]), demos
    instruction = prompts.fill("thinkcite/instruction", task="")
    return (instruction + "\n\n" + EXAMPLES if demos else instruction), demos


def fit_header(
    family: str,
    n_demos: int,
    doc_words: int | None,
    style: str,
    budget: int | None,
    count: Callable[[str], int] | None,
) -> tuple[int, int | None, str | None]:
    """The demos that fit ``budget`` tokens (counted with ``count``): the ones asked for, else
    the same number with documents cut to :data:`FALLBACK_DOC_WORDS` words, else one demo
    fewer at a time. Returns ``(n_demos, doc_words, note)``; the note (None when nothing was
    cut) says what was dropped and why, for the trace. Unknown budget: as asked."""
    if budget is None or count is None:
        return n_demos, doc_words, None
    cut = FALLBACK_DOC_WORDS if doc_words is None else min(doc_words, FALLBACK_DOC_WORDS)
    ladder = [(n_demos, doc_words), *((n, cut) for n in range(n_demos, -1, -1))]
    asked = count(header(family, n_demos, doc_words, style))
    for n, words in ladder:
        tokens = (
            asked if (n, words) == (n_demos, doc_words) else count(header(family, n, words, style))
        )
        if tokens <= budget or n == 0:
            if (n, words) == (n_demos, doc_words):
                return n, words, None
            whole = "whole documents" if doc_words is None else f"{doc_words}-word documents"
            return (
                n,
                words,
                (
                    f"{n_demos} demos with {whole} take {asked} tokens, more than the {budget} "
                    f"the demos may take of this model's context (demo_budget): the prompt has "
                    f"{n} demos with {words}-word documents ({tokens} tokens)"
                ),
            )
    raise AssertionError("unreachable: the ladder ends with no demo")


def render_documents(search: Search) -> list[str]:
    return [
        DOC.format(n=search.first + i, title=p.title, text=" ".join(p.text.split()))
        for i, p in enumerate(search.documents)
    ]


HISTORIES = ("all", "cited")


def render_history(question: str, path: list[Step], history: str = "all") -> str:
    """``Question:`` and the actions of the path so far. ``history="all"`` (the paper's H =
    [(q_i, D_i, y_i, C_i)]) shows every document each earlier search returned; ``"cited"``
    only those their Output cited (numbers unchanged), which keeps six steps inside a small
    context."""
    lines = [f"Question: {question}"]
    for step in path:
        if step.action == "root":
            continue
        cited = set(step.citations)
        for s in step.searches:
            lines.append(f"Search: {s.query}")
            lines += [
                d
                for i, d in enumerate(render_documents(s))
                if history == "all" or s.first + i in cited
            ]
            if s.reflexion is not None:
                lines.append(f"Reflexion: {s.reflexion}")
        if step.action == "output":
            lines.append(f"Output: {step.sentence}")
        elif step.action == "end":
            lines.append("End")
    return "\n".join(lines)


def parse_action(text: str) -> tuple[str, str]:
    """``("search" | "reflexion" | "output" | "end" | "", argument)`` of one generated line.
    Tolerant of case, a missing colon and "Reflection"; anything else is ``("", text)``."""
    m = ACTION.match(text.strip().split("\n", 1)[0])
    if not m:
        return "", text.strip()
    kind = m.group(1).lower()
    kind = "reflexion" if kind == "reflection" else kind
    return kind, m.group(2).strip()


def enforce_citations(
    text: str, valid: range, step_docs: list[tuple[int, Passage]], max_cites: int = 3
) -> tuple[str, list[int], list[str]]:
    """Make every sentence cite 1–``max_cites`` shown documents. Marks outside ``valid`` are
    removed, extra marks beyond ``max_cites`` dropped; a sentence left with none gets the
    step's document sharing most words with it (post-hoc, noted), or, sharing none, the step's
    top-ranked one (noted: the progress reward then judges that citation). Only a step that
    found no document leaves a sentence uncited. Returns the text, the cited numbers and notes."""
    out, cited, notes = [], [], []
    for sentence in citations.split_sentences(text):
        found = list(dict.fromkeys(citations.marks(sentence)))
        keep = [m for m in found if m in valid][:max_cites]
        dropped = [m for m in found if m not in keep]
        if dropped:
            notes.append(
                f"dropped citation marks {dropped} (outside 1..{valid.stop - 1} or > "
                f"{max_cites} per sentence)"
            )
        body = citations.strip_marks(sentence)
        if not body:
            continue
        if not keep and step_docs:
            refs = [p for _, p in step_docs]
            _, added = citations.post_cite(body, refs)
            if added:
                keep = [step_docs[added[0].mark - 1][0]]
                notes.append(f"no valid citation: attached [{keep[0]}] post-hoc")
            else:
                keep = [step_docs[0][0]]
                notes.append(f"no valid citation and no overlap: attached [{keep[0]}] (top-ranked)")
        end = body[-1] if body[-1] in ".!?," else ""
        core = body[:-1].rstrip() if end else body
        marks = "".join(f"[{m}]" for m in keep)
        out.append(f"{core} {marks}{end}" if marks else body)
        cited += [m for m in keep if m not in cited]
    return " ".join(out), cited, notes
