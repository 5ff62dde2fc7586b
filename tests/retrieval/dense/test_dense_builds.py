"""Resumable dense builds: killed, crashed, rebuilt with changes, other settings, two at once."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dense_kit import SRC, animals, failing_after, vectors
from searchain.readers.st_embedder import default_embedder_path
from searchain.retrieval import DenseIndex, read_corpus
from searchain.types import Passage

_CHILD = """
import sys
from searchain.readers.st_embedder import default_embedder_path
from searchain.retrieval import DenseIndex
DenseIndex.from_corpus(sys.argv[1], sys.argv[2], fmt="jsonl", max_words=None,
                       checkpoint_rows=64, batch_size=32, show_progress=False,
                       model_path=default_embedder_path())
"""


@pytest.mark.slow
def test_build_killed_with_sigkill_resumes(
    dense_index: DenseIndex, hotpot_path: Path, tmp_path: Path
) -> None:
    """A real crash: the build runs in a child process that is SIGKILLed mid-encoding."""
    n = 320
    passages = [p for _, p in zip(range(n), read_corpus(hotpot_path), strict=False)]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in passages))
    out = tmp_path / "index"
    progress = tmp_path / ".index.partial" / "progress.json"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_CHILD), str(corpus), str(out)], env=env
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and child.poll() is None:
            if progress.is_file() and len(json.loads(progress.read_text())["digests"]) >= 2:
                break
            time.sleep(0.05)
        assert child.poll() is None, "the build finished (or died) before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert not out.exists()  # nothing half-built was published
    chunks_done = len(json.loads(progress.read_text())["digests"])
    assert 2 <= chunks_done < n // 64

    index = DenseIndex.from_corpus(
        corpus,
        out,
        fmt="jsonl",
        max_words=None,
        checkpoint_rows=64,
        show_progress=False,
        model_path=default_embedder_path(),
    )
    assert index.build_stats["rows_reused"] == chunks_done * 64
    assert index.build_stats["rows_encoded"] == n - chunks_done * 64
    assert not (tmp_path / ".index.partial").exists()
    assert sorted(p.name for p in out.iterdir()) == [
        "embeddings.f32",
        "metadata.json",
        "passages.jsonl",
        "passages.offsets.npy",
    ]
    # The same vectors as the clean build of the whole corpus (whose first rows these are).
    np.testing.assert_allclose(vectors(index), vectors(dense_index)[:n], atol=1e-5)
    assert [p.id for p in index._store.get(range(n))] == [p.id for p in passages]
    assert index.search("Shirley Temple Chief of Protocol", k=1)[0].id == "Shirley Temple#0"


def test_crash_mid_build_resumes_and_reencodes_changed_chunks(tmp_path: Path) -> None:
    docs = animals(40)
    out = tmp_path / "index"
    options = {"checkpoint_rows": 8, "show_progress": False}
    with pytest.raises(RuntimeError, match="simulated crash"):
        DenseIndex.build(failing_after(docs, 20), out, **options)
    assert not out.exists()
    assert (tmp_path / ".index.partial" / "progress.json").is_file()

    # Passage 10 (chunk 1) changed since the crash: chunk 0 is reused, the rest re-encoded.
    changed = list(docs)
    changed[10] = Passage(id="p10", title="Gnu 10", text="A gnu, changed after the crash.")
    index = DenseIndex.build(changed, out, **options)
    assert index.build_stats == {
        "rows": 40,
        "rows_encoded": 32,
        "rows_reused": 8,
        "rows_unchanged": 0,
        "encode_seconds": index.build_stats["encode_seconds"],
    }
    clean = DenseIndex.build(changed, tmp_path / "clean", **options)
    assert clean.build_stats["rows_encoded"] == 40
    np.testing.assert_allclose(vectors(index), vectors(clean), atol=1e-5)
    assert index.search("gnu", k=1)[0].id == "p10"


def test_rebuild_encodes_only_new_and_changed_passages(tmp_path: Path) -> None:
    docs = animals(40)
    out = tmp_path / "index"
    options = {"checkpoint_rows": 8, "show_progress": False}
    first = DenseIndex.build(docs, out, **options)
    before = {p.id: row for p, row in zip(docs, vectors(first).copy(), strict=True)}
    del first

    # One passage changed, one removed, one added: 38 keep their vectors, 2 are encoded.
    changed = [p for p in docs if p.id != "p3"]
    changed[9] = Passage(id="p10", title="Gnu 10", text="A gnu, changed since the last build.")
    changed.append(Passage(id="p40", title="Emu 40", text="An emu arrived after the first build."))
    index = DenseIndex.build(changed, out, **options)
    stats = index.build_stats
    assert (stats["rows"], stats["rows_unchanged"], stats["rows_encoded"]) == (40, 38, 2)
    after = vectors(index)
    for row, p in enumerate(changed):
        if p.id not in ("p10", "p40"):
            np.testing.assert_array_equal(after[row], before[p.id])  # the very same vector
    clean = DenseIndex.build(changed, tmp_path / "clean", **options)
    assert clean.build_stats["rows_unchanged"] == 0
    np.testing.assert_allclose(after, vectors(clean), atol=1e-5)
    assert index.search("gnu", k=1)[0].id == "p10"
    assert index.search("emu", k=1)[0].id == "p40"

    # Encoded otherwise (no titles), the old vectors are not comparable: nothing is kept.
    untitled = DenseIndex.build(changed, out, index_title=False, **options)
    assert untitled.build_stats["rows_unchanged"] == 0
    assert (
        DenseIndex.build(changed, out, keep_unchanged=False, **options).build_stats["rows_encoded"]
        == 40
    )


def test_partial_build_with_other_settings_is_discarded(tmp_path: Path) -> None:
    docs = animals(24)
    out = tmp_path / "index"
    with pytest.raises(RuntimeError):
        DenseIndex.build(failing_after(docs, 20), out, checkpoint_rows=8, show_progress=False)
    # Without titles the texts, hence the vectors, differ: nothing may be reused.
    index = DenseIndex.build(docs, out, checkpoint_rows=8, index_title=False, show_progress=False)
    assert index.build_stats["rows_reused"] == 0 and index.build_stats["rows_encoded"] == 24
    # A grown corpus resumes too: the saved chunk size wins over a new checkpoint_rows.
    more = animals(30)
    with pytest.raises(RuntimeError):
        DenseIndex.build(failing_after(more, 17), out, checkpoint_rows=8, show_progress=False)
    index = DenseIndex.build(more, out, checkpoint_rows=5, show_progress=False)
    assert index.build_stats["rows_reused"] == 16 and len(index) == 30


def test_concurrent_build_of_the_same_index_is_refused(tmp_path: Path) -> None:
    partial = tmp_path / ".index.partial"
    partial.mkdir()
    with open(partial / ".lock", "wb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(RuntimeError, match="another build"):
            DenseIndex.build(animals(4), tmp_path / "index", show_progress=False)
