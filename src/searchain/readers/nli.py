"""Entailment (NLI) judges for ALCE citation recall/precision, ELI5 claim recall and Think&Cite's
attribution reward R_a.

Every judge answers ``entails(premise, hypothesis) -> bool`` and is itself callable that way,
so it plugs straight into :func:`searchain.scoring.citation_scores` (which takes any
``nli(premise, hypothesis) -> bool``). ``probability`` gives P(entailment) where the judge has
one.

* :class:`HFNLIJudge` — a local Hugging Face checkpoint: a TRUE-style T5 (seq2seq, input
  ``"premise: … hypothesis: …"``, output ``"1"`` = entailed; what ALCE and Think&Cite use) or
  an MNLI-style sequence classifier (DeBERTa, RoBERTa, BERT) whose ``config.id2label`` names an
  entailment class.
* :class:`LLMJudge` — the LLM itself answers Yes/No to a completion prompt
  (``prompts/nli_judge.txt``), or for a chat model to the same demos as messages
  (``nli_judge.chat.txt``); with a backend that scores continuations the verdict is
  P(" Yes") / (P(" Yes") + P(" No")) (chat: the replies "Yes" / "No", ``score_chat``),
  otherwise the generated word (chat: :func:`yes_no` reads the reply). ``modes`` counts
  which way each verdict was reached.

Nothing is cut off a premise: ALCE's evaluation kept only the first line of an answer, which
drops every later paragraph of a long-form answer. A premise longer than a classifier's input
window is judged in overlapping windows and counts as entailing when any window entails (the
hypothesis is always kept whole; one too long for the model is an error, not a silent cut).
"""

from __future__ import annotations

import math
import re
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from searchain import prompts
from searchain.llm import LLM, LLMError
from searchain.llm.prompting import is_chat
from searchain.types import Usage


@runtime_checkable
class NLIJudge(Protocol):
    name: str

    def entails(self, premise: str, hypothesis: str) -> bool: ...

    def __call__(self, premise: str, hypothesis: str) -> bool: ...


class _Memo:
    """Judgements are pure functions of (premise, hypothesis): remember them, thread-safely.
    Think&Cite re-scores every earlier sentence of a partial answer at each new node; with
    the memo only the new sentence costs a model call."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, key: tuple[str, str]) -> Any:
        with self._lock:
            v = self._memo.get(key)
            if v is not None:
                self.hits += 1
            return v

    def put(self, key: tuple[str, str], value: Any) -> None:
        with self._lock:
            self._memo[key] = value


# -- the LLM as judge ------------------------------------------------------------------------


class LLMJudge:
    """The LLM answers "Supported: Yes/No". ``threshold`` applies to P(Yes | Yes or No)."""

    name = "llm"

    def __init__(self, llm: LLM, *, template: str = "nli_judge", threshold: float = 0.5) -> None:
        self.llm, self.template, self.threshold = llm, template, threshold
        self.usage = Usage()  # what this judge's calls cost (cached calls included)
        # Chat form (TEMPLATE.chat.txt as messages) for chat models; a user template that
        # has no chat form is sent in its completion form (``form`` says which).
        self.chat = is_chat(llm) and prompts.has_chat(template)
        self.form = "chat" if self.chat else "completion"
        # How verdicts were reached: "scored" (P(Yes) from log-probs), "generated" (the
        # reply read), "unparsed" (a generated reply that said neither: counted as No).
        self.modes = {"scored": 0, "generated": 0, "unparsed": 0}
        self.unparsed: list[str] = []  # those replies, raw
        self._memo = _Memo()
        self._can_score = True

    def fork(self) -> LLMJudge:
        """The same judge with its own memo and usage (one per question of a run)."""
        return LLMJudge(self.llm, template=self.template, threshold=self.threshold)

    def prompt(self, premise: str, hypothesis: str) -> str:
        # Whole premise and hypothesis, never truncated (see the module docstring).
        return prompts.fill(self.template, premise=premise.strip(), hypothesis=hypothesis.strip())

    def messages(self, premise: str, hypothesis: str) -> list[dict[str, str]]:
        """The chat form of :meth:`prompt`."""
        return prompts.messages(
            self.template, premise=premise.strip(), hypothesis=hypothesis.strip()
        )

    def probability(self, premise: str, hypothesis: str) -> float | None:
        """P(entailment), or ``None`` when the backend cannot score continuations."""
        v = self._judge(premise, hypothesis)
        return v if isinstance(v, float) else None

    def entails(self, premise: str, hypothesis: str) -> bool:
        v = self._judge(premise, hypothesis)
        return v >= self.threshold if isinstance(v, float) else bool(v)

    __call__ = entails

    def _judge(self, premise: str, hypothesis: str) -> float | bool:
        key = (premise, hypothesis)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        value: float | bool
        if self._can_score:
            try:
                yes, no = self._scores(premise, hypothesis)
                self.usage.add(yes.usage)
                self.usage.add(no.usage)
                # Softmax over the two answers: robust to the mass the model puts elsewhere.
                d = no.total - yes.total
                value = 1.0 / (1.0 + math.exp(d)) if d < 700 else 0.0
                self.modes["scored"] += 1
            except LLMError:
                self._can_score = False  # e.g. a chat endpoint without echo log-probs
        if not self._can_score:
            value = self._generate(premise, hypothesis)
        self._memo.put(key, value)
        return value

    def _scores(self, premise: str, hypothesis: str) -> tuple[Any, Any]:
        if self.chat:
            messages = self.messages(premise, hypothesis)
            return self.llm.score_chat(messages, "Yes"), self.llm.score_chat(messages, "No")
        prompt = self.prompt(premise, hypothesis)
        return self.llm.score(prompt, " Yes"), self.llm.score(prompt, " No")

    def _generate(self, premise: str, hypothesis: str) -> bool:
        self.modes["generated"] += 1
        if not self.chat:
            prompt = self.prompt(premise, hypothesis)
            r = self.llm.complete(prompt, max_tokens=3, temperature=0.0, stop=("\n",))
            self.usage.add(r.usage)
            return r.text.strip().lower().startswith("yes")
        r = self.llm.chat(self.messages(premise, hypothesis), max_tokens=6, temperature=0.0)
        self.usage.add(r.usage)
        verdict = yes_no(r.text)
        if verdict is None:
            self.modes["unparsed"] += 1
            self.unparsed.append(r.text)
            return False
        return verdict


def answer_claim(question: str, answer: str) -> str:
    """The hypothesis that ``answer`` answers ``question`` (SearChain's yes/no node check and
    the ``nli`` confidence check weigh it against passages)."""
    return f'The answer to the question "{question.strip()}" is {answer.strip()}.'


def support(judge: Any, premise: str, claim: str) -> float:
    """P(premise supports claim) from a judge that scores, else 1.0 / 0.0 from its verdict."""
    p = judge.probability(premise, claim) if hasattr(judge, "probability") else None
    return float(p) if p is not None else float(judge.entails(premise, claim))


_YES_NO = re.compile(r"^(?:(?:answer|supported|verdict|entailed)\s*[:\-]\s*)?(yes|no)\b", re.I)


def yes_no(reply: str) -> bool | None:
    """A chat reply's verdict: Yes / No at its start, in any case, through markdown and
    quotes and an ``Answer:`` / ``Supported:`` label; ``None`` when it says neither."""
    text = re.sub(r"\*\*|__|`|^#+\s*", "", reply.strip()).strip().lstrip("\"'“‘>-* ").strip()
    m = _YES_NO.match(text)
    return None if m is None else m.group(1).lower() == "yes"


# -- local Hugging Face checkpoints ------------------------------------------------------------


class HFNLIJudge:
    """A local NLI checkpoint (see the module docstring). ``entail_label`` overrides the
    class looked up in ``config.id2label``; ``threshold`` (default: argmax for classifiers,
    0.5 for T5) applies to P(entailment)."""

    name = "hf"

    def __init__(
        self,
        path: str | Path,
        *,
        entail_label: str | None = None,
        threshold: float | None = None,
        max_length: int | None = None,
        device: str = "cpu",
    ) -> None:
        path = Path(path)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"no Hugging Face model at {path} (config.json missing)")
        import torch
        from transformers import AutoConfig, AutoTokenizer

        self.torch = torch
        self.path, self.threshold, self.device = path, threshold, device
        self.config = AutoConfig.from_pretrained(str(path), local_files_only=True)
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.seq2seq = bool(getattr(self.config, "is_encoder_decoder", False))
        if self.seq2seq:
            from transformers import AutoModelForSeq2SeqLM

            self.model = AutoModelForSeq2SeqLM.from_pretrained(str(path), local_files_only=True)
            self._yes_no = (self._single_token("1"), self._single_token("0"))
        else:
            from transformers import AutoModelForSequenceClassification

            self.model = AutoModelForSequenceClassification.from_pretrained(
                str(path), local_files_only=True
            )
            self.entail_index = entailment_index(self.config.id2label, entail_label)
        self.model.to(device).eval()
        limit = max_length or getattr(self.tokenizer, "model_max_length", None) or 512
        self.max_length = min(int(limit), 512 if limit > 100_000 else int(limit))
        self._memo = _Memo()

    def _single_token(self, text: str) -> int:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        ids = [i for i in ids if i != getattr(self.tokenizer, "pad_token_id", None)]
        if not ids:
            raise ValueError(f"the tokenizer of {self.path} cannot encode {text!r}")
        return int(ids[-1])  # sentencepiece may prepend a "▁" piece

    def probability(self, premise: str, hypothesis: str) -> float:
        """P(entailment): the highest over the premise's windows."""
        return self._verdict(premise, hypothesis)[0]

    def entails(self, premise: str, hypothesis: str) -> bool:
        return self._verdict(premise, hypothesis)[1]

    __call__ = entails

    # -- internals ------------------------------------------------------------------------
    def _verdict(self, premise: str, hypothesis: str) -> tuple[float, bool]:
        key = (premise, hypothesis)
        hit = self._memo.get(key)
        if hit is None:
            per_window = [self._window(w, hypothesis) for w in self.windows(premise, hypothesis)]
            hit = (max(p for p, _ in per_window), any(d for _, d in per_window))
            self._memo.put(key, hit)
        return hit  # type: ignore[return-value]

    def _encode(self, premise: str, hypothesis: str) -> dict[str, Any]:
        if self.seq2seq:
            text = f"premise: {premise} hypothesis: {hypothesis}"
            return self.tokenizer(text, return_tensors="pt")
        return self.tokenizer(premise, hypothesis, return_tensors="pt")

    def _window(self, premise: str, hypothesis: str) -> tuple[float, bool]:
        """P(entailment) of one window and the decision: the threshold when one is set (and
        always for T5, whose two answers make P a proper binary probability), else whether
        entailment is the classifier's argmax."""
        torch = self.torch
        enc = {k: v.to(self.device) for k, v in self._encode(premise, hypothesis).items()}
        with torch.no_grad():
            if self.seq2seq:
                start = self.model.config.decoder_start_token_id
                dec = torch.full((1, 1), int(start if start is not None else 0), device=self.device)
                logits = self.model(**enc, decoder_input_ids=dec).logits[0, -1]
                two = torch.stack([logits[self._yes_no[0]], logits[self._yes_no[1]]])
                p = float(torch.softmax(two.float(), dim=-1)[0])
                return p, p >= (0.5 if self.threshold is None else self.threshold)
            probs = torch.softmax(self.model(**enc).logits[0].float(), dim=-1)
        p = float(probs[self.entail_index])
        if self.threshold is not None:
            return p, p >= self.threshold
        return p, int(torch.argmax(probs)) == self.entail_index

    def windows(self, premise: str, hypothesis: str) -> list[str]:
        """The premise as one piece, or overlapping windows that each fit the model together
        with the whole hypothesis."""
        n_hyp = len(self.tokenizer(hypothesis, add_special_tokens=False)["input_ids"])
        n_all = len(self._encode(premise, hypothesis)["input_ids"][0])
        if n_all <= self.max_length:
            return [premise]
        overhead = n_all - n_hyp - self._n_tokens(premise)
        budget = self.max_length - n_hyp - overhead  # overhead: specials, T5's prefixes
        if budget < 8:
            raise ValueError(
                f"hypothesis of {n_hyp} tokens leaves no room for a premise in "
                f"{self.max_length} tokens ({self.path.name})"
            )
        enc = self.tokenizer(premise, add_special_tokens=False, return_offsets_mapping=True)
        offsets = enc["offset_mapping"]
        out, stride = [], max(1, budget // 2)
        for i in range(0, len(offsets), stride):
            j = min(i + budget, len(offsets)) - 1
            out.append(premise[offsets[i][0] : offsets[j][1]])
            if j == len(offsets) - 1:
                break
        return out

    def _n_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])


def entailment_index(id2label: dict[Any, str], override: str | None = None) -> int:
    """The class index of "entailment" in ``config.id2label`` (MNLI: ENTAILMENT / entailment;
    a binary TRUE-style classifier may call it ``"1"``)."""
    labels = {int(k): str(v) for k, v in id2label.items()}
    if override is not None:
        hits = [i for i, v in labels.items() if v.lower() == override.lower()]
        if not hits:
            raise ValueError(f"label {override!r} not in id2label {labels}")
        return hits[0]
    hits = [i for i, v in labels.items() if v.lower().startswith("entail")]
    if len(hits) == 1:
        return hits[0]
    raise ValueError(
        f"cannot tell the entailment class from id2label {labels}; pass entail_label= "
        "(e.g. --nli-label) naming it"
    )


def make_judge(spec: str, llm: LLM | None = None, **options: Any) -> NLIJudge:
    """``"llm"`` (needs ``llm``) or the path of a local Hugging Face NLI checkpoint."""
    if spec == "llm":
        if llm is None:
            raise ValueError("the LLM NLI judge needs an LLM")
        return LLMJudge(llm, **options)
    return HFNLIJudge(spec, **options)
