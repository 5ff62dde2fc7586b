"""Static-prefix KV snapshots on disk (llm/kv_disk.py): made by one process, used by the
next, invalidated by a changed prompt or model, rebuilt when corrupt — with the real
embedded model, each "process" a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from searchain import prompts
from searchain.llm.kv_disk import MAGIC, DiskPrefixStore, model_key
from searchain.llm.kv_states import PrefixStates

ROOT = Path(__file__).resolve().parents[2]

# One process: complete each prompt (greedy) and report the prefix statistics.
SCRIPT = """
import json, sys
sys.path.insert(0, {src!r})
from searchain.llm.local import LocalLLM
llm = LocalLLM(n_threads=1)
texts = [llm.complete(p, max_tokens=8, stop=["\\n"]).text for p in json.loads(sys.argv[1])]
s = llm.prefix_states.stats
print(json.dumps({{"texts": texts, "prefilled": s.prefilled_tokens, "prompt": s.prompt_tokens,
                  "disk_restores": s.disk_restores, "static_saves": s.static_saves}}))
"""


def run_process(cache: Path, prompt_texts: list[str], disk: bool = True) -> dict:
    env = {
        **os.environ,
        "SEARCHAIN_CACHE_DIR": str(cache),
        "SEARCHAIN_KV_DISK": "1" if disk else "0",
    }
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(src=str(ROOT / "src")), json.dumps(prompt_texts)],
        env=env, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


PASSAGES = [
    ("Jaws (film): Jaws is a 1975 American thriller film directed by Steven Spielberg.",
     "Who directed Jaws?"),
    ("Kevin Drew: Kevin Drew (born September 9, 1976) is a Canadian musician from Toronto.",
     "Where was Kevin Drew born?"),
    ("Hamlet: Hamlet is a tragedy written by William Shakespeare around 1600.",
     "Who wrote Hamlet?"),
]  # fmt: skip


def reader_prompts(template: str = "reader_extract") -> list[str]:
    return [prompts.fill(template, passage=p, question=q) for p, q in PASSAGES]


def kv_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("kv/*/*.kv"))


@pytest.mark.slow
def test_a_snapshot_made_by_one_process_is_used_by_the_next(tmp_path: Path) -> None:
    first_two, third = reader_prompts()[:2], reader_prompts()[2]
    made = run_process(tmp_path, first_two)  # two prompts diverge after the reader's demos
    assert made["static_saves"] >= 1 and kv_files(tmp_path)
    used = run_process(tmp_path, [third])
    cold = run_process(tmp_path / "cold", [third], disk=False)
    assert used["disk_restores"] == 1
    assert used["prefilled"] <= cold["prefilled"] - 64  # the demos were not prefilled again
    assert used["texts"] == cold["texts"] and "Shakespeare" in used["texts"][0]


@pytest.mark.slow
def test_a_changed_prompt_file_is_not_served_an_old_snapshot(tmp_path: Path) -> None:
    run_process(tmp_path, reader_prompts()[:2])
    changed = tmp_path / "reader.txt"
    text = (ROOT / "src/searchain/prompts/reader_extract.txt").read_text(encoding="utf-8")
    changed.write_text(text.replace("Read the passage", "Read this passage"), encoding="utf-8")
    third = prompts.fill(str(changed), passage=PASSAGES[2][0], question=PASSAGES[2][1])
    used = run_process(tmp_path, [third])
    cold = run_process(tmp_path / "cold", [third], disk=False)
    assert used["disk_restores"] == 0 and used["prefilled"] == cold["prefilled"]
    assert used["texts"] == cold["texts"]


@pytest.mark.slow
def test_a_corrupt_snapshot_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    run_process(tmp_path, reader_prompts()[:2])
    (snapshot,) = kv_files(tmp_path)
    data = bytearray(snapshot.read_bytes())
    data[-100:] = bytes(100)  # damage the state bytes, keep the header readable
    snapshot.write_bytes(bytes(data))
    used = run_process(tmp_path, reader_prompts()[2:] + reader_prompts()[:1])
    cold = run_process(tmp_path / "cold", reader_prompts()[2:] + reader_prompts()[:1], False)
    assert used["disk_restores"] == 0 and used["texts"] == cold["texts"]
    (rebuilt,) = kv_files(tmp_path)  # the two prompts diverged again: saved anew
    store = DiskPrefixStore(rebuilt.parent)
    assert store.load(next(iter(store.keys()))) is not None
    again = run_process(tmp_path, reader_prompts()[1:2])
    assert again["disk_restores"] == 1


def test_a_truncated_or_foreign_file_is_deleted_not_loaded(tmp_path: Path) -> None:
    store = DiskPrefixStore(tmp_path)
    store.save((1, 2, 3), b"state bytes")
    (good,) = tmp_path.glob("*.kv")
    (tmp_path / "foreign.kv").write_bytes(b"not a snapshot")
    good.write_bytes(good.read_bytes()[:-3])  # truncated
    fresh = DiskPrefixStore(tmp_path)
    assert fresh.load((1, 2, 3)) is None
    assert not list(tmp_path.glob("*.kv"))  # both deleted, to be rebuilt


def test_the_directory_is_bounded_least_recently_used_first(tmp_path: Path) -> None:
    store = DiskPrefixStore(tmp_path, max_bytes=2500)
    for i in range(4):
        store.save((i, i), bytes(1000))
        os.utime(next(p for p in store.keys().values() if p.exists()), None)
    assert len(list(tmp_path.glob("*.kv"))) == 2
    assert set(store.keys()) <= {(2, 2), (3, 3), (1, 1)}
    assert (3, 3) in set(store.keys()) and store.load((3, 3)) == bytes(1000)
    assert next(iter(tmp_path.glob("*.kv"))).read_bytes()[: len(MAGIC)] == MAGIC


def test_the_model_key_changes_with_the_model_file_and_the_settings(
    tmp_path: Path, chat_model_path: Path
) -> None:
    from searchain.llm.local import default_model_path

    gemma = default_model_path()
    assert model_key(gemma, n_ctx=4096) == model_key(gemma, n_ctx=4096)
    assert model_key(gemma, n_ctx=4096) != model_key(chat_model_path, n_ctx=4096)
    assert model_key(gemma, n_ctx=4096) != model_key(gemma, n_ctx=2048)


def test_static_boundary_marks_divergence_not_extension() -> None:
    states = PrefixStates()
    head = list(range(300))
    assert states.static_boundary([*head, 1, 2, 3]) == 0  # nothing earlier
    assert states.static_boundary([*head, 1, 2, 3, 4, 5]) == 0  # extends it: a next round
    assert states.static_boundary([*head, 9, 9]) == 300  # diverges after the shared head


def test_sliding_window_models_snapshot_at_most_their_window() -> None:
    """llama.cpp saves only the last window of a sliding-window layer's cells, so a longer
    snapshot restores other cells (the answer changed before this bound)."""
    states = PrefixStates(max_tokens=512)
    assert states.fits(512) and not states.fits(513)
    assert PrefixStates().fits(100_000)
