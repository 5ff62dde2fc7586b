"""One configuration identity: what a calibrator was fit on, and what an answer was made with.

A calibrator's probability holds for the configuration its items were answered with and for
nothing else: another method (an ablation included), model, prompt form, a baseline's prompt
template, question position, final step, node-label rule, task or corpus makes other answers
with other signals. So a
calibrator file names its configuration (:func:`configuration` of its items' traces), an
answer's trace gives its own, and a calibrator maps only an answer whose configuration is the
same (:func:`differences`). The costly checks run (``+likelihood``) choose the calibrator's file
(``searchain+likelihood``); they run after the answer and leave it as it is, so a check
without a calibrator of its own leaves the method's probability valid ("shown, not used").
"""

from __future__ import annotations

from typing import Any

from searchain.scoring.trace_kind import chain_of_query
from searchain.trace_extras import CORPUS_KEY as CORPUS_KEY  # the stamps' keys, as before
from searchain.trace_extras import LABEL_RULE_KEY as LABEL_RULE_KEY
from searchain.trace_extras import MODEL_FILE_KEY as MODEL_FILE_KEY
from searchain.trace_extras import ChainExtras, ChainSettings, RunStamps
from searchain.types import Trace

QUESTION_LAST = "@question-last"  # prompts.QUESTION_LAST: the CoQ template's suffix
FIELDS = (
    "method",
    "model",
    "prompt_form",
    "template",
    "question_position",
    "final_step",
    "label_rule",
    "task",
    "corpus",
    "model_file",
    "theta",
    "k",
    "evidence_k",
    "reader",
    "yesno_check",
)
# What each field is, in words (a note saying why an answer is not calibrated).
WORDS = {
    "method": "method",
    "model": "model",
    "prompt_form": "prompt form",
    "template": "prompt template",
    "question_position": "question position",
    "final_step": "final step",
    "label_rule": "node-label rule version",
    "task": "task",
    "corpus": "corpus",
    "model_file": "model file",
    "theta": "reader threshold θ",
    "k": "passages per node k",
    "evidence_k": "evidence passages",
    "reader": "reader",
    "yesno_check": "yes/no check",
}
# SearChain's settings that shape which nodes count as confirmed and what the final step
# reads, as its trace records them (absent: a trace made before they were recorded, said as
# "not recorded" — except the yes/no check, which was "span" until it became a setting).
SEARCHAIN_SETTINGS = ("theta", "k", "reader")
# The tasks a baseline asks with a label instruction (methods/baseline_util.LABEL_INSTRUCTIONS;
# scoring sits below methods, so the names are repeated, and a test holds them equal). Every
# other task makes the same prompt: an open question asked of retrieve-read is answered as a
# HotpotQA one is, so a calibrator fit on either maps both. SearChain's task is its CoQ prompt
# family (an open question is asked as multi-hop QA) and is compared as it is.
LABELLED_TASKS = ("yesno", "factcheck")
UNLABELLED = "without label instruction"


class UnnamedConfiguration(ValueError):
    """A trace whose configuration cannot be named: it was made before a setting that shapes
    its answer was recorded (a calibrator fit on it or applied to it could be the wrong one)."""


def _searchain(trace: Trace) -> bool:
    return chain_of_query(trace)


def _of_a_chain(config: dict[str, Any]) -> bool:
    """A configuration of a chain's answer: it names the node-label rule, as
    :func:`configuration` does for every such answer (1 for a trace before the rule was
    versioned). A calibrator fit before the identity held the rule misses it, and differs from
    every chain's answer in it whatever its task is said to be."""
    return config.get("label_rule") is not None


def question_position(trace: Trace) -> str | None:
    """SearChain's question position, read from the CoQ template it sent (None elsewhere)."""
    template = ChainExtras.of(trace).template
    if not _searchain(trace) or template is None:
        return None
    return "last" if template.endswith(QUESTION_LAST) else "instruction"


def final_step(trace: Trace) -> str | None:
    """How SearChain wrote its answer: ``tracing`` (also every trace made before the setting
    was recorded: the only final step then) or ``evidence:<its sources>``, after
    ``read-first:<triggers> → `` when it read first (route.py; absent: it always chained, the
    only route before the setting); None elsewhere."""
    if not _searchain(trace):
        return None
    settings, route = ChainSettings.of(trace), ChainExtras.of(trace).route
    step = settings.final_step
    if step == "evidence" and settings.evidence_sources is None:
        raise UnnamedConfiguration(
            "an evidence-step answer made before its passages' sources (evidence_sources) "
            "were recorded: its configuration cannot be named, so no calibrator is fit on it "
            "or applied to it; answer it again with this version"
        )
    written = f"{step}:{settings.evidence_sources}" if step == "evidence" else step
    return f"{route['rule']} → {written}" if route is not None else written


# The template a one-call baseline answered with when its trace does not say: retrieve-read's
# only default before it recorded one (the one-sentence form; retrieve_read_answer since).
TEMPLATE_BEFORE = {"retrieve-read": "retrieve_read"}


def answer_template(trace: Trace) -> str | None:
    """The prompt template a baseline's answer was written with (its ``template`` setting;
    None for SearChain, whose prompts are its question position and final step, and for a
    method that records none)."""
    if _searchain(trace):
        return None
    return RunStamps.of(trace).template or TEMPLATE_BEFORE.get(trace.method)


def label_rule(trace: Trace) -> int | None:
    """SearChain's node-label rule version (1 when the trace does not say; None elsewhere)."""
    return ChainSettings.of(trace).label_rule if _searchain(trace) else None


def configuration(trace: Trace, model: str) -> dict[str, Any]:
    """The configuration ``trace``'s answer was made with (``model``: its model's key)."""
    stamps = RunStamps.of(trace)
    return {
        "method": trace.method,
        "model": model,
        "prompt_form": stamps.prompt_form,
        "template": answer_template(trace),
        "question_position": question_position(trace),
        "final_step": final_step(trace),
        "label_rule": label_rule(trace),
        "task": stamps.task,
        "corpus": stamps.corpus,
        "model_file": stamps.model_file,
        **searchain_settings(trace),
    }


def searchain_settings(trace: Trace) -> dict[str, Any]:
    """θ, k, the reader, the evidence step's passages and the yes/no check of a SearChain
    answer (all None elsewhere: other methods do not have them)."""
    if not _searchain(trace):
        return dict.fromkeys((*SEARCHAIN_SETTINGS, "evidence_k", "yesno_check"))
    settings = ChainSettings.of(trace)
    return {
        "theta": settings.theta,
        "k": settings.k,
        "reader": settings.reader,
        "evidence_k": settings.evidence_k if settings.final_step == "evidence" else None,
        "yesno_check": settings.yesno_check,
    }


def alike_but_the_corpus(fit: dict[str, Any], answer: dict[str, Any]) -> bool:
    """Whether the answer's configuration is the calibrator's in every field but the corpus
    (the condition of a transfer, ``transfer.py``)."""
    return differences({**fit, "corpus": answer.get("corpus")}, answer) == []


def corpora_said(corpus: str | list[str] | None) -> str:
    """A fit configuration's corpus in words: one name, or the pooled ones joined."""
    return ", ".join(corpus) if isinstance(corpus, list) else str(corpus)


def differences(fit: dict[str, Any], answer: dict[str, Any]) -> list[str]:
    """Where the answer's configuration is not the calibrator's, in words ("question
    position last, fit on instruction"); empty: the same configuration. A calibrator fit on
    answers over several corpora pooled (:func:`pooled`) names them all: an answer over any
    of them is like its items; over another corpus it is not."""
    return [
        f"{WORDS[f]} {_shown(answer.get(f))}, fit on {_shown(fit.get(f))}"
        for f in FIELDS
        if not _same(fit, answer, f)
    ]


def pooled(configurations: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """One configuration for answers that differ in nothing but their corpus, its corpus the
    sorted list of theirs (a calibrator fit on them all maps an answer over any of them), and
    the differences in words of the first answer that differs in more (empty: none)."""
    first = dict(configurations[0])
    if any(c.get("corpus") is None for c in configurations):
        return first, ["corpus not recorded: answers over an unnamed corpus are not pooled"]
    corpora = {str(c.get("corpus")) for c in configurations}
    for other in configurations[1:]:
        said = [d for d in differences({**first, "corpus": other.get("corpus")}, other)]
        if said:
            return first, said
    first["corpus"] = sorted(corpora) if len(corpora) > 1 else first.get("corpus")
    return first, []


def _same(fit: dict[str, Any], answer: dict[str, Any], field: str) -> bool:
    fitted = fit.get(field)
    if field == "corpus" and isinstance(fitted, list):  # pooled corpora: any of them
        return answer.get(field) in fitted
    return _compared(fit, field) == _compared(answer, field)


def _compared(config: dict[str, Any], field: str) -> Any:
    """``config``'s ``field`` as it shapes the answer: a baseline's task by the prompt it
    makes (:data:`LABELLED_TASKS`), every other field as recorded."""
    value = config.get(field)
    if field != "task" or value is None or _of_a_chain(config):
        return value
    return value if value in LABELLED_TASKS else UNLABELLED


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "one of " + ", ".join(map(str, value))
    return "not recorded" if value is None else str(value)
