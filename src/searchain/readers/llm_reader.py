"""A reader made of the LLM itself: it copies the answer span out of the passage, and the
log-probabilities of that span give the confidence SearChain compares with θ.

confidence = mean log-probability of the generated answer tokens (≤ 0; 0 is certain).
An answer that is empty or does not occur in the passage is not grounded in it and gets
``UNGROUNDED`` (far below any sensible θ), so it can complete an unsolved node but never
overrule the LLM's own answer. ``default_theta`` was calibrated on MuSiQue sub-questions
(see ``scripts/calibrate_llm_reader.py`` and the README).

Chat models get the chat form of the prompt (``reader_extract.chat.txt``); their log-probs
come from the local decode loop or from the endpoint (asked with ``top_logprobs``). An
endpoint that returns no log-probabilities at all raises ``NoLogprobsError`` naming it: a
confidence that is not measured is never replaced by a number that switches verification
off. Every verdict records where its confidence came from (``confidence_source``).
"""

from __future__ import annotations

from searchain.llm import LLM, LLMError, prompt_form
from searchain.llm.base import unwrapped
from searchain.llm.prompting import call_template
from searchain.readers.base import UNGROUNDED, ReaderOutput
from searchain.text import normalize_answer
from searchain.types import Passage


class NoLogprobsError(LLMError):
    """The LLM backend returned no token log-probabilities, so no confidence exists."""


def _endpoint(llm: LLM) -> str:
    for client in unwrapped(llm):
        url = getattr(client, "base_url", None)
        if url:
            return f"{client.model} at {url}"
    return llm.model


class LLMReader:
    name = "llm"
    default_theta = -1.3  # F1-optimal on 237 MuSiQue sub-questions (README)

    def __init__(self, llm: LLM, *, template: str = "reader_extract", max_tokens: int = 24):
        self.llm, self.template, self.max_tokens = llm, template, max_tokens

    def read(self, question: str, passage: Passage) -> ReaderOutput:
        text = f"{passage.title}: {passage.text}" if passage.title else passage.text
        result = call_template(
            self.llm,
            self.template,
            max_tokens=self.max_tokens,
            stop=("\n",),
            passage=text,
            question=question,
            logprobs=True,
        )
        c = result.completions[0]
        answer = c.text.strip().strip('"').rstrip(".").strip()
        if c.token_logprobs is None and c.text.strip():
            raise NoLogprobsError(
                f"the LLM reader needs token log-probabilities and {_endpoint(self.llm)} "
                "returned none; SearChain's verification cannot run without a confidence "
                "(use a backend that returns logprobs, or --reader PATH for a local HF reader)"
            )
        lps = c.token_logprobs or []
        span_score = float(sum(lps))
        grounded = bool(answer) and normalize_answer(answer) in normalize_answer(text)
        confidence = span_score / len(lps) if (grounded and lps) else UNGROUNDED
        return ReaderOutput(
            answer=answer,
            span_score=span_score,
            confidence=confidence,
            passage_id=passage.id,
            usage=result.usage,
            confidence_source=(
                f"logprobs ({prompt_form(self.llm)} form)" if grounded else "ungrounded span"
            ),
        )
