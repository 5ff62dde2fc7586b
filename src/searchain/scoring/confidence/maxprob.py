"""MaxProb: the mean token probability of the final answer in the call that wrote it.

The answer's tokens are read from the call that wrote the final content — SearChain's
tracing call (``final_step=tracing``), its evidence call (``final_step=evidence``, which
reads the passages) or retrieve-read's one call — and MaxProb is exp(mean log-probability)
of those tokens: the geometric mean of their probabilities, in (0, 1].

**How it is computed.** In the writing call itself, asked for with the method setting
``maxprob`` (off by default): the call is sent with ``logprobs=True``. No second call is
made. The embedded backend's own decode loop then keeps the chosen token's log-softmax
entry (llama.cpp's logits of the last position, which it computes to pick the token anyway;
no ``logits_all``: ~3 ms a token on Gemma's vocabulary, ``llm/sampling.token_logprob``); an
OpenAI-compatible endpoint returns them with the reply (``logprobs``, and ``top_logprobs=1``
for chat: ``llama_cpp.server`` sends none without it). The cost is that: no call, and the
writing call's cache key changes (its parameters say ``logprobs``).

**Which tokens.** The answer (the trace's ``answer``, the short span read out of the
output) is looked up, verbatim, in the concatenated text of the call's output tokens: after
the last answer marker ("So the answer is", "Answer:") when it is there, else its first
occurrence. Every output token whose characters overlap the answer's counts, whole (a token
that also holds the space before the answer, or a full stop after it, counts).

**Never silently 0.** Without a value (the backend returned no log-probabilities, the
answer is not written verbatim in the call's output, the answer was not written by a final
call, there is no answer) ``value`` is None and ``reason`` says why; the report shows the
reasons. Recorded in ``trace.meta["maxprob"]``: ``value``, ``call``, ``computed``, the
tokens and their log-probabilities, or the ``reason``.
"""

from __future__ import annotations

import math
from typing import Any

from searchain.answers import after_last_marker
from searchain.text import normalize_answer
from searchain.trace_extras import MAXPROB_KEY
from searchain.types import CompletionResult, Trace

KEY = MAXPROB_KEY  # trace.meta
SIGNAL = "answer_maxprob"  # the signal a calibrator reads (assessment.signals)
COMPUTED = "in-call: log-probabilities of the writing call's own output tokens (logprobs=True)"
NO_ANSWER = "no answer"


def answer_chars(text: str, answer: str) -> tuple[int, int] | None:
    """The characters of ``answer`` in ``text`` (see the module doc), None where it is not
    written there verbatim (case aside)."""
    if not answer:
        return None
    start = after_last_marker(text)
    for haystack, needle in ((text, answer), (text.lower(), answer.lower())):
        at = haystack.find(needle, start)
        if at == -1:
            at = haystack.find(needle)
        if at != -1:
            return at, at + len(answer)
    return None


def answer_tokens(tokens: list[str], answer: str) -> list[int] | None:
    """The indices of the output tokens whose characters overlap the answer's; None where
    the answer is not in the tokens' text."""
    span = answer_chars("".join(tokens), answer)
    if span is None:
        return None
    out, offset = [], 0
    for i, token in enumerate(tokens):
        end = offset + len(token)
        if offset < span[1] and end > span[0]:
            out.append(i)
        offset = end
    return out or None


def measure(result: CompletionResult, answer: str, call: str) -> dict[str, Any]:
    """The MaxProb record of ``answer`` as written by ``result`` (the ``call`` that wrote
    it): ``value`` and the tokens it read, or ``value`` None and the ``reason``."""
    record: dict[str, Any] = {"value": None, "call": call, "computed": COMPUTED}
    completion = result.completions[0] if result.completions else None
    if not normalize_answer(answer):
        return {**record, "reason": NO_ANSWER}
    if completion is None or not completion.tokens or completion.token_logprobs is None:
        return {
            **record,
            "reason": f"the backend returned no token log-probabilities for the {call} call",
        }
    chosen = answer_tokens(completion.tokens, answer)
    if chosen is None:
        return {
            **record,
            "reason": f"the answer is not written verbatim in the {call} call's output",
        }
    logprobs = [float(completion.token_logprobs[i]) for i in chosen]
    if not all(math.isfinite(x) for x in logprobs):
        return {**record, "reason": f"the {call} call returned a non-finite log-probability"}
    record["value"] = math.exp(sum(logprobs) / len(logprobs))
    record["tokens"] = [completion.tokens[i] for i in chosen]
    record["token_logprobs"] = logprobs
    return record


def record(trace: Trace, result: CompletionResult, call: str) -> None:
    """Put the MaxProb of ``trace.answer`` as written by ``result`` in the trace's meta."""
    trace.meta[KEY] = measure(result, trace.answer, call)


def record_absent(trace: Trace, reason: str) -> None:
    """MaxProb was asked for, but no final call wrote the answer: say why."""
    trace.meta[KEY] = {"value": None, "call": None, "computed": COMPUTED, "reason": reason}


def value_of(meta: dict[str, Any]) -> float | None:
    """The MaxProb a trace's meta records, None without one (a probability in (0, 1])."""
    found = meta.get(KEY)
    value = found.get("value") if isinstance(found, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1:
        return float(value)
    return None


def reason_of(meta: dict[str, Any]) -> str | None:
    """Why a trace that asked for MaxProb has none (None: it has one, or never asked)."""
    found = meta.get(KEY)
    if not isinstance(found, dict) or value_of(meta) is not None:
        return None
    return str(found.get("reason") or "not recorded")


def signal(meta: dict[str, Any]) -> dict[str, float]:
    """``answer_maxprob`` for a calibrator: the value; 0.0 when there is no answer (as the
    likelihood check puts a missing answer at its floor); nothing when it was not asked
    for or could not be measured (a calibrator then takes it at its mean and says so)."""
    value = value_of(meta)
    if value is not None:
        return {SIGNAL: value}
    return {SIGNAL: 0.0} if reason_of(meta) == NO_ANSWER else {}
