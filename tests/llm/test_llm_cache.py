"""The on-disk call cache and record/replay, with the real embedded model."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pytest

from searchain.llm import CachedLLM, JsonlStore, ReplayMiss, SqliteStore, make_llm
from searchain.llm.local import LocalLLM

PROMPT = "Question: Who wrote Hamlet?\nAnswer:"


@pytest.fixture(scope="module")
def local() -> LocalLLM:
    return LocalLLM()


def test_second_identical_call_makes_no_model_call(local: LocalLLM, tmp_path: Path) -> None:
    llm = CachedLLM(local, SqliteStore(tmp_path / "calls.sqlite"))
    calls = local.usage.llm_calls
    first = llm.complete(PROMPT, max_tokens=8)
    second = llm.complete(PROMPT, max_tokens=8)
    assert local.usage.llm_calls == calls + 1
    assert (llm.usage.llm_calls, llm.usage.cached_calls) == (1, 1)
    assert second.cached and not first.cached
    assert second.text == first.text
    # Token counts survive a hit (efficiency tables do not depend on cache state) ...
    assert second.usage.prompt_tokens == first.usage.prompt_tokens
    # ... but a hit costs no model time.
    assert second.usage.llm_seconds == 0


def test_cache_persists_across_clients(local: LocalLLM, tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    text = CachedLLM(local, SqliteStore(path)).complete(PROMPT, max_tokens=5).text
    again = CachedLLM(local, SqliteStore(path))
    calls = local.usage.llm_calls
    assert again.complete(PROMPT, max_tokens=5).text == text
    assert local.usage.llm_calls == calls


def test_different_parameters_are_different_entries(local: LocalLLM, tmp_path: Path) -> None:
    llm = CachedLLM(local, SqliteStore(tmp_path / "c.sqlite"))
    llm.complete(PROMPT, max_tokens=5)
    llm.complete(PROMPT, max_tokens=6)
    llm.complete(PROMPT, max_tokens=5, stop=["\n"])
    assert llm.usage.llm_calls == 3 and llm.usage.cached_calls == 0


def test_unseeded_sampling_bypasses_the_cache(local: LocalLLM, tmp_path: Path) -> None:
    llm = CachedLLM(local, SqliteStore(tmp_path / "c.sqlite"))
    llm.complete("Once upon a time", max_tokens=5, temperature=1.0)
    llm.complete("Once upon a time", max_tokens=5, temperature=1.0)
    assert llm.usage.cached_calls == 0 and llm.usage.llm_calls == 2


def test_scores_are_cached(local: LocalLLM, tmp_path: Path) -> None:
    llm = CachedLLM(local, SqliteStore(tmp_path / "c.sqlite"))
    a = llm.score(PROMPT, " Shakespeare")
    b = llm.score(PROMPT, " Shakespeare")
    assert a.token_logprobs == b.token_logprobs
    assert llm.usage.cached_calls == 1


def test_make_llm_caches_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path))
    llm = make_llm("local", model="gemma-3-270m")  # the small one: fast
    assert isinstance(llm, CachedLLM)
    llm.complete(PROMPT, max_tokens=3)
    assert (tmp_path / "llm-calls.sqlite").exists()
    assert not isinstance(make_llm("local", model="gemma-3-270m", cache=False), CachedLLM)


def _writer(path: str, worker: int, n: int) -> None:
    store = SqliteStore(path)
    for i in range(n):
        store.put(f"{worker}-{i}", {}, {"completions": [{"text": f"{worker}:{i}"}]})


def test_concurrent_writer_processes_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    SqliteStore(path)
    procs = [mp.get_context("spawn").Process(target=_writer, args=(path, w, 200)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    store = SqliteStore(path)
    for w in range(4):
        for i in range(200):
            assert store.get(f"{w}-{i}") == {"completions": [{"text": f"{w}:{i}"}]}


def test_record_then_replay_without_a_model(local: LocalLLM, tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = CachedLLM(local, JsonlStore(path))
    live = recorder.complete(PROMPT, max_tokens=6, logprobs=True)
    lines = path.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["request"]["payload"] == PROMPT

    replay = CachedLLM(None, JsonlStore(path), backend="local", model=local.model)
    again = replay.complete(PROMPT, max_tokens=6, logprobs=True)
    assert again.text == live.text
    assert again.completions[0].token_logprobs == live.completions[0].token_logprobs
    with pytest.raises(ReplayMiss, match="no recorded call"):
        replay.complete(PROMPT, max_tokens=7)


def test_llm_url_without_an_llm_opens_the_one_default_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``searchain search --retriever llm-url`` opens LLM-URL with no LLM of its own: it gets
    the default of every surface ($SEARCHAIN_MODEL here), not the library's small Gemma."""
    from searchain.llm.models import ANSWER_MODEL
    from searchain.retrieval.llm_url.spec import open_llm_url

    monkeypatch.setenv("SEARCHAIN_MODEL", "qwen2.5-coder-0.5b")
    assert "qwen2.5-coder-0.5b" in open_llm_url("llm-url").llm.model
    monkeypatch.delenv("SEARCHAIN_MODEL")
    assert make_llm("local", cache=False).model.startswith(ANSWER_MODEL)
