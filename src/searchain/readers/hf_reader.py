"""Extractive readers built on local Hugging Face checkpoints.

Two kinds of checkpoint are read, told apart by their ``config.json``:

* **DPR reader** (``model_type == "dpr"``, architecture ``DPRReader``): the reader SearChain
  uses. The input is built the way DPR was trained, ``[CLS] question [SEP] title [SEP]
  text`` (the question and title as a BERT pair, the passage text after it without a final
  ``[SEP]``, exactly what ``DPRReaderTokenizer(questions=, titles=, texts=)`` produces). The
  official SearChain code put the passage into the *title* slot; here the title goes in the
  title slot and the text in the text slot. ``confidence`` is the passage relevance logit
  ``H[CLS]·w_f``; ``default_theta = 1.5`` (the paper's θ).
* **SQuAD-style QA model** (any ``AutoModelForQuestionAnswering``): the input is the pair
  (question, context) with ``context = title + ". " + text``. Such models have no relevance
  head, so ``confidence = best span score − null span score``, where the null span is the
  ``[CLS]`` token (``start_logit[CLS] + end_logit[CLS]``), the SQuAD 2.0 no-answer
  convention: it is > 0 when the model prefers the span to "no answer";
  ``default_theta = 0.0``.

In both cases the answer is the best *valid* span (see :func:`best_span`): start ≤ end, at
most ``max_answer_tokens`` tokens, all inside the passage text (never in the question, the
title or a special token) — not the independent argmaxes of the start and end logits. The
chosen tokens are mapped back through the fast tokenizer's offset mapping, so the answer is
an exact substring of ``passage.text``; with ``extend_to_words`` (default) a span that
starts or ends inside a word (a ``##piece``) is widened to the whole word, as DPR does.
``span_score`` is ``start_logit + end_logit`` of the chosen tokens.

Passages longer than ``max_length`` tokens (question and title included) are truncated:
SearChain reads ~100-word Wikipedia passages, well inside the usual 384 tokens.

Models load from a local directory only (``local_files_only=True``); torch and transformers
are imported lazily, so ``import searchain.readers`` works without them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from searchain.readers.base import ReaderOutput
from searchain.types import Passage

DPR_THETA = 1.5  # the paper's θ for the DPR reader's relevance logit
QA_THETA = 0.0  # span beats the null ([CLS]) answer


def best_span(
    start_logits: Sequence[float] | np.ndarray,
    end_logits: Sequence[float] | np.ndarray,
    allowed_mask: Sequence[bool] | np.ndarray,
    max_len: int,
) -> tuple[int, int, float]:
    """The highest-scoring valid span ``(start, end, start_logits[start] + end_logits[end])``.

    A span ``[start, end]`` (inclusive token indices) is valid when ``start <= end``,
    ``end - start + 1 <= max_len`` and every token in it is allowed (so it lies inside one
    contiguous allowed region: the passage text). Ties go to the shorter span, then to the
    earlier start. Returns ``(-1, -1, -inf)`` when no span is valid.
    """
    s = np.asarray(start_logits, dtype=np.float64).reshape(-1)
    e = np.asarray(end_logits, dtype=np.float64).reshape(-1)
    allowed = np.asarray(allowed_mask, dtype=bool).reshape(-1)
    if not (len(s) == len(e) == len(allowed)):
        raise ValueError(
            f"start_logits, end_logits and allowed_mask differ in length: "
            f"{len(s)}, {len(e)}, {len(allowed)}"
        )
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    n = len(s)
    # run[i]: how many consecutive allowed tokens start at i.
    run = np.zeros(n + 1, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        run[i] = run[i + 1] + 1 if allowed[i] else 0
    best = (-1, -1, -math.inf)
    for k in range(min(max_len, n)):  # k = end - start
        valid = run[: n - k] > k
        if not valid.any():
            break  # no allowed run is longer than k, so none is longer than k + 1 either
        scores = np.where(valid, s[: n - k] + e[k:], -np.inf)
        i = int(np.argmax(scores))
        if valid[i] and (best[0] < 0 or scores[i] > best[2]):
            best = (i, i + k, float(scores[i]))
    return best


@dataclass(slots=True)
class ReaderInput:
    """One encoded (question, passage) pair and how its tokens map back to ``passage.text``.

    ``allowed[t]`` is true for the tokens of the passage text (the only ones a span may use);
    ``char_spans[t]`` is the token's ``(start, end)`` in ``passage.text`` (``None`` elsewhere);
    ``word_ids[t]`` groups the text tokens of one word (for widening spans to whole words).
    """

    input_ids: list[int]
    allowed: list[bool]
    char_spans: list[tuple[int, int] | None]
    word_ids: list[int | None]
    token_type_ids: list[int] | None = None
    cls_index: int = 0


@dataclass(slots=True)
class ReaderLogits:
    start: np.ndarray  # (seq_len,) over the real (unpadded) tokens
    end: np.ndarray
    relevance: float | None = None  # DPR readers only


def _resolve_path(model_path: str | Path) -> Path:
    path = Path(model_path).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"reader model not found: {path} does not exist")
    if not path.is_dir():
        raise ValueError(f"reader model path {path} is not a directory")
    if not (path / "config.json").is_file():
        raise ValueError(f"reader model directory {path} has no config.json")
    return path


class HFExtractiveReader:
    """A local DPR reader or SQuAD-style QA model as a SearChain :class:`Reader`.

    ``kind`` is ``"dpr"`` or ``"qa"``. See the module docstring for the inputs, the span
    selection and what ``confidence`` means for each.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        max_answer_tokens: int = 30,
        max_length: int = 384,
        device: str = "cpu",
        extend_to_words: bool = True,
    ) -> None:
        if max_answer_tokens < 1:
            raise ValueError(f"max_answer_tokens must be >= 1, got {max_answer_tokens}")
        if max_length < 8:
            raise ValueError(f"max_length must be >= 8, got {max_length}")
        self.path = _resolve_path(model_path)
        self.max_answer_tokens = max_answer_tokens
        self.device = device
        self.extend_to_words = extend_to_words

        import torch  # noqa: F401  (lazy: only a reader that is built needs torch)
        from transformers import AutoConfig

        try:
            config = AutoConfig.from_pretrained(str(self.path), local_files_only=True)
        except (OSError, ValueError, KeyError) as exc:
            raise ValueError(f"cannot read the model config in {self.path}: {exc}") from exc
        archs = list(getattr(config, "architectures", None) or [])
        if config.model_type == "dpr" or any(a.startswith("DPR") for a in archs):
            if archs and "DPRReader" not in archs:
                raise ValueError(f"{self.path} holds a DPR {'/'.join(archs)}, not a DPRReader")
            self.kind = "dpr"
            self.default_theta = DPR_THETA
        else:
            if archs and not any(a.endswith("ForQuestionAnswering") for a in archs):
                raise ValueError(
                    f"{self.path} holds a {'/'.join(archs)}, not a DPR reader or a "
                    "question-answering model"
                )
            self.kind = "qa"
            self.default_theta = QA_THETA
        self.name = f"{'dpr-reader' if self.kind == 'dpr' else 'hf-qa'}:{self.path.name}"

        try:
            self.tokenizer, self.model = self._load(config)
        except OSError as exc:
            raise ValueError(f"cannot load the reader model in {self.path}: {exc}") from exc
        if not getattr(self.tokenizer, "is_fast", False):
            raise ValueError(
                f"{self.path}: the reader needs a fast tokenizer (offset mappings); "
                "save a tokenizer.json with the model"
            )
        self.model.to(device)
        self.model.eval()
        limit = getattr(config, "max_position_embeddings", None)
        self.max_length = min(max_length, limit) if isinstance(limit, int) else max_length

    def _load(self, config: Any) -> tuple[Any, Any]:
        path = str(self.path)
        if self.kind == "dpr":
            from transformers import DPRReader, DPRReaderTokenizerFast

            tokenizer = DPRReaderTokenizerFast.from_pretrained(path, local_files_only=True)
            model = DPRReader.from_pretrained(path, config=config, local_files_only=True)
        else:
            from transformers import AutoModelForQuestionAnswering, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True, use_fast=True)
            model = AutoModelForQuestionAnswering.from_pretrained(
                path, config=config, local_files_only=True
            )
        return tokenizer, model

    # -- encoding ---------------------------------------------------------------------------

    def encode(self, question: str, passage: Passage) -> ReaderInput:
        """The model input for one pair, with the passage-text tokens marked."""
        if self.kind == "dpr":
            return self._encode_dpr(question, passage)
        return self._encode_qa(question, passage)

    def _encode_dpr(self, question: str, passage: Passage) -> ReaderInput:
        tok = self.tokenizer
        text_enc = tok(passage.text, add_special_tokens=False, return_offsets_mapping=True)
        text_ids = list(text_enc["input_ids"])
        # [CLS] question [SEP] title [SEP]: the question and title as a BERT pair, truncated
        # only if they would leave the text less than half of max_length.
        qt_budget = max(self.max_length - len(text_ids), self.max_length // 2)
        # (Batch form: a single empty title would otherwise be dropped along with its [SEP].)
        qt_enc = tok([question], [passage.title], truncation="longest_first", max_length=qt_budget)
        qt_ids = list(qt_enc["input_ids"][0])
        n_text = max(0, min(len(text_ids), self.max_length - len(qt_ids)))
        offsets = list(text_enc["offset_mapping"])[:n_text]
        words = list(text_enc.word_ids())[:n_text]
        n_qt = len(qt_ids)
        char_spans: list[tuple[int, int] | None] = [None] * n_qt
        allowed = [False] * n_qt
        word_ids: list[int | None] = [None] * n_qt
        for (a, b), w in zip(offsets, words, strict=True):
            ok = b > a
            allowed.append(ok)
            char_spans.append((int(a), int(b)) if ok else None)
            word_ids.append(w if ok else None)
        return ReaderInput(
            input_ids=qt_ids + text_ids[:n_text],
            allowed=allowed,
            char_spans=char_spans,
            word_ids=word_ids,
            cls_index=0,
        )

    def _encode_qa(self, question: str, passage: Passage) -> ReaderInput:
        tok = self.tokenizer
        title = passage.title.strip()
        prefix = "" if not title else f"{title} " if title[-1] in ".!?:" else f"{title}. "
        context = prefix + passage.text
        n_q = len(tok(question, add_special_tokens=False)["input_ids"])
        truncation = "only_second" if n_q <= self.max_length // 2 else "longest_first"
        enc = tok(
            question,
            context,
            truncation=truncation,
            max_length=self.max_length,
            return_offsets_mapping=True,
        )
        seq_ids = enc.sequence_ids()
        words = enc.word_ids()
        allowed: list[bool] = []
        char_spans: list[tuple[int, int] | None] = []
        word_ids: list[int | None] = []
        for (a, b), sid, w in zip(enc["offset_mapping"], seq_ids, words, strict=True):
            ok = sid == 1 and a >= len(prefix) and b > a
            allowed.append(ok)
            char_spans.append((int(a) - len(prefix), int(b) - len(prefix)) if ok else None)
            word_ids.append(w if ok else None)
        ids = list(enc["input_ids"])
        cls_id = tok.cls_token_id
        cls_index = ids.index(cls_id) if cls_id is not None and cls_id in ids else 0
        tt = enc.get("token_type_ids")
        return ReaderInput(
            input_ids=ids,
            allowed=allowed,
            char_spans=char_spans,
            word_ids=word_ids,
            token_type_ids=list(tt) if tt is not None else None,
            cls_index=cls_index,
        )

    # -- the model ----------------------------------------------------------------------------

    def logits(self, inputs: Sequence[ReaderInput]) -> list[ReaderLogits]:
        """Run the model on encoded pairs (one padded batch); logits cut to each real length."""
        if not inputs:
            return []
        import torch

        pad = self.tokenizer.pad_token_id or 0
        width = max(len(x.input_ids) for x in inputs)
        ids = torch.full((len(inputs), width), pad, dtype=torch.long)
        mask = torch.zeros((len(inputs), width), dtype=torch.long)
        use_tt = self.kind == "qa" and all(x.token_type_ids is not None for x in inputs)
        tt = torch.zeros((len(inputs), width), dtype=torch.long) if use_tt else None
        for r, x in enumerate(inputs):
            n = len(x.input_ids)
            ids[r, :n] = torch.tensor(x.input_ids, dtype=torch.long)
            mask[r, :n] = 1
            if tt is not None:
                tt[r, :n] = torch.tensor(x.token_type_ids, dtype=torch.long)
        kwargs: dict[str, Any] = {
            "input_ids": ids.to(self.device),
            "attention_mask": mask.to(self.device),
        }
        if tt is not None:
            kwargs["token_type_ids"] = tt.to(self.device)
        with torch.inference_mode():
            out = self.model(**kwargs)
        start = out.start_logits.float().cpu().numpy()
        end = out.end_logits.float().cpu().numpy()
        rel = out.relevance_logits.float().cpu().numpy() if self.kind == "dpr" else None
        return [
            ReaderLogits(
                start=start[r, : len(x.input_ids)],
                end=end[r, : len(x.input_ids)],
                relevance=float(rel[r]) if rel is not None else None,
            )
            for r, x in enumerate(inputs)
        ]

    # -- reading ------------------------------------------------------------------------------

    def _decode(self, passage: Passage, x: ReaderInput, lg: ReaderLogits) -> ReaderOutput:
        s, e, score = best_span(lg.start, lg.end, x.allowed, self.max_answer_tokens)
        if s < 0:
            answer = ""
        else:
            a = x.char_spans[s][0]  # type: ignore[index]
            b = x.char_spans[e][1]  # type: ignore[index]
            if self.extend_to_words:
                ws, we = x.word_ids[s], x.word_ids[e]
                for t, (span, w) in enumerate(zip(x.char_spans, x.word_ids, strict=True)):
                    if span is None or w is None:
                        continue
                    if w == ws and t < s:
                        a = min(a, span[0])
                    if w == we and t > e:
                        b = max(b, span[1])
            answer = passage.text[a:b]
        if self.kind == "dpr":
            confidence = float(lg.relevance)  # type: ignore[arg-type]
        else:
            null = float(lg.start[x.cls_index] + lg.end[x.cls_index])
            confidence = score - null if s >= 0 else -math.inf
        return ReaderOutput(
            answer=answer,
            span_score=score,
            confidence=confidence,
            passage_id=passage.id,
            confidence_source=f"{self.kind} reader",
        )

    def read(self, question: str, passage: Passage) -> ReaderOutput:
        return self.read_batch(question, [passage])[0]

    def read_batch(
        self, question: str, passages: Sequence[Passage], *, batch_size: int = 16
    ) -> list[ReaderOutput]:
        """Read several passages for one question, ``batch_size`` at a time."""
        outputs: list[ReaderOutput] = []
        for i in range(0, len(passages), batch_size):
            chunk = list(passages[i : i + batch_size])
            inputs = [self.encode(question, p) for p in chunk]
            for p, x, lg in zip(chunk, inputs, self.logits(inputs), strict=True):
                outputs.append(self._decode(p, x, lg))
        return outputs

    def __repr__(self) -> str:
        return f"HFExtractiveReader({str(self.path)!r}, kind={self.kind!r})"
