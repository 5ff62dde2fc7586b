"""Think&Cite's Progress Reward Model: R(y_1..t+1) = R_g + R_a.

* **R_g**, generation progress, is the DPO implicit reward on the sentence-level MDP:
  ``Σ_k w_k · [log π(y_k+1 | x, y_1..k) − log π_ref(y_k+1 | x, y_1..k)]`` with ``w_k = 1/(t+1)``
  — the mean over the answer's sentences of the log-likelihood ratio between the reward model
  π and its reference π_ref (a pair of their own, not the policy: ``reward_models.py``), each
  read with :meth:`LLM.score` (two local GGUFs, two OpenAI-compatible endpoints, or one of
  each). A chat model reads the same context as messages
  (``reward_context.chat.txt``: question and answer so far as the user turn) and the sentence
  as its reply, with :meth:`LLM.score_chat`; a backend that cannot score raises
  :class:`LLMError` (the expansion fails and the trace says why), never a stand-in 0.
  Sentences are scored without their ``[n]`` marks: the numbering
  depends on the path, the ratio should not. Each sentence's ratio is memoised on its context,
  so extending a path costs two scoring calls, not 2·t.
* **R_a**, attribution progress, is the F1 of ALCE citation recall and precision of the answer
  so far against its numbered documents, judged by an NLI judge (memoised per pair).

Either part can be off (the paper's ablations). R_g without both models of the pair is *not*
computed — no stand-in score — and the run says so (log warning and ``status``).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from searchain import citations, prompts
from searchain.llm import LLM, ContinuationScore, prompt_form
from searchain.methods.settings import check_settings, setting
from searchain.methods.thinkcite.mcts import Reward
from searchain.scoring import NLI, citation_scores, parse_cited_sentences
from searchain.types import Passage, Usage

log = logging.getLogger(__name__)

NO_REFERENCE = (
    "R_g (DPO implicit reward) needs a reward model and its reference (reward_model=, "
    "reward_reference=); the pair is not configured, so the progress reward is R_a only"
)


@dataclass
class RewardConfig:
    use_rg: bool = setting(True, "Generation reward R_g (needs the reward model pair).")
    use_ra: bool = setting(True, "Citation-attribution reward R_a (needs an NLI judge).")
    rg_weight: float = setting(1.0, "Weight of R_g in R.", ge=0, remote_le=10)
    ra_weight: float = setting(1.0, "Weight of R_a in R.", ge=0, remote_le=10)
    max_citations: int = setting(
        3, "Citations per sentence (as ALCE scores them).", ge=1, remote_le=10
    )

    def __post_init__(self) -> None:
        check_settings(self)


class ProgressReward:
    def __init__(
        self,
        config: RewardConfig,
        *,
        judge: NLI | None = None,
        model: LLM | None = None,
        reference: LLM | None = None,
        list_answer: bool = False,
    ) -> None:
        # model: π, the reward model; reference: π_ref (neither need be the policy)
        self.config, self.judge, self.model, self.reference = config, judge, model, reference
        # QAMPARI: R_a judges the answer's comma-separated items, as its metric does
        self.list_answer = list_answer
        self.rg_active = config.use_rg and model is not None and reference is not None
        self.ra_active = config.use_ra and judge is not None
        self.status: list[str] = []
        if config.use_rg and not self.rg_active:
            log.warning(NO_REFERENCE)
            self.status.append(NO_REFERENCE)
        if config.use_ra and judge is None:
            self.status.append("R_a needs an NLI judge; none is configured, so R_a is off")
        if not (self.rg_active or self.ra_active):
            raise ValueError(
                "the progress reward has no active part: configure the reward model pair for "
                "R_g or an NLI judge for R_a"
            )
        # The prompt form each R_g model reads its context in.
        self.forms = (
            {"model": prompt_form(model), "reference": prompt_form(reference)}
            if self.rg_active
            else {}
        )
        if self.rg_active and len(set(self.forms.values())) > 1:
            self.status.append(
                f"R_g compares models in different prompt forms ({self.forms}): each reads the "
                "same context in its own form, so the ratio also reflects the rendering"
            )
        self.usage = Usage()  # cost of the R_g scoring calls
        self._ratios: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()
        self.memo_hits = 0

    def __call__(self, question: str, sentences: list[str], documents: list[Passage]) -> Reward:
        parts: dict[str, float | None] = {"r_g": None, "r_a": None}
        total = 0.0
        if self.rg_active and sentences:
            r_g = self.generation_progress(question, sentences)
            parts["r_g"] = r_g
            total += self.config.rg_weight * r_g
        if self.ra_active and sentences:
            s = citation_scores(
                parse_cited_sentences(
                    " ".join(sentences), question=question, list_answer=self.list_answer
                ),
                documents,
                self.judge,  # type: ignore[arg-type]
                max_citations=self.config.max_citations,
            )
            parts.update(r_a=s.f1, citation_recall=s.recall, citation_precision=s.precision)
            total += self.config.ra_weight * s.f1
        return Reward(total, parts)

    def generation_progress(self, question: str, sentences: list[str]) -> float:
        """R_g of the answer ``sentences`` (``w_k = 1/(t+1)``: the mean sentence ratio)."""
        plain = [citations.strip_marks(s) for s in sentences]
        ratios = [self.sentence_ratio(question, plain[:k], plain[k]) for k in range(len(plain))]
        return sum(ratios) / len(ratios)

    def sentence_ratio(self, question: str, before: list[str], sentence: str) -> float:
        """``log π(sentence | x, before) − log π_ref(sentence | x, before)``."""
        answer = "".join(" " + s for s in before)
        context = prompts.fill("thinkcite/reward_context", question=question, answer=answer)
        key = (context, sentence)
        with self._lock:
            if key in self._ratios:
                self.memo_hits += 1
                return self._ratios[key]
        pi = self._score(self.model, question, before, context, sentence)  # type: ignore[arg-type]
        ref = self._score(self.reference, question, before, context, sentence)  # type: ignore[arg-type]
        self.usage.add(pi.usage)
        self.usage.add(ref.usage)
        ratio = pi.total - ref.total
        with self._lock:
            self._ratios[key] = ratio
        return ratio

    @staticmethod
    def _score(
        llm: LLM, question: str, before: list[str], context: str, sentence: str
    ) -> ContinuationScore:
        """log p(sentence | context) in ``llm``'s prompt form: the completion context and a
        space-led continuation, or the chat messages and the sentence as the reply."""
        if prompt_form(llm) == "chat":
            messages = prompts.messages(
                "thinkcite/reward_context",
                question=question,
                answer=" ".join(before) if before else "(none yet)",
            )
            return llm.score_chat(messages, sentence)
        return llm.score(context, " " + sentence)
