"""How far to trust an answer: the signals a trace already holds, mapped to a confidence.

Every method's trace gets a :class:`~searchain.types.Confidence` (``assess``). Its signals
cost nothing extra — they are read from what the method did:

* every method: whether there is an answer, whether the answer is found in the passages the
  method read (``answer_in_references``) and in those it cites (``answer_in_cited``), how many
  passages it cites, whether the answer is a bare Yes or No (``answer_is_yes_no``: a passage
  can hold a name, never a verdict, so the other signals say little about one);
* SearChain: the share of the final reasoning path that IR confirmed (a confident reader
  agreed, or IR corrected or completed the node) and the share it could not confirm, whether
  the final answer is the answer of a confirmed node, whether IR changed a node, the rounds
  the chain needed, the reader's mean log-probability on the path.
* SearChain's evidence step: whether a passage the question's own words retrieved states the
  answer, how many passages read state it, whether a confirmed node's answer was dropped
  (``evidence_signals.py``);
* with the method setting ``maxprob``: MaxProb, the mean token probability of the answer in
  the call that wrote it (``answer_maxprob``, read from that call: ``maxprob.py``).

A calibrator (``calibrator.py``: a logistic regression fit on calibration items,
``calibration.py``, shipped as a data file with its provenance) maps them to the probability
that the answer is right, for answers of exactly the configuration it was fit on
(``configuration.py``), with its own largest terms as the reasons (``reasons.py``).
Elsewhere — no calibrator, another configuration, or one no better than the base rate — the
value is an *uncalibrated score* (the share of the binary evidence above that holds) and
says why; it never poses as a probability. One exception of value, not of label: an answer
over documents that a documentation family (``…--docs.json``) was fit on in all but the
corpus gets that family's mapping as a *transfer score*, where its file says the mapping
ranked its held-out items better (``transfer.transfer_record``) — still uncalibrated, and
its note says so.
"""

from __future__ import annotations

import math
import re
from typing import Any

from searchain.scoring.confidence import maxprob
from searchain.scoring.confidence.calibrator import (
    UNCALIBRATED,
    Calibrator,
    find_calibrator,
    transfer_family,
)
from searchain.scoring.confidence.chain_signals import answer_in, searchain_signals
from searchain.scoring.confidence.configuration import configuration, corpora_said
from searchain.scoring.confidence.evidence_signals import evidence_signals
from searchain.scoring.confidence.free_signals import free_signals
from searchain.scoring.confidence.reasons import calibrated_reasons
from searchain.text import normalize_answer
from searchain.trace_extras import CHECKS_KEY as CHECKS_KEY  # checks.py writes it
from searchain.trace_extras import ChainExtras, CheckExtras
from searchain.types import Confidence, Trace, Usage

# Where each costly signal turns from evidence against the answer to evidence for it: a
# probability or a share at one half, a mean token log-probability at a mean token
# probability of one half (below it the model finds its own answer unlikely).
UNLIKELY_LOGPROB = math.log(0.5)
EVIDENCE_AT = {
    "answer_supported": 0.5,
    "answer_agreement": 0.5,
    "answer_logprob": UNLIKELY_LOGPROB,
    maxprob.SIGNAL: 0.5,
}


def model_key(name: str | None) -> str:
    """A model's name without its file ending, instruct suffix or quantisation:
    ``qwen2.5-coder-1.5b-instruct.gguf`` and ``…-instruct-q4_k_m`` → ``qwen2.5-coder-1.5b``."""
    if not name:
        return "unknown"
    key = name.rsplit("/", 1)[-1].lower().removesuffix(".gguf")
    key = re.sub(r"-q\d(_[a-z0-9]+)*$", "", key)
    return key.removesuffix("-instruct")


def signals(trace: Trace) -> dict[str, float]:
    """Every signal the trace holds (a chain's only for a trace that records its path)."""
    cited_ids = {c.passage_id for c in trace.citations if c.passage_id}
    texts = [p.text for p in trace.references]
    cited = [p.text for p in trace.references if p.id in cited_ids]
    out = {
        "has_answer": float(bool(normalize_answer(trace.answer))),
        "answer_in_references": answer_in(trace.answer, texts),
        "answer_in_cited": answer_in(trace.answer, cited),
        "citations": float(min(len(cited_ids), 5)),
        "answer_is_yes_no": float(normalize_answer(trace.answer) in ("yes", "no")),
        **free_signals(trace),  # whether the question was answered (free_signals.py)
    }
    if ChainExtras.of(trace).path is not None:  # a chain's path through its Tree-of-Reasoning
        out.update(searchain_signals(trace))
        out.update(evidence_signals(trace))  # the evidence step's (evidence_signals.py)
    for found in CheckExtras.of(trace).checks.values():  # the costly checks, if run
        out.update(found)
    out.update(maxprob.signal(trace.meta))  # with the method setting maxprob (maxprob.py)
    return out


def checks_of(trace: Trace) -> tuple[str, ...]:
    """The costly checks that were run on this trace (``checks.py``), and
    ``maxprob`` where the method recorded MaxProb (its calibrator is ``searchain+maxprob``)."""
    extras = CheckExtras.of(trace)
    asked = set(extras.checks)
    if extras.maxprob_asked:
        asked.add(maxprob.KEY)
    return tuple(sorted(asked))


# The binary evidence an uncalibrated score counts (where the trace has it).
EVIDENCE = ("has_answer", "answer_in_references", "answer_in_cited", "answer_from_confirmed_node")


# What each piece of evidence means, in words: when it fails (``lowered_by``) and when it
# holds (``raised_by`` of an uncalibrated score) — declared together, so neither is missing.
SAID = {
    "has_answer": ("there is no answer", "there is an answer"),
    "answer_in_references": (
        "the answer is not in the passages found",
        "the answer is in the passages found",
    ),
    "answer_in_cited": (
        "the answer is not in the passages cited",
        "the answer is in the passages cited",
    ),
    "answer_from_confirmed_node": (
        "the answer is not one the search confirmed",
        "the answer is one the search confirmed",
    ),
    "answer_supported": (
        "the model does not find the answer stated in the cited passages",
        "the model finds the answer stated in the cited passages",
    ),
    "answer_agreement": (
        "asked again, the model mostly answers otherwise",
        "asked again, the model mostly gives the same answer",
    ),
    "answer_logprob": (
        "the model finds its own answer unlikely",
        "the model finds its own answer likely",
    ),
    maxprob.SIGNAL: (
        "the model wrote its answer with low token probability",
        "the model wrote its answer with high token probability",
    ),
}


def _evidence(found: dict[str, float]) -> dict[str, float]:
    """The binary evidence the trace has, a costly check's signal read at ``EVIDENCE_AT``."""
    held = {k: found[k] for k in EVIDENCE if k in found}
    for costly, at in EVIDENCE_AT.items():
        if costly in found:
            held[costly] = float(found[costly] >= at)
    return held


def lowered_by(found: dict[str, float]) -> list[str]:
    """The signals that speak against the answer, in words."""
    out = [SAID[k][0] for k, v in _evidence(found).items() if v == 0.0]
    share = found.get("path_unconfirmed_share", 0.0)
    if share > 0:
        out.append(f"the search could not confirm {share:.0%} of the reasoning steps")
    return out


def raised_by(found: dict[str, float]) -> list[str]:
    """The evidence an uncalibrated score counts that holds, in words: with ``lowered_by``,
    what its value is made of (the share of these that hold)."""
    return [SAID[k][1] for k, v in _evidence(found).items() if v == 1.0]


def uncalibrated_score(found: dict[str, float]) -> float:
    held = list(_evidence(found).values())
    return sum(held) / len(held) if held else 0.0


def assess(
    trace: Trace,
    model: str | None,
    calibrator: Calibrator | None = None,
    abstain_below: float | None = None,
) -> Confidence:
    """The trace's confidence: calibrated where a calibrator was fit for exactly its
    configuration (``calibrator``, else the user's or the shipped one), with the
    calibrator's own largest terms as its reasons; an uncalibrated score otherwise, which
    says why. Below ``abstain_below`` the answer is marked abstained (kept, as a guess)."""
    key = model_key(model)
    found = signals(trace)
    identity = configuration(trace, key)
    calibrator = calibrator or find_calibrator(trace.method, checks_of(trace), key, identity)
    maps, why_not = calibrator.applies_to(identity) if calibrator is not None else (False, "")
    unlike = unlike_its_items(calibrator, found) if calibrator is not None and maps else ""
    if unlike:
        maps, why_not = False, unlike
    if calibrator is not None and maps:
        conf = Confidence(calibrator.probability(found), True, found, calibrator.provenance())
        conf.note = calibrator.explain(found)
        conf.lowered_by, conf.raised_by = calibrated_reasons(calibrator, found)
    else:
        note = why_not or UNCALIBRATED.format(method=trace.method, model=key)
        conf = Confidence(uncalibrated_score(found), False, found, None, note=note)
        conf.lowered_by, conf.raised_by = lowered_by(found), raised_by(found)
        family = transfer_family(trace.method, key, identity) if over_documents(trace) else None
        # still no probability: the value ranks, the note says so
        if family is not None and not unlike_its_items(family, found):
            conf.value = family.probability(found)
            conf.calibrator = {"name": family.name, "fit_on": family.fit_on}
            conf.note = transfer_note(family, identity)
    conf.cost = {"llm_calls": 0.0, "seconds": 0.0}
    if abstain_below is not None:
        conf.threshold = abstain_below
        conf.abstained = conf.value < abstain_below
    return conf


def unlike_its_items(calibrator: Calibrator, found: dict[str, float]) -> str:
    """Why an answer is not like any the calibrator was fit on, though its configuration is
    ("" when it is): a bare Yes or No where its file says none of its items was one (the
    documentation family: no yes/no question among them), so its map says nothing of it."""
    if found.get("answer_is_yes_no") == 1.0 and (calibrator.fit_on or {}).get("yes_no_items") == 0:
        return (
            f"uncalibrated score: the calibrator {calibrator.name} was fit on answers none of "
            "which was a bare Yes or No, and this answer is one"
        )
    return ""


def over_documents(trace: Trace) -> bool:
    """Whether the answer was made over documents (a passage it read comes from a file): the
    answers a documentation family was fit on were."""
    return any(p.source and p.source.get("path") for p in trace.references)


def transfer_note(family: Calibrator, identity: dict[str, Any]) -> str:
    corpora = corpora_said((family.fit_configuration or {}).get("corpus"))
    return (
        f"transfer: the mapping of {family.name}, fit on documentation answers over "
        f"{corpora}, applied to an answer over {identity.get('corpus')}: a score that ranks "
        "answers, not a probability here"
    )


def abstention_text(trace: Trace) -> str:
    """What a person is told when the answer is withheld: why, what was and was not found,
    and the guess (kept in the trace as ``answer``)."""
    conf = trace.confidence
    if conf is None or not conf.abstained:
        return ""
    kind = "probability" if conf.calibrated else "uncalibrated score"
    said = "; ".join(conf.lowered_by) or "the signals are weak"
    guess = trace.answer or "(none)"
    if conf.threshold is None:  # --max-risk with no threshold certified for this answer
        return (
            f"Not answered: confidence {conf.value:.2f} ({kind}), and {conf.terms}. "
            f"Best unverified guess: {guess}"
        )
    return (
        f"Not answered: confidence {conf.value:.2f} ({kind}) is below {conf.threshold:.2f} "
        f"— {said}. Best unverified guess: {guess}"
    )


def answer_logprob(llm: Any, question: str, answer: str) -> tuple[float | None, Usage]:
    """The mean token log-probability of ``answer`` as the model's reply to ``question``
    alone (one scoring call), None without an answer (no call) or where the reply scores no
    token. A backend that cannot score a given text raises ``LLMError``."""
    if not normalize_answer(answer):
        return None, Usage()
    if getattr(llm, "form", "completion") == "chat":
        messages = [{"role": "user", "content": f"Answer with a short phrase.\n{question}"}]
        scored = llm.score_chat(messages, answer)
    else:
        scored = llm.score(f"Question: {question}\nAnswer:", " " + answer)
    logprobs = [float(x) for x in scored.token_logprobs if x is not None]
    return (sum(logprobs) / len(logprobs) if logprobs else None), scored.usage


def naive_logprob(llm: Any, question: str, answer: str) -> tuple[float | None, dict[str, float]]:
    """The naive confidence a report compares against (``answer_logprob``), with its cost."""
    value, usage = answer_logprob(llm, question, answer)
    calls = float(usage.llm_calls or usage.cached_calls)
    return value, {"llm_calls": calls, "seconds": float(usage.llm_seconds)}
