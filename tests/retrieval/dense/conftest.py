"""The dense-index tests measure the index machinery (resumable builds, faiss types,
staleness, fusion) with MiniLM; the packaged GGUF embedder's own tests are elsewhere. The
HotpotQA index is built once and kept in pytest's cache (test_dense.py says how)."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from pathlib import Path

import pytest

from searchain.readers.st_embedder import default_embedder_path
from searchain.retrieval import DenseIndex, StaleIndexError
from searchain.retrieval import _store as store_module
from searchain.retrieval import dense as dense_module


@pytest.fixture(autouse=True)
def minilm_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are of the index machinery (resumable builds, faiss types, staleness):
    MiniLM (the hf extra) encodes ~10x faster on 2 cores than the packaged GGUF, whose own
    tests are in test_gguf_embedder.py; an index of it is built below where that matters."""
    monkeypatch.setattr("searchain.readers.embedders.embedder_path", default_embedder_path)


@pytest.fixture(scope="module")
def dense_index(
    request: pytest.FixtureRequest, hotpot_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> DenseIndex:
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    root = cache.mkdir("searchain-dense") if cache else tmp_path_factory.mktemp("dense")
    # Keyed by the code that writes an index, so a change to it is tested on a fresh build.
    code = hashlib.sha256()
    dense_sources = sorted(Path(dense_module.__file__).parent.glob("*.py"))  # the package
    for source in (*dense_sources, Path(store_module.__file__)):
        code.update(source.read_bytes())
    name = f"hotpotqa-{code.hexdigest()[:12]}"
    for old in root.iterdir():  # indexes (and partial builds) of older versions of dense/
        if name not in old.name:
            shutil.rmtree(old, ignore_errors=True)
    out = root / name
    if (out / "metadata.json").is_file():
        with contextlib.suppress(StaleIndexError, OSError, ValueError, KeyError):
            return DenseIndex.load(out, corpus_path=hotpot_path)
    # MiniLM (the hf extra), not the packaged GGUF: these tests measure the index machinery and
    # its recall floors were measured with it; nomic-embed encodes ~10x slower on 2 cores (its
    # own tests: test_gguf_embedder.py).
    return DenseIndex.from_corpus(
        hotpot_path, out, show_progress=False, model_path=default_embedder_path()
    )
