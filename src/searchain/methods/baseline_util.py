"""What the baselines share: their ``task`` setting and its label instruction on the
question, reading a base model's final-answer line, grounding a short answer in the passages a
method retrieved, and collecting those passages as numbered references."""

from __future__ import annotations

import re
from typing import Any

from searchain.methods.settings import setting
from searchain.text import contains_answer, normalize_answer
from searchain.types import Citation, Passage

# "So the final answer is: X" (Self-Ask, CoT) or "so the answer is X" (ReAct thoughts).
_FINAL = re.compile(r"so the (?:final )?answer is\s*:?\s*(.*)", re.I)

# The task kinds of the data sets (eval/datasets.py's TASKS; methods sit below eval, so the
# names are repeated here). A data set's task tells a method which answers are allowed.
TASK_KINDS = ("multihop", "yesno", "factcheck", "longform", "list", "open")
# What SearChain's CoQ prompts add to a question of these tasks (prompts/searchain/
# coq_yesno.txt, coq_factcheck.txt; the paper's figures 9 and 10): the labels a gold answer
# can be. The baselines get the same words, or cover-EM could never credit them on FEVER.
LABEL_INSTRUCTIONS = {
    "yesno": ' (The answer can only be "Yes" or "No")',
    "factcheck": " (SUPPORTS or REFUTES)?",
}
# A chat answer's last instruction: a short answer, or for a labelled task its labels by name
# (the 1.5B model ended a FEVER final content with a sentence, not a label). SearChain's
# tracing and evidence steps and retrieve-read end with it.
SHORT_ANSWER_ENDING = 'End with "So the answer is" and the short answer.'
TRACING_ENDINGS = {
    "factcheck": 'End with "So the answer is SUPPORTS." or "So the answer is REFUTES."',
    "yesno": 'End with "So the answer is Yes." or "So the answer is No."',
}


def answer_ending(task: str) -> str:
    """The short-answer instruction a prompt ends with for ``task``."""
    return TRACING_ENDINGS.get(task, SHORT_ANSWER_ENDING)


def task_setting() -> Any:
    """The ``task`` setting every baseline's config declares (a fresh field for each)."""
    return setting(
        "open",
        "The data set's task kind: the label instruction added to "
        "the question (FEVER, StrategyQA).",
        choices=TASK_KINDS,
    )


def task_question(question: str, task: str) -> str:
    """``question`` as a baseline's prompt asks it: with the task's label instruction."""
    return question + LABEL_INSTRUCTIONS.get(task, "")


def final_answer(text: str) -> str | None:
    """The answer after the last "So the final answer is:" in ``text``, cut at the end of its
    line; ``None`` when the marker is missing (an empty answer after the marker is ``""``)."""
    found = list(_FINAL.finditer(text))
    if not found:
        return None
    return clean(found[-1].group(1).split("\n")[0])


def clean(answer: str) -> str:
    """Strip the quotes, trailing full stop and spaces base models put around answers."""
    return answer.strip().strip("\"'").strip().rstrip(".").strip()


class References:
    """Every passage a method retrieved, numbered once in the order first seen."""

    def __init__(self) -> None:
        self.passages: list[Passage] = []
        self._index: dict[str, int] = {}

    def add(self, passages: list[Passage]) -> None:
        for p in passages:
            if p.id not in self._index:
                self._index[p.id] = len(self.passages) + 1
                self.passages.append(p)

    def mark_for(self, answer: str, among: list[Passage] | None = None) -> int | None:
        """The reference number of the first passage (of ``among``, else of all) that contains
        ``answer`` as whole words — the evidence it came from — or ``None``."""
        if normalize_answer(answer) in ("", "yes", "no"):  # a yes/no is never "in" a passage
            return None
        for p in among if among is not None else self.passages:
            if contains_answer(f"{p.title} {p.text}", answer):
                return self._index.get(p.id)
        return None

    def cite(self, sentence: str, answer: str, among: list[Passage] | None = None):
        """``sentence`` with a ``[n]`` mark for the passage containing ``answer``, and the
        citation (origin "post-hoc": attached by the method, not written by the model)."""
        n = self.mark_for(answer, among)
        if n is None:
            return sentence, None
        body = sentence.rstrip(".")
        marked = f"{body} [{n}]."
        return marked, Citation(n, self.passages[n - 1].id, marked, origin="post-hoc")
