"""Dense index types, staleness and damage: approximate types against flat, an index that
no longer matches its corpus or its embeddings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from dense_kit import animals, failing_after
from searchain.readers.st_embedder import default_embedder_path
from searchain.retrieval import BM25Index, DenseIndex, StaleIndexError
from searchain.types import Passage


@pytest.fixture(scope="module")
def animals_flat(tmp_path_factory: pytest.TempPathFactory) -> DenseIndex:
    # module-scoped: built before the autouse fixture (function scope) could pick MiniLM
    return DenseIndex.build(
        animals(200),
        tmp_path_factory.mktemp("flat") / "i",
        show_progress=False,
        model_path=default_embedder_path(),
    )


@pytest.mark.parametrize("index_type", ["ivf", "hnsw", "IVF4,Flat"])
def test_approximate_index_types_agree_with_flat(
    animals_flat: DenseIndex, tmp_path: Path, index_type: str
) -> None:
    other = animals_flat.reindex(tmp_path / "other", index_type=index_type)
    assert (other.path / "faiss.index").is_file()
    assert os.path.samefile(other.path / "embeddings.f32", animals_flat.path / "embeddings.f32")
    # Searched exhaustively (every list / a wide beam), an ANN index must return the same.
    wide = {"ef_search": 400} if index_type == "hnsw" else {"nprobe": 1000}
    exhaustive = DenseIndex.load(other.path, **wide)
    queries = ["cat in zone 3", "the owl number 17", "bees", "fact 123"]
    for got, expected in zip(
        exhaustive.search_batch(queries, k=5), animals_flat.search_batch(queries, k=5), strict=True
    ):
        assert [p.id for p in got] == [p.id for p in expected]
        np.testing.assert_allclose([p.score for p in got], [p.score for p in expected], atol=1e-5)
    wrong = {"nprobe": 4} if index_type == "hnsw" else {"ef_search": 9}
    with pytest.raises(ValueError, match="does not apply"):
        DenseIndex.load(other.path, **wrong)
    with pytest.raises(ValueError, match="flat"):
        DenseIndex.load(animals_flat.path, nprobe=4)


def test_build_with_an_ann_index_type(animals_flat: DenseIndex, tmp_path: Path) -> None:
    docs = animals(80)  # faiss wants 39 training points per list
    index = DenseIndex.build(docs, tmp_path / "i", index_type="ivf", nlist=2, show_progress=False)
    assert index.metadata["index"] == {"type": "ivf", "nlist": 2, "search_params": {"nprobe": 2}}
    hit = index.search("the yak number 13", k=1)[0]
    assert hit.id == "p13" and hit.score == pytest.approx(
        animals_flat.search("the yak number 13", k=1)[0].score, abs=1e-5
    )


def test_stale_index_is_detected(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in animals(12)))
    out = tmp_path / "index"
    DenseIndex.from_corpus(corpus, out, show_progress=False)
    assert len(DenseIndex.load(out, corpus_path=corpus)) == 12

    original = corpus.read_bytes()
    corpus.write_bytes(original.replace(b"zone", b"zonE", 1))  # same size, new content
    with pytest.raises(StaleIndexError, match="sha256"):
        DenseIndex.load(out, corpus_path=corpus)
    corpus.write_bytes(original + b"\n")  # size differs
    with pytest.raises(StaleIndexError, match="stale"):
        DenseIndex.load(out, corpus_path=corpus)
    DenseIndex.load(out)  # without a corpus to check against, the index still opens

    other_model = tmp_path / "other-model"
    other_model.mkdir()
    (other_model / "config.json").write_text("{}")
    with pytest.raises(StaleIndexError, match="query model"):
        DenseIndex.load(out, model_path=other_model)

    meta = json.loads((out / "metadata.json").read_text())
    (out / "metadata.json").write_text(json.dumps({**meta, "format_version": 0}))
    with pytest.raises(StaleIndexError, match="format"):
        DenseIndex.load(out)


def test_damaged_embeddings_are_detected(tmp_path: Path) -> None:
    out = tmp_path / "index"
    DenseIndex.build(animals(4), out, show_progress=False)
    with open(out / "embeddings.f32", "r+b") as f:
        f.truncate(100)
    with pytest.raises(StaleIndexError, match="damaged"):
        DenseIndex.load(out)
    BM25Index.build(animals(4), tmp_path / "bm25", show_progress=False)
    with pytest.raises(ValueError, match="not a dense"):
        DenseIndex.load(tmp_path / "bm25")


def test_build_edge_cases(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty corpus"):
        DenseIndex.build([], tmp_path / "index", show_progress=False)
    with pytest.raises(RuntimeError, match="simulated crash"):  # before a chunk was saved
        DenseIndex.build(failing_after(animals(10), 3), tmp_path / "index", show_progress=False)
    with pytest.raises(ValueError, match="unknown index type"):
        DenseIndex.build(animals(2), tmp_path / "index", index_type="IVF-oops", show_progress=False)
    assert list(tmp_path.iterdir()) == []  # no partial left behind: nothing to resume

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious")
    with pytest.raises(FileExistsError):
        DenseIndex.build(animals(2), mine, show_progress=False)
    assert (mine / "thesis.tex").read_text() == "precious"

    out = tmp_path / "index"
    DenseIndex.build([Passage(id="old", text="alpha")], out, show_progress=False)
    DenseIndex.build([Passage(id="new", text="alpha")], out, show_progress=False)
    assert [p.id for p in DenseIndex.load(out).search("alpha")] == ["new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index", "mine"]
    assert [p.id for p in DenseIndex.load(out).search("alpha", k=50)] == ["new"]  # k > n
