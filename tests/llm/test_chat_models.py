"""Instruct models as first-class citizens: the offline Qwen GGUF assembled from its PyPI
chunks, its own chat template run by our decode loop (with log-probs), the form picked by
``--api auto``, chat log-probs from a real ``llama_cpp.server`` (asked with top_logprobs),
the call log that keeps what the model wrote, and the clear error of an endpoint that
returns no log-probabilities."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest

from searchain.llm import CachedLLM, LLMError, SqliteStore, make_llm, prompt_form, record_calls
from searchain.llm.base import chat_fits
from searchain.llm.local import LocalLLM
from searchain.llm.models import CHUNKED, ChunkedModel, model_path
from searchain.readers.llm_reader import LLMReader, NoLogprobsError
from searchain.types import Passage
from servers import FaultServer

QUESTION = [{"role": "user", "content": "What is the capital of France? Reply with one word."}]
JAWS = Passage(
    id="p1",
    title="Jaws (film)",
    text="Jaws is a 1975 American thriller film directed by Steven Spielberg.",
)


def test_the_assembled_model_is_the_recorded_file(chat_model_path: Path) -> None:
    spec = CHUNKED["qwen2.5-coder-0.5b"]
    assert chat_model_path.stat().st_size == spec.size
    h = hashlib.sha256()
    with chat_model_path.open("rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    assert h.hexdigest() == spec.sha256


def test_a_wrong_chunk_is_refused_and_nothing_is_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A package whose chunk is not the recorded one (fault injection: a corrupt install).
    pkg = tmp_path / "site" / "fake_chunk_part1"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "data" / "part01.bin").write_bytes(b"GGUF not really")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("SEARCHAIN_MODEL_DIR", str(tmp_path / "models"))
    fake = ChunkedModel("fake", "fake.gguf", ("fake_chunk_part1",), 15, "0" * 64, "x", "fake")
    monkeypatch.setitem(CHUNKED, "fake", fake)
    with pytest.raises(LLMError, match="expected 0000"):
        model_path("fake")
    assert list((tmp_path / "models").iterdir()) == []  # no partial file to trust later
    missing = ChunkedModel("gone", "g.gguf", ("no_such_chunk_pkg",), 1, "0" * 64, "chat", "g")
    monkeypatch.setitem(CHUNKED, "gone", missing)
    with pytest.raises(LLMError, match=r"scripts/install\.sh chat"):
        model_path("gone")


def test_auto_picks_chat_for_the_instruct_gguf_and_completion_for_gemma(
    chat_llm: LocalLLM,
) -> None:
    assert chat_llm.form == "chat" and chat_llm.chat_template
    gemma = LocalLLM(n_threads=1)
    assert gemma.form == "completion"  # a base model, whatever template its file carries
    forced = LocalLLM(chat_llm.model_path, n_threads=1, api="completions")
    assert forced.form == "completion"
    cached = CachedLLM(chat_llm, SqliteStore(":memory:"))
    assert prompt_form(cached) == "chat"  # wrappers say what the backend takes


def test_local_chat_uses_the_gguf_template_and_returns_logprobs(chat_llm: LocalLLM) -> None:
    rendered = chat_llm.chat_prompt(QUESTION)
    assert "<|im_start|>user" in rendered and rendered.endswith("<|im_start|>assistant\n")
    r = chat_llm.chat(QUESTION, max_tokens=8, logprobs=True)
    c = r.completions[0]
    assert "paris" in c.text.lower()
    assert c.token_logprobs and all(lp <= 0 and math.isfinite(lp) for lp in c.token_logprobs)
    assert c.finish_reason == "stop"  # <|im_end|> ends the turn; it is not in the text
    assert "<|im_end|>" not in c.text
    # Scoring a given reply: the right answer is likelier than a wrong one.
    assert (
        chat_llm.score_chat(QUESTION, "Paris").total > chat_llm.score_chat(QUESTION, "Berlin").total
    )
    assert chat_fits(chat_llm, QUESTION, 64) is True
    assert chat_fits(chat_llm, [{"role": "user", "content": "word " * 5000}], 64) is False


def test_named_offline_model_through_make_llm(chat_model_path: Path) -> None:
    llm = make_llm("local", model="qwen2.5-coder-0.5b", n_threads=1, cache=False)
    assert llm.form == "chat" and Path(llm.model_path) == chat_model_path  # type: ignore[attr-defined]
    with pytest.raises(LLMError, match="unknown offline model"):
        make_llm("local", model="no-such-model", cache=False)


def test_the_call_log_keeps_what_the_model_wrote(chat_llm: LocalLLM, tmp_path: Path) -> None:
    cached = CachedLLM(chat_llm, SqliteStore(tmp_path / "c.sqlite"))
    with record_calls() as calls:
        first = cached.chat(QUESTION, max_tokens=8)
        again = cached.chat(QUESTION, max_tokens=8)
    assert [c["output"] for c in calls] == [first.text, again.text]  # once each, not twice
    assert [c["cached"] for c in calls] == [False, True]
    assert calls[0]["kind"] == "chat" and calls[0]["form"] == "chat"
    assert calls[0]["request"] == calls[1]["request"]


@pytest.mark.slow
def test_real_server_returns_chat_logprobs_to_the_reader(chat_server: str) -> None:
    llm = make_llm("openai", model="qwen2.5-coder-0.5b", base_url=chat_server, cache=False)
    assert llm.form == "chat"  # --api auto: endpoints are chat
    r = llm.chat(QUESTION, max_tokens=8, logprobs=True)
    assert r.completions[0].token_logprobs, "top_logprobs must be sent for llama_cpp.server"
    out = LLMReader(llm).read("Who directed Jaws?", JAWS)
    assert out.answer == "Steven Spielberg"
    assert -5 < out.confidence <= 0 and out.confidence_source == "logprobs (chat form)"


def test_an_endpoint_without_logprobs_is_a_clear_error_naming_it() -> None:
    with FaultServer([("chat", "Steven Spielberg")]) as server:
        llm = make_llm("openai", model="m", base_url=server.url, cache=False, retries=1)
        with pytest.raises(NoLogprobsError, match=r"m at http://127\.0\.0\.1:\d+/v1"):
            LLMReader(llm).read("Who directed Jaws?", JAWS)
        sent = server.requests[0]["body"]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 1


def test_a_kv_snapshot_spares_the_prefix_and_changes_no_output() -> None:
    """SearChain's next round extends the last round's prompt, but a reader call runs in
    between and evicts it from the live cache; the snapshot brings it back."""
    from searchain import prompts

    llm = LocalLLM(n_threads=1)
    first = prompts.fill("searchain/coq_multihop", question="Who directed Jaws?")
    grown = first + '\n[Query 1]: Who directed Jaws?\n[Answer 1]: Steven Spielberg\n[Question]: "'
    states = llm.prefix_states
    llm.complete(first, max_tokens=4)  # round 1: its prompt is saved
    llm.complete("Q: What is 2+2?\nA:", max_tokens=2)  # a reader call evicts it
    before = states.stats.reused_tokens
    restored = llm.complete(grown, max_tokens=24)
    assert states.stats.restores >= 1 and states.stats.reused_tokens - before >= 256
    states._items.clear()  # no snapshot: the same prompt decoded from scratch
    llm.complete("Q: What is 2+2?\nA:", max_tokens=2)
    fresh = llm.complete(grown, max_tokens=24)
    assert restored.text == fresh.text and restored.text.strip()


def test_prefix_reuse_counts_what_it_spares_and_off_decodes_everything() -> None:
    """bench/prefix_reuse.py's switch: on, a prompt that extends the last one decodes only
    its new tokens; off, every token again — and the text is the same either way."""
    from searchain import prompts

    llm = LocalLLM(n_threads=1)
    first = prompts.fill("searchain/coq_multihop", question="Who directed Jaws?")
    grown = first + "\n[Query 1]: Who directed Jaws?\n[Answer 1]: Steven Spielberg\n"
    stats = llm.prefix_states.stats

    def prefill(prompt: str) -> tuple[int, int, str]:
        p0, d0 = stats.prompt_tokens, stats.prefilled_tokens
        text = llm.complete(prompt, max_tokens=12).text
        return stats.prompt_tokens - p0, stats.prefilled_tokens - d0, text

    llm.complete(first, max_tokens=2)
    total, decoded, reused_text = prefill(grown)
    assert total > 256 and decoded < total - 256  # the shared prefix was not decoded again
    llm.prefix_reuse = False
    llm.complete(first, max_tokens=2)
    total_off, decoded_off, fresh_text = prefill(grown)
    assert (total_off, decoded_off) == (total, total)
    assert reused_text == fresh_text and fresh_text.strip()


def test_an_endpoint_reference_model_scores_through_completions() -> None:
    """Think&Cite's R_g scores a given sentence; endpoints do that only with echo on the
    completions API, so a reference endpoint keeps the completion form under --api auto."""
    from searchain.methods.thinkcite.reward_models import reward_llm

    ref = reward_llm("openai:m@http://127.0.0.1:9/v1", policy=None, role="reward_reference")  # type: ignore[arg-type]
    assert prompt_form(ref) == "completion"


@pytest.mark.parametrize("evict", [False, True], ids=["live-cache", "after-eviction"])
def test_a_prompt_that_restates_the_models_output_does_not_prefill_it_again(
    evict: bool, chat_model_path: Path
) -> None:
    """Issue 31: a next round's prompt restates what the model wrote. With output reuse (the
    default) those tokens come from the cells decoded while writing — in the live cache, and
    after another call evicted it, from the dialogue snapshot taken after the output (the
    0.5B model: Gemma's sliding window keeps snapshots to 512 tokens, see kv_states);
    ``reuse_outputs = False`` prefills them again (every prompt on the batch grid)."""
    from searchain import prompts

    question = "Which magazine was started first, Arthur's Magazine or First for Women?"
    first = prompts.fill("searchain/coq_multihop", question=question)
    llm = (LocalLLM(chat_model_path, n_threads=1, n_ctx=2048, api="completions") if evict
           else LocalLLM(n_threads=1, n_ctx=2048))  # fmt: skip
    stats = llm.prefix_states.stats

    def prefilled() -> tuple[int, int]:
        written = llm.complete(first, max_tokens=48).text  # the output a next round restates
        if evict:
            llm.complete("Q: What is 2+2?\nA:", max_tokens=2)  # a reader call in between
        d0 = stats.prefilled_tokens
        llm.complete(first + written + "\n[Answer 1]: ", max_tokens=4)
        return stats.prefilled_tokens - d0, len(llm.tokenize(written, bos=False))

    llm.reuse_outputs = True
    on, n_out = prefilled()
    llm.reuse_outputs = False
    llm.prefix_states._items.clear()  # the snapshots the first run took, outputs included
    off, _ = prefilled()
    assert n_out >= 40
    # The output's tokens are not prefilled again: past the prompt's cells exactness is gone,
    # so the match is not cut back to the batch grid (a few tokens at the output's end may
    # tokenize differently once restated).
    assert off - on >= n_out - 4, (on, off, n_out)
