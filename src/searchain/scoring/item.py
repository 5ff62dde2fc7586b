"""The per-item scores ``searchain eval`` records, chosen by the task family."""

from __future__ import annotations

from searchain.scoring.longform import rouge_l
from searchain.scoring.match import cover_em, exact_match, label_accuracy, token_f1
from searchain.types import Trace


def trace_text(trace: Trace) -> str:
    """The text a trace is scored on: its final content, else its short answer."""
    return trace.final_content or trace.answer


def score_item(prediction: str, gold: dict, task: str) -> dict[str, float]:
    """The per-item metrics ``searchain eval`` records, chosen by task family: cover-EM, EM
    and token F1 for answers; label accuracy for yes/no and fact checking; ROUGE-L for
    long-form answers (against the gold answer)."""
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
