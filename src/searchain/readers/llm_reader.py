"""A reader made of the LLM itself: it copies the answer span out of the passage, and the
log-probabilities of that span give the confidence SearChain compares with θ.

confidence = mean log-probability of the generated answer tokens (≤ 0; 0 is certain).
An answer that is empty or does not occur in the passage is not grounded in it and gets
``UNGROUNDED`` (far below any sensible θ), so it can complete an unsolved node but never
overrule the LLM's own answer. ``default_theta`` was calibrated on MuSiQue sub-questions
(see ``scripts/calibrate_llm_reader.py`` and the README).
"""

from __future__ import annotations

from searchain import prompts
from searchain.llm import LLM
from searchain.readers.base import ReaderOutput
from searchain.text import normalize_answer
from searchain.types import Passage

UNGROUNDED = -99.0


class LLMReader:
    name = "llm"
    default_theta = -1.3  # F1-optimal on 237 MuSiQue sub-questions (README)

    def __init__(self, llm: LLM, *, template: str = "reader_extract", max_tokens: int = 24):
        self.llm, self.template, self.max_tokens = llm, template, max_tokens

    def read(self, question: str, passage: Passage) -> ReaderOutput:
        text = f"{passage.title}: {passage.text}" if passage.title else passage.text
        prompt = prompts.fill(self.template, passage=text, question=question)
        result = self.llm.complete(prompt, max_tokens=self.max_tokens, stop=("\n",), logprobs=True)
        c = result.completions[0]
        answer = c.text.strip().strip('"').rstrip(".").strip()
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
        )
