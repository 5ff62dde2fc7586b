"""Benchmark searchain's BM25Index against bare bm25s on a synthetic corpus.

Both systems index the same generated JSONL file (title + text, English stopwords and
stemming) and answer the same queries, in the same run. Every measurement runs in a fresh
subprocess so peak RSS figures (``ru_maxrss``) don't contaminate each other.

* bare bm25s: read the JSONL into a list of strings, ``bm25s.tokenize`` + ``BM25.index`` +
  ``save`` (no text store: results are row numbers only);
* searchain: ``BM25Index.from_corpus`` (streaming reader, passage splitting check, corpus
  fingerprint, passage store for texts, atomic publish); results are ``Passage`` objects
  with id, title, text and score.

Usage: python -m bench.retrieval [--n-passages 1000000] [--queries 1000] [--k 10]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.kit import ROOT, module_command

SEED = 1234
VOCAB_SIZE = 200_000
ZIPF_S = 1.07
QUERY_WORDS = 4


# -- synthetic data ------------------------------------------------------------------------


def _vocabulary(rng: np.random.Generator) -> list[str]:
    """Distinct pronounceable-ish lowercase words, none of them an English stopword."""
    from bm25s.stopwords import STOPWORDS_EN

    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
    stop, seen, words = set(STOPWORDS_EN), set(), []
    while len(words) < VOCAB_SIZE:
        # Draw in bulk (2-5 syllables per word); per-call rng overhead would dominate.
        lengths = rng.integers(2, 6, size=VOCAB_SIZE).tolist()
        picks = rng.integers(0, len(syllables), size=sum(lengths)).tolist()
        pos = 0
        for n in lengths:
            word = "".join(syllables[i] for i in picks[pos : pos + n])
            pos += n
            if word not in seen and word not in stop:
                seen.add(word)
                words.append(word)
    return words[:VOCAB_SIZE]


def generate(path: Path, n_passages: int, n_queries: int) -> tuple[list[str], dict]:
    """Write ``n_passages`` Zipf-distributed passages to ``path``; return queries and stats.

    Queries are ``QUERY_WORDS`` words drawn from random passages, so each has a relevant
    document and exercises realistic posting-list lengths.
    """
    rng = np.random.default_rng(SEED)
    vocab = _vocabulary(rng)
    ranks = np.arange(1, VOCAB_SIZE + 1, dtype=np.float64)
    cdf = np.cumsum(ranks**-ZIPF_S)
    cdf /= cdf[-1]
    query_rows = set(rng.choice(n_passages, size=min(n_queries, n_passages), replace=False))
    queries: list[str] = []
    total_words = 0
    chunk = 20_000
    with path.open("w", encoding="utf-8") as f:
        for start in range(0, n_passages, chunk):
            n = min(chunk, n_passages - start)
            lengths = rng.integers(50, 101, size=n)
            ids = np.searchsorted(cdf, rng.random(int(lengths.sum()) + 3 * n)).tolist()
            words = [vocab[i] for i in ids]
            total_words += int(lengths.sum())
            pos, lines = 0, []
            for j, length in enumerate(lengths.tolist()):
                title = " ".join(words[pos : pos + 3]).title()
                body = words[pos + 3 : pos + 3 + length]
                pos += 3 + length
                lines.append(
                    json.dumps({"id": f"p{start + j}", "title": title, "text": " ".join(body)})
                )
                if start + j in query_rows:
                    picked = rng.choice(len(body), size=QUERY_WORDS, replace=False)
                    queries.append(" ".join(body[i] for i in picked))
            f.write("\n".join(lines) + "\n")
    order = rng.permutation(len(queries))
    stats = {"avg_words": total_words / n_passages, "bytes": path.stat().st_size}
    return [queries[i] for i in order], stats


# -- measurements, each in its own process --------------------------------------------------


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child_build(system: str, corpus: Path, out: Path) -> dict:
    t0 = time.perf_counter()
    if system == "bare":
        import bm25s
        import Stemmer

        texts = []
        with corpus.open(encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                texts.append(f"{d['title']}\n{d['text']}")
        tokens = bm25s.tokenize(
            texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False
        )
        del texts
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        retriever.save(out, show_progress=False)
    else:
        from searchain.retrieval import BM25Index

        BM25Index.from_corpus(corpus, out, show_progress=False)
    return {"seconds": time.perf_counter() - t0, "peak_rss_mb": _peak_rss_mb()}


def _warm_page_cache(directory: Path) -> None:
    """Read the index files once so both systems are timed with a warm page cache.

    Without this, whichever files the OS happened to evict (this VM reclaims cold page
    cache aggressively) turn into disk reads inside the timed loop, for one system only.
    """
    for p in directory.iterdir():
        with p.open("rb") as f:
            while f.read(1 << 24):
                pass


def child_query(system: str, index_dir: Path, queries_file: Path, k: int, repeats: int) -> dict:
    import bm25s
    import Stemmer

    if system == "ours":
        from searchain.retrieval import BM25Index
    queries = json.loads(queries_file.read_text())
    _warm_page_cache(index_dir)
    t0 = time.perf_counter()  # imports done: the load time is the index's own
    if system == "bare":
        retriever = bm25s.BM25.load(index_dir, mmap=True)
        stemmer = Stemmer.Stemmer("english")

        def run_single(q: str) -> None:
            tokens = bm25s.tokenize(q, stopwords="en", stemmer=stemmer, show_progress=False)
            retriever.retrieve(tokens, k=k, show_progress=False)

        def run_batch(qs: list[str]) -> list[list[int]]:
            tokens = bm25s.tokenize(qs, stopwords="en", stemmer=stemmer, show_progress=False)
            rows, _ = retriever.retrieve(tokens, k=k, show_progress=False)
            return rows.tolist()
    else:
        index = BM25Index.load(index_dir, mmap=True)

        def run_single(q: str) -> None:
            index.search(q, k=k)

        def run_batch(qs: list[str]) -> list[list[int]]:
            return [[int(p.id[1:]) for p in hits] for hits in index.search_batch(qs, k=k)]

    load_seconds = time.perf_counter() - t0
    for q in queries[:10]:  # warm-up: first touches of the memory maps
        run_single(q)
    # Best of `repeats`: the machine is shared, and the minimum is the least noisy estimate.
    single = batch = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for q in queries:
            run_single(q)
        single = min(single, time.perf_counter() - t0)
        t0 = time.perf_counter()
        rows = run_batch(queries)
        batch = min(batch, time.perf_counter() - t0)
    return {
        "load_seconds": load_seconds,
        "single_qps": len(queries) / single,
        "batch_qps": len(queries) / batch,
        "peak_rss_mb": _peak_rss_mb(),
        "rows": rows,
    }


def _run_child(*args: str) -> dict:
    proc = subprocess.run(
        module_command(__spec__.name, "--child", *args), capture_output=True, text=True, cwd=ROOT
    )
    if proc.returncode != 0:
        sys.exit(f"child {args} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _dir_mb(path: Path, names: tuple[str, ...] | None = None) -> float:
    files = [p for p in path.iterdir() if names is None or p.name in names]
    return sum(p.stat().st_size for p in files) / 2**20


# -- report --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description="BM25Index vs bare bm25s")
    parser.add_argument("--n-passages", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3, help="query timings: best of N")
    parser.add_argument("--workdir", type=Path, help="where to put corpus and indexes (temp)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        role, system, *rest = args.child
        if role == "build":
            result = child_build(system, Path(rest[0]), Path(rest[1]))
        else:
            result = child_query(system, Path(rest[0]), Path(rest[1]), int(rest[2]), int(rest[3]))
        print(json.dumps(result))
        return

    work = Path(tempfile.mkdtemp(prefix="searchain-bench-", dir=args.workdir))
    try:
        report(work, args.n_passages, args.queries, args.k, args.repeats)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(work: Path, n_passages: int, n_queries: int, k: int, repeats: int) -> None:
    corpus, queries_file = work / "corpus.jsonl", work / "queries.json"
    t0 = time.perf_counter()
    queries, stats = generate(corpus, n_passages, n_queries)
    queries_file.write_text(json.dumps(queries))
    print(
        f"corpus: {n_passages:,} passages, {stats['avg_words']:.1f} words/passage on average, "
        f"Zipf(s={ZIPF_S}) over {VOCAB_SIZE:,} words, seed {SEED}, "
        f"{stats['bytes'] / 2**20:,.0f} MiB JSONL (generated in {time.perf_counter() - t0:.1f} s)"
    )
    print(
        f"queries: {len(queries):,} x {QUERY_WORDS} words, k={k}, best of {repeats} "
        f"(warm page cache); machine: {os.cpu_count()} CPUs"
    )

    res: dict[str, dict] = {}
    for system in ("bare", "ours"):
        out = work / f"index-{system}"
        res[system] = _run_child("build", system, str(corpus), str(out))
        res[system]["disk_mb"] = _dir_mb(out)
    for system in ("bare", "ours"):
        out = work / f"index-{system}"
        query = _run_child("query", system, str(out), str(queries_file), str(k), str(repeats))
        res[system].update({f"q_{key}": v for key, v in query.items()})
    store = _dir_mb(work / "index-ours", ("passages.jsonl", "passages.offsets.npy"))

    bare, ours = res["bare"], res["ours"]
    rows = [
        ("index build time (s)", "seconds", "{:.1f}", False),
        ("peak RSS, build (MiB)", "peak_rss_mb", "{:,.0f}", False),
        ("on-disk index size (MiB)", "disk_mb", "{:,.0f}", False),
        ("load time, mmap (s)", "q_load_seconds", "{:.2f}", False),
        ("single queries/s", "q_single_qps", "{:.1f}", True),
        ("batched queries/s", "q_batch_qps", "{:.1f}", True),
        ("peak RSS, query (MiB)", "q_peak_rss_mb", "{:,.0f}", False),
    ]
    print(f"\n{'':28}{'bare bm25s':>14}{'BM25Index':>14}{'overhead':>11}")
    for label, key, fmt, higher_is_better in rows:
        # overhead = our cost / bare cost (for throughputs, bare q/s over ours = time ratio)
        ratio = bare[key] / ours[key] if higher_is_better else ours[key] / bare[key]
        print(f"{label:28}{fmt.format(bare[key]):>14}{fmt.format(ours[key]):>14}{ratio:>10.2f}x")
    print(f"  (BM25Index size includes {store:,.0f} MiB passage store: ids, titles, texts)")

    same = sum(set(a) == set(b) for a, b in zip(bare["q_rows"], ours["q_rows"], strict=True))
    print(f"identical top-{k} sets: {same}/{len(queries)} queries")


if __name__ == "__main__":
    main()
