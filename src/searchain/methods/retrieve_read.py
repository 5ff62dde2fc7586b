"""Direct retrieval ("retrieve-then-read"): the top-k passages for the question go into one
prompt and the LLM answers with ``[n]`` citations. The papers' simplest IR baseline, and the
answerer of ``searchain ask --method retrieve-read``. Passages are retrieved for the question
itself; the prompt asks it with the task's label instruction (``task``), as SearChain does."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from searchain import citations, prompts
from searchain.answers import short_answer
from searchain.llm import LLM
from searchain.methods.base import Method, call_template, is_chat
from searchain.methods.baseline_util import answer_ending, task_question, task_setting
from searchain.methods.component import TakesTaskKind
from searchain.methods.settings import check_settings, config_from_options, setting
from searchain.methods.short_answer_reading import asks_short_answer, read_short_answer
from searchain.retrieval.base import Retriever
from searchain.scoring.confidence import maxprob
from searchain.types import Node, Trace

_FINAL = re.compile(r"so the (?:final )?answer is[:\s]*(.+?)\s*\.?\s*$", re.I | re.S)


def extract_answer(text: str) -> str:
    """The short answer: what follows "So the answer is", else the text without marks."""
    m = _FINAL.search(text)
    answer = m.group(1) if m else text
    return citations.strip_marks(answer).strip().rstrip(".")


@dataclass
class RetrieveReadConfig:
    k: int = setting(5, "Passages read at once.", ge=1, remote_le=20)
    max_tokens: int = setting(128, "Tokens of the answer.", ge=1, remote_le=1024)
    template: str = setting(
        "retrieve_read_answer",
        "The prompt template (a name under prompts/; retrieve_read: one sentence without the "
        "short-answer ending, the default until issue 62).",
        remote=False,
    )
    post_cite: bool = setting(True, "Cite uncited sentences post hoc (labelled so).")
    task: str = task_setting()
    maxprob: bool = setting(
        False,
        "Record MaxProb, the mean token probability of the answer in the answering call "
        "(asked of that call: no extra call), as a confidence signal.",
        before=False,
    )

    def __post_init__(self) -> None:
        check_settings(self)


class RetrieveRead:
    name = "retrieve-read"

    def __init__(
        self,
        llm: LLM,
        retriever: Retriever,
        config: RetrieveReadConfig | None = None,
        **options: Any,
    ) -> None:
        cfg = config or config_from_options(RetrieveReadConfig, options, self.name)
        # Small models rarely write [n] marks; post-hoc citation (ALCE, cfg.post_cite) fills
        # the gaps and every such citation is labelled origin="post-hoc" in the trace.
        self.llm, self.retriever, self.config = llm, retriever, cfg
        # Its prompt asks for the short-answer ending (not a label), so a reply naming none is
        # read by the reader: decided once per method, not per question.
        self._reads_short_answer = (
            asks_short_answer(cfg.task) and "ending" in prompts.load(cfg.template).fields
        )

    def run(self, question: str) -> Trace:
        t0 = time.perf_counter()
        trace = Trace(question=question, method=self.name)
        passages = self.retriever.search(question, k=self.config.k)
        result = call_template(
            self.llm,
            self.config.template,
            max_tokens=self.config.max_tokens,
            stop=("\n",),
            chat_stop=(),
            documents=citations.numbered_documents(passages),
            question=task_question(question, self.config.task),
            ending=answer_ending(self.config.task),
            logprobs=self.config.maxprob,
        )
        # k: what recall@k may be asked of it; the template: which answer form the
        # configuration identity (and so a calibrator) is of
        trace.meta.update(task=self.config.task, k=self.config.k, template=self.config.template)
        trace.usage.add(result.usage)
        text = result.text.strip()
        trace.answer = short_answer(text) if is_chat(self.llm) else extract_answer(text)
        if self._reads_short_answer:
            trace.answer = read_short_answer(self.llm, trace, text, trace.answer)
        model_marks, trace.errors = citations.resolve(text, passages)
        added: list = []
        if self.config.post_cite:
            text, added = citations.post_cite(text, passages)
        trace.final_content = text
        trace.references = passages
        trace.citations = [*model_marks, *added]
        trace.nodes = [
            Node(id="1", query=question, answer=trace.answer, source="retrieval", passages=passages)
        ]
        trace.rounds = 1
        if self.config.maxprob:
            maxprob.record(trace, result, self.name)
        trace.wall_seconds = time.perf_counter() - t0
        return trace


class RetrieveReadComponent(TakesTaskKind):
    name = "retrieve-read"
    summary = "top-k passages, one answer"
    config = RetrieveReadConfig
    group = "Retrieve-read"
    aliases = ("direct-retrieval",)  # the papers' name for it
    rank = 20

    @classmethod
    def build(cls, llm: LLM, retriever: Retriever | None, options: dict[str, Any]) -> Method:
        options = {key: v for key, v in options.items() if not (key == "k" and v is None)}
        return RetrieveRead(llm, retriever, **options)  # type: ignore[arg-type]
