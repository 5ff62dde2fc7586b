"""Confidence signals that cost model calls, asked for by name (``--confidence-check``).

The signals of ``assessment.py`` are read from the trace for free. These run after the
method has answered, and their cost is said in ``confidence.cost``:

* ``nli`` — whether the passages the answer cites support it: the NLI judge (the LLM itself,
  as Think&Cite's R_a; ``readers/nli.py``) is asked whether they state that the answer
  answers the question (two scoring calls; the signal ``answer_supported``, P(supported)
  where the backend scores continuations, else 1/0 from the generated verdict). An answer
  that cites nothing is judged against the passages the method read (at most five).
* ``consistency`` — whether the model says the same again: it answers the question from the
  same passages :data:`SAMPLES` times more, sampled (temperature :data:`TEMPERATURE`, fixed
  seeds, so the samples are reproducible and cached), with retrieve-then-read's prompt; the
  signal ``answer_agreement`` is the share of samples that state the answer (one LLM call of
  ``n`` samples; self-consistency as a confidence, as in UniCR's consistency signal).
* ``likelihood`` — how likely the model itself finds the answer: the mean token
  log-probability of the answer as its reply to the question alone (one scoring call: no
  generation; the signal ``answer_logprob``, :data:`NO_ANSWER_LOGPROB` with no answer). It is
  the naive confidence a report compares against, here one signal among the others (UniCR's
  fused likelihood). A backend that cannot score a given text gets no signal, and the trace's
  errors say why.

A check's values are kept in ``trace.meta["confidence_checks"]`` (``{check: {signal:
value}}``), where ``signals`` finds them again; answers with a check are mapped by the
calibrator fit on runs made with it (``searchain+nli``), else by the method's own, which
then says the check's signal was shown, not used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from searchain import prompts
from searchain.answers import short_answer
from searchain.citations import numbered_documents
from searchain.llm import LLM
from searchain.llm.base import LLMError
from searchain.llm.prompting import is_chat
from searchain.readers.nli import answer_claim, make_judge, support
from searchain.scoring.attribution import format_document
from searchain.scoring.confidence.assessment import CHECKS_KEY, answer_logprob
from searchain.scoring.confidence.chain_signals import LOGPROB_FLOOR
from searchain.text import normalize_answer
from searchain.trace_extras import CheckExtras
from searchain.types import Passage, Trace, Usage

MAX_PREMISE_PASSAGES = 5
SAMPLES = 5
TEMPERATURE = 0.7
SAMPLE_TOKENS = 96
# The one-sentence retrieve-read prompt the samples have always been drawn with (the signal
# its calibrators were fit on; retrieve-read's own default is now retrieve_read_answer).
SAMPLE_TEMPLATE = "retrieve_read"
NO_ANSWER_LOGPROB = LOGPROB_FLOOR


def supporting_passages(trace: Trace) -> list[Passage]:
    """The passages the answer cites, else the first ones the method read."""
    cited = {c.passage_id for c in trace.citations if c.passage_id}
    chosen = [p for p in trace.references if p.id in cited]
    return chosen or trace.references[:MAX_PREMISE_PASSAGES]


def nli_check(trace: Trace, judge: Any) -> dict[str, float]:
    """``answer_supported``: P(the supporting passages state the answer); 0.0 with no answer
    or no passage (nothing supports it), without a call."""
    passages = supporting_passages(trace)
    if not normalize_answer(trace.answer) or not passages:
        return {"answer_supported": 0.0}
    premise = "\n\n".join(format_document(p) for p in passages)
    return {"answer_supported": support(judge, premise, answer_claim(trace.question, trace.answer))}


def _nli(trace: Trace, llm: LLM) -> tuple[dict[str, float], Usage]:
    judge = make_judge("llm", llm)
    found = nli_check(trace, judge)
    return found, judge.usage


def states(sample: str, answer: str) -> bool:
    """Whether a sampled short answer states ``answer`` (normalised; either one holding the
    other whole, as "Paris" and "Paris, France" do)."""
    a, s = normalize_answer(answer), normalize_answer(sample)
    return bool(a and s) and (a == s or f" {a} " in f" {s} " or f" {s} " in f" {a} ")


def resampled_answers(trace: Trace, llm: LLM, n: int = SAMPLES) -> tuple[list[str], Usage]:
    """``n`` answers to the trace's question from its supporting passages, sampled."""
    documents = numbered_documents(supporting_passages(trace))
    params = {"max_tokens": SAMPLE_TOKENS, "temperature": TEMPERATURE, "seed": 1, "n": n}
    values = {"documents": documents, "question": trace.question}
    if is_chat(llm):
        result = llm.chat(prompts.messages(SAMPLE_TEMPLATE, **values), stop=(), **params)
    else:
        result = llm.complete(prompts.fill(SAMPLE_TEMPLATE, **values), stop=("\n",), **params)
    return [short_answer(c.text) for c in result.completions], result.usage


def consistency_check(trace: Trace, llm: LLM) -> tuple[dict[str, float], Usage]:
    """``answer_agreement``: the share of resampled answers that state the answer; 0.0 with
    no answer or no passage, without a call."""
    if not normalize_answer(trace.answer) or not supporting_passages(trace):
        return {"answer_agreement": 0.0}, Usage()
    samples, usage = resampled_answers(trace, llm)
    agree = sum(states(s, trace.answer) for s in samples) / len(samples)
    return {"answer_agreement": agree}, usage


def likelihood_check(trace: Trace, llm: LLM) -> tuple[dict[str, float], Usage]:
    """``answer_logprob``: the answer's mean token log-probability as the model's reply to
    the question alone; nothing, and a trace error, where the backend cannot score."""
    try:
        value, usage = answer_logprob(llm, trace.question, trace.answer)
    except LLMError as e:
        trace.errors.append(f"likelihood check: no answer_logprob: {e}")
        return {}, Usage()
    return {
        "answer_logprob": NO_ANSWER_LOGPROB if value is None else max(value, NO_ANSWER_LOGPROB)
    }, usage


CHECKS: dict[str, Callable[[Trace, LLM], tuple[dict[str, float], Usage]]] = {
    "nli": _nli,
    "consistency": consistency_check,
    "likelihood": likelihood_check,
}


def check_names(names: Sequence[str] | str | None) -> tuple[str, ...]:
    """The checks asked for, by name, in a fixed order (ValueError for an unknown one)."""
    if not names:
        return ()
    asked = [names] if isinstance(names, str) else list(names)
    unknown = sorted(set(asked) - set(CHECKS))
    if unknown:
        raise ValueError(
            f"no confidence check {', '.join(map(repr, unknown))}; known: {', '.join(CHECKS)}"
        )
    return tuple(sorted(set(asked)))


def run_checks(trace: Trace, names: Sequence[str], llm: Any) -> dict[str, float]:
    """Run the named checks on an answered trace; their signals go into the trace's meta.
    Returns their cost (LLM calls, seconds)."""
    found = dict(CheckExtras.of(trace).checks)  # the checks run before, kept
    calls, t0 = 0, time.perf_counter()
    for name in names:
        found[name], usage = CHECKS[name](trace, llm)
        calls += usage.llm_calls + usage.cached_calls
        trace.usage.add(usage)
    trace.meta[CHECKS_KEY] = found
    return {"llm_calls": float(calls), "seconds": round(time.perf_counter() - t0, 3)}
