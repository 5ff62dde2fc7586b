"""Throughput of the retrieval service against in-process search on the same BM25 index.

The service runs in its own process (``serve`` with uvicorn on 127.0.0.1, as
``searchain serve-index`` runs it), so client and server do not share a GIL; clients are
threads, each with its own :class:`RemoteRetriever`, splitting a fixed number of queries
between them. Queries are HotpotQA dev questions, the index is the bundled demo index.
Every setting runs ``--repeat`` times and the median time is reported; results over HTTP
are checked to be identical to in-process results.

    .venv/bin/python -m bench.retrieval_service [--queries 400] [--k 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from bench.kit import DATA
from searchain.retrieval.demo import default_index
from searchain.retrieval.remote import RemoteRetriever

HOTPOTQA = DATA / "hotpotqa" / "dev_subsampled.jsonl"

SERVER = """
import sys
from searchain.retrieval.demo import default_index
from searchain.retrieval.service import serve
serve(default_index(cache_dir=sys.argv[1]), port=int(sys.argv[2]), log_level="warning")
"""


def load_queries(n: int) -> list[str]:
    with HOTPOTQA.open() as f:
        questions = [json.loads(line)["question_text"] for line in f]
    # Cycle if more are asked for than the file has (500).
    return list(itertools.islice(itertools.cycle(questions), n))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(cache_dir: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER, cache_dir, str(port)])
    url = f"http://127.0.0.1:{port}"
    probe = RemoteRetriever(url, timeout=2, attempts=1)
    deadline = time.monotonic() + 60
    while True:
        try:
            probe.search("warm up", 1)
            break
        except Exception:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the retrieval service did not start") from None
            time.sleep(0.1)
    probe.close()
    return proc, url


def timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def through_service(url: str, queries: list[str], k: int, clients: int, batch: int) -> None:
    """``clients`` threads split ``queries``; each searches one query per request, or
    ``batch`` queries per request if ``batch > 1``."""
    shares = [queries[i::clients] for i in range(clients)]

    def client(share: list[str]) -> None:
        with RemoteRetriever(url) as r:
            if batch > 1:
                for start in range(0, len(share), batch):
                    r.search_batch(share[start : start + batch], k)
            else:
                for q in share:
                    r.search(q, k)

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, shares))


def main() -> None:
    parser = argparse.ArgumentParser(description="retrieval service vs in-process search")
    parser.add_argument("--queries", type=int, default=400, help="queries per setting")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting (median)")
    parser.add_argument("--batch", type=int, default=50, help="queries per batch request")
    args = parser.parse_args()

    queries, k = load_queries(args.queries), args.k
    cache_dir = tempfile.mkdtemp(prefix="searchain-bench-")
    index = default_index(cache_dir=cache_dir)  # builds once; the server process reuses it
    proc, url = start_server(cache_dir)
    try:
        with RemoteRetriever(url) as r:
            same = [[p.id for p in hits] for hits in r.search_batch(queries, k)] == [
                [p.id for p in hits] for hits in index.search_batch(queries, k)
            ] and all(r.search(q, k) == index.search(q, k) for q in queries[:100])
        rows: list[tuple[str, int, float]] = []
        rows.append(
            ("in-process search()", 1, timed(lambda: [index.search(q, k) for q in queries], 3))
        )
        rows.append(
            ("in-process search_batch()", 1, timed(lambda: index.search_batch(queries, k), 3))
        )
        for clients in (1, 4, 16):
            rows.append(
                (
                    "service /v1/search",
                    clients,
                    timed(lambda c=clients: through_service(url, queries, k, c, 1), args.repeat),
                )
            )
        for clients in (1, 4):
            rows.append(
                (
                    f"service /v1/search_batch ({args.batch}/req)",
                    clients,
                    timed(
                        lambda c=clients: through_service(url, queries, k, c, args.batch),
                        args.repeat,
                    ),
                )
            )
    finally:
        proc.terminate()
        proc.wait(10)

    base = len(queries) / rows[0][2]
    print(
        f"{len(queries)} HotpotQA questions per setting, k={k}, demo index "
        f"({len(index):,} passages), median of {args.repeat} runs, {os.cpu_count()} CPUs"
    )
    print(f"\n{'setting':36}{'clients':>8}{'seconds':>9}{'queries/s':>11}{'vs in-proc':>12}")
    for label, clients, seconds in rows:
        qps = len(queries) / seconds
        print(f"{label:36}{clients:>8}{seconds:>9.3f}{qps:>11,.0f}{qps / base:>11.2f}x")
    print(f"\nresults over HTTP identical to in-process: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
