"""What retrieval costs on this machine, each embedder against BM25 alone in the same run.

Indexing: passages a second and disk for BM25, the MiniLM index (sentence-transformers, the
hf extra) and the packaged GGUF (nomic-embed-text-v1.5, llama.cpp), on the first ``--passages``
paragraphs of HotpotQA's pool, encoding on all usable cores (as ``searchain index`` does).

First-hop query latency (no LLM), p50 / p95 over ``--queries`` HotpotQA questions: BM25, BM25
with a query per part and a bridge hop (``bm25+parts+bridge``), and the hybrids. Query vectors
are encoded on one thread, as in a process that also runs the answering model. ``--size``
sets the index the latency is measured on: a real BM25 index of that many pooled HotpotQA and
MuSiQue paragraphs; the dense side searches the same number of vectors — the encoded
passages' vectors repeated to that count (encoding 10,000 passages with nomic takes an hour
here; a flat search's cost depends on the count and dimension, not on the values).

    .venv/bin/python -m bench.retrieval_cost --passages 200 --size 10000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.kit import DATA
from searchain.readers.embedders import open_embedder
from searchain.readers.st_embedder import default_embedder_path
from searchain.retrieval import BM25Index, DenseIndex, HybridRetriever, read_corpus
from searchain.retrieval.query_plan import QueryPlanRetriever


def pool(n: int) -> list[Any]:
    hotpot = list(read_corpus(DATA / "hotpotqa" / "dev_subsampled.jsonl", "hotpotqa"))
    musique = list(read_corpus(DATA / "musique" / "musique_train_corpus.json", "json"))
    return (hotpot + musique)[:n]


def questions(n: int) -> list[str]:
    path = DATA / "hotpotqa" / "dev_subsampled.jsonl"
    return [json.loads(line)["question_text"] for line in path.open()][:n]


def du(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def index_costs(passages: list[Any], work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    bm25 = BM25Index.build(iter(passages), work / "bm25", show_progress=False)
    secs = time.perf_counter() - t0
    out["bm25"] = {"passages_per_s": len(passages) / secs, "disk_mb": du(bm25.path)}
    for name, model in (("minilm", default_embedder_path()), ("nomic", None)):
        open_embedder(model).encode(["warm-up"])  # loading is not indexing
        t0 = time.perf_counter()
        dense = DenseIndex.build(passages, work / name, model_path=model, show_progress=False)
        secs = time.perf_counter() - t0
        out[name] = {"passages_per_s": len(passages) / secs, "disk_mb": du(dense.path)}
        out[f"_{name}_index"] = dense
    out["_bm25_index"] = bm25
    return out


def latency(retriever: Any, qs: list[str]) -> dict[str, float]:
    retriever.search(qs[0], k=5)  # warm-up
    times = []
    for q in qs:
        t0 = time.perf_counter()
        retriever.search(q, k=5)
        times.append(1000 * (time.perf_counter() - t0))
    times.sort()
    return {"p50_ms": statistics.median(times), "p95_ms": times[int(0.95 * (len(times) - 1))]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--passages", type=int, default=200, help="passages encoded per embedder")
    ap.add_argument("--size", type=int, default=10_000, help="passages the query runs against")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    qs = questions(args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        costs = index_costs(pool(args.passages), work)
        big_bm25 = BM25Index.build(iter(pool(args.size)), work / "bm25-big", show_progress=False)
        rows = {"indexing": {k: v for k, v in costs.items() if not k.startswith("_")}}
        arms = {
            "bm25": big_bm25,
            "bm25+parts+bridge": QueryPlanRetriever(big_bm25),
        }
        for name in ("minilm", "nomic"):
            vectors = SizedVectors(costs[f"_{name}_index"], args.size)
            arms[f"hybrid-{name}"] = HybridRetriever([big_bm25, vectors])
            arms[f"hybrid-{name}+parts+bridge"] = QueryPlanRetriever(arms[f"hybrid-{name}"])
        rows["query"] = {name: latency(r, qs) for name, r in arms.items()}
        rows["index_size"] = args.size
        rows["load_average"] = os.getloadavg()
    print(json.dumps(rows, indent=1))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


class SizedVectors:
    """A dense retriever over ``size`` vectors: a real index's vectors, repeated to ``size``
    rows, searched exactly as a flat DenseIndex searches (faiss.knn), its queries encoded by
    the index's own embedder on one thread. Hits map back to the real passages."""

    def __init__(self, dense: DenseIndex, size: int) -> None:
        rows = np.asarray(dense._embeddings)
        self.dense = dense
        self.n = len(rows)
        self.vectors = np.ascontiguousarray(np.tile(rows, (-(-size // self.n), 1))[:size])

    def search(self, query: str, k: int = 5) -> list[Any]:
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int = 5) -> list[list[Any]]:
        from searchain.retrieval.dense.vectors import load_faiss

        faiss = load_faiss()
        q = self.dense.encode_queries(queries)
        _, rows = faiss.knn(q, self.vectors, k, faiss.METRIC_INNER_PRODUCT)
        out = []
        for row in rows.tolist():
            seen = list(dict.fromkeys(r % self.n for r in row if r >= 0))
            out.append(self.dense._store.get(seen))
        return out


if __name__ == "__main__":
    main()
