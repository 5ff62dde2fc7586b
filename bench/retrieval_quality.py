"""Retrieval quality and cost of BM25, dense and hybrid retrieval on HotpotQA and MuSiQue.

Recall@k is the fraction of a question's gold supporting paragraphs found among the top k
passages, averaged over the questions:

* HotpotQA: the 500 questions of ``hotpotqa/dev_subsampled.jsonl`` against the pool of all
  their context paragraphs (4,858), gold = ``is_supporting`` contexts;
* MuSiQue: the 100 questions of ``musique/musique_train.json`` against
  ``musique_train_corpus.json`` (1,890 paragraphs, read whole: they are the gold unit), gold
  = the ``is_supporting`` paragraphs, matched to corpus passages by (title, text).

Also measured: dense encode throughput (passages/s, all usable cores), index size on disk,
and query latency (median of single ``search`` calls, and per-query time of one
``search_batch`` over all questions; dense queries are encoded on one thread, as in a
process that also runs the LLM). The machine's load average is printed with the results,
since other processes on a shared machine slow every figure down.

Usage: python -m bench.retrieval_quality [--data-dir ../shared/data]
       [--dense-types flat,hnsw,ivf] [--latency-queries 100] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.kit import DATA
from searchain.retrieval import (
    BM25Index,
    DenseIndex,
    HybridRetriever,
    Retriever,
    hotpotqa_supporting_ids,
    read_corpus,
)

KS = (1, 5, 10)


@dataclass
class Dataset:
    name: str
    corpus: Path
    fmt: str
    questions: list[str]
    gold: list[set[str]]


@dataclass
class Row:
    dataset: str
    system: str
    recall: dict[int, float]
    size_mb: float
    single_ms: float
    batch_ms: float
    build_s: float
    encode_ps: float | None = None
    notes: list[str] = field(default_factory=list)


def hotpotqa(data_dir: Path) -> Dataset:
    path = data_dir / "hotpotqa" / "dev_subsampled.jsonl"
    records = [json.loads(line) for line in path.open()]
    gold = hotpotqa_supporting_ids(path)
    return Dataset(
        "hotpotqa",
        path,
        "hotpotqa",
        [r["question_text"] for r in records],
        [set(gold[r["question_id"]]) for r in records],
    )


def musique(data_dir: Path) -> Dataset:
    corpus = data_dir / "musique" / "musique_train_corpus.json"
    ids = {(p.title, p.text): p.id for p in read_corpus(corpus, "json", max_words=None)}
    records = json.loads((data_dir / "musique" / "musique_train.json").read_text())
    gold = []
    for r in records:
        supporting = [p for p in r["paragraphs"] if p["is_supporting"]]
        # KeyError here would mean a gold paragraph missing from the corpus: fail loudly.
        gold.append({ids[(p["title"], p["paragraph_text"])] for p in supporting})
    return Dataset("musique", corpus, "json", [r["question"] for r in records], gold)


def dir_size_mb(*dirs: Path) -> float:
    return sum(f.stat().st_size for d in dirs for f in d.iterdir() if f.is_file()) / 2**20


def evaluate(ds: Dataset, system: str, retriever: Retriever, latency_queries: int) -> Row:
    retriever.search(ds.questions[0], k=10)  # warm-up: loads the query encoder, faults pages
    t0 = time.perf_counter()
    results = retriever.search_batch(ds.questions, k=max(KS))
    batch_ms = (time.perf_counter() - t0) * 1000 / len(ds.questions)
    recall = {}
    for k in KS:
        per_question = [
            len(gold & {p.id for p in hits[:k]}) / len(gold)
            for gold, hits in zip(ds.gold, results, strict=True)
        ]
        recall[k] = sum(per_question) / len(per_question)
    single = []
    for q in ds.questions[:latency_queries]:
        t0 = time.perf_counter()
        retriever.search(q, k=10)
        single.append((time.perf_counter() - t0) * 1000)
    return Row(ds.name, system, recall, 0.0, statistics.median(single), batch_ms, 0.0)


def run_dataset(
    ds: Dataset, work: Path, dense_types: list[str], args: argparse.Namespace
) -> list[Row]:
    rows = []
    t0 = time.perf_counter()
    bm25 = BM25Index.from_corpus(
        ds.corpus, work / "bm25", fmt=ds.fmt, max_words=None, show_progress=False
    )
    bm25_build = time.perf_counter() - t0
    row = evaluate(ds, "bm25", bm25, args.latency_queries)
    row.size_mb, row.build_s = dir_size_mb(bm25.path), bm25_build
    rows.append(row)

    t0 = time.perf_counter()
    dense = DenseIndex.from_corpus(
        ds.corpus,
        work / "dense-flat",
        fmt=ds.fmt,
        max_words=None,
        batch_size=args.batch_size,
        show_progress=args.progress,
    )
    dense_build = time.perf_counter() - t0
    stats = dense.build_stats
    throughput = stats["rows_encoded"] / stats["encode_seconds"]
    row = evaluate(ds, "dense flat", dense, args.latency_queries)
    row.size_mb, row.build_s, row.encode_ps = dir_size_mb(dense.path), dense_build, throughput
    rows.append(row)

    for index_type in dense_types:
        if index_type == "flat":
            continue
        t0 = time.perf_counter()
        other = dense.reindex(work / f"dense-{index_type}", index_type=index_type)
        build = dense_build + time.perf_counter() - t0  # encoding is shared with flat
        row = evaluate(ds, f"dense {index_type}", other, args.latency_queries)
        row.size_mb, row.build_s = dir_size_mb(other.path), build
        row.notes.append(json.dumps(other.metadata["index"].get("search_params", {})))
        rows.append(row)

    hybrid = HybridRetriever([bm25, dense], k_rrf=60, depth=50)
    row = evaluate(ds, "hybrid bm25+flat", hybrid, args.latency_queries)
    row.size_mb, row.build_s = dir_size_mb(bm25.path, dense.path), bm25_build + dense_build
    rows.append(row)
    return rows


def print_table(rows: list[Row]) -> None:
    head = (
        f"{'dataset':<9} {'system':<17} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'build s':>8} "
        f"{'enc p/s':>8} {'disk MB':>8} {'1q p50 ms':>10} {'batch ms/q':>11}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        enc = f"{r.encode_ps:8.1f}" if r.encode_ps is not None else f"{'-':>8}"
        print(
            f"{r.dataset:<9} {r.system:<17} {r.recall[1]:6.3f} {r.recall[5]:6.3f} "
            f"{r.recall[10]:6.3f} {r.build_s:8.1f} {enc} {r.size_mb:8.1f} "
            f"{r.single_ms:10.2f} {r.batch_ms:11.2f}"
            + ("  " + " ".join(r.notes) if r.notes else "")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--dense-types", default="flat,hnsw,ivf")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--latency-queries", type=int, default=100)
    parser.add_argument("--datasets", default="hotpotqa,musique")
    parser.add_argument("--work", type=Path, default=None, help="keep the indexes here")
    parser.add_argument("--progress", action="store_true", help="show the encoding progress bar")
    args = parser.parse_args()

    loaders = {"hotpotqa": hotpotqa, "musique": musique}
    dense_types = args.dense_types.split(",")
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="searchain-bench-") as tmp:
        work = args.work or Path(tmp)
        for name in args.datasets.split(","):
            ds = loaders[name](args.data_dir)
            print(f"{name}: {len(ds.questions)} questions", file=sys.stderr)
            rows += run_dataset(ds, work / name, dense_types, args)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"\nRecall@k of gold supporting paragraphs; MiniLM-L6 (packaged), faiss-cpu, "
        f"{cores} cores; load average {load_before[0]:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after; {time.perf_counter() - t0:.0f} s in all\n"
    )
    print_table(rows)


if __name__ == "__main__":
    main()
