"""The per-item scores ``searchain eval`` records, chosen by the task family.

Every method is scored on the same thing: its final answer (``trace.answer``, the short
answer). SearChain, CoT and Self-Ask also write a final content that restates intermediate
answers; on a comparison question it can name both entities and so "contain" the gold
answer without answering. What that text scores is recorded beside, as ``cover_em_content``
(and ``accuracy_content`` for labels), never in place of the answer's scores.
"""

from __future__ import annotations

from searchain.scoring.longform import rouge_l
from searchain.scoring.match import cover_em, exact_match, label_accuracy, token_f1
from searchain.types import Trace

ANSWER_METRICS = frozenset(
    {"cover_em", "em", "f1", "accuracy", "rouge_l", "cover_em_content", "accuracy_content"}
)
"""The keys :func:`score_trace` writes: a rescoring replaces these and keeps the others
(retrieval recall, ALCE citation scores) as recorded."""


def trace_text(trace: Trace) -> str:
    """A trace's whole output: its final content, else its short answer (what the
    ``*_content`` metrics and long-form answers are scored on)."""
    return trace.final_content or trace.answer


def score_item(prediction: str, gold: dict, task: str) -> dict[str, float]:
    """The per-item metrics of one prediction, chosen by task family: cover-EM, EM and token
    F1 for answers; label accuracy for yes/no and fact checking; ROUGE-L for long-form
    answers (against the gold answer)."""
    answers = [a for a in gold.get("answers", []) if a]
    out: dict[str, float] = {}
    if task in ("yesno", "factcheck") and gold.get("label"):
        out["accuracy"] = label_accuracy(prediction, gold["label"])
    if task == "longform":
        if answers:
            out["rouge_l"] = rouge_l(prediction, answers)
        return out
    if answers:
        out["cover_em"] = cover_em(prediction, answers)
        out["em"] = exact_match(prediction, answers)
        out["f1"] = token_f1(prediction, answers)
    return out


def score_trace(trace: Trace, gold: dict) -> dict[str, float]:
    """What ``searchain eval`` records for one answered item (``gold``: ``answers``,
    ``label``, ``task``).

    ``cover_em``, ``em``, ``f1`` and ``accuracy`` score the final answer, ``trace.answer``,
    for every method alike; ``cover_em_content`` and ``accuracy_content`` score
    :func:`trace_text` (the final content where the method writes one, else the answer).
    A long-form answer is its final content, so ``rouge_l`` scores that. Citation marks never
    count (the matching functions strip them)."""
    task = gold.get("task") or "open"
    if task == "longform":
        return score_item(trace_text(trace), gold, task)
    out = score_item(trace.answer, gold, task)
    content = score_item(trace_text(trace), gold, task)
    for key in ("cover_em", "accuracy"):
        if key in content:
            out[f"{key}_content"] = content[key]
    return out
