"""LLM-URL page fetching: pages/second fetched and parsed from the mirror, concurrency 1 vs 16,
and the page cache's speed-up. No LLM involved.

The mirror runs in its own process (``searchain mirror serve``: the bundled HotpotQA pool and
the 10 long physics articles of ../shared/data/wikipedia), so client and server do not share a
GIL. The titles are the 10 long articles (4.4k words on average, 233 to 13.3k; the pages the
paper's GPT-3 named averaged 10k) and ``--short`` HotpotQA titles (~100-word pages). Each
setting fetches all titles ``--repeat`` times with the page cache off; the median is reported,
as a ratio to concurrency 1. The cache rows fetch the same titles through an empty cache
(cold: fetch, parse, write) and then again (warm: read the parsed text back). It runs twice:
against the mirror as it is (loopback, no latency: CPU-bound) and with ``--latency`` added to
every response, which is what fetching from a real, distant host looks like.

    .venv/bin/python -m bench.llm_url [--short 190] [--repeat 3] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from bench.kit import DATA
from searchain.retrieval.demo import demo_corpus_path
from searchain.retrieval.llm_url import FetchConfig, MirrorCorpus, PageFetcher

LONG = DATA / "wikipedia" / "physics_articles_10.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_mirror(port: int, latency: float) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "searchain.cli", "mirror", "serve", "--port", str(port),
           "-c", str(demo_corpus_path()), "-c", str(LONG), "--latency", str(latency)]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/wiki/Aristotle", timeout=1)
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("mirror did not start")


def timed(fetcher: PageFetcher, titles: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    pages = fetcher.fetch_titles(titles)
    seconds = time.perf_counter() - t0
    bad = [p for p in pages if p.status != "fetched"]
    if bad:
        raise RuntimeError(f"{len(bad)} pages not fetched, e.g. {bad[0].title}: {bad[0].error}")
    return seconds, sum(len(p.text.split()) for p in pages)


def measure(titles: list[str], latency: float, repeat: int) -> list[tuple[str, float, int]]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start_mirror(port, latency)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for conc in (1, 16):
                cfg = FetchConfig(base_url=base, concurrency=conc, per_host=conc, cache=False,
                                  cache_dir=tmp)  # fmt: skip
                runs = [timed(PageFetcher(cfg), titles) for _ in range(repeat)]
                rows.append((f"no cache, concurrency {conc}", statistics.median(r[0] for r in runs),
                             runs[0][1]))  # fmt: skip
            cfg = FetchConfig(base_url=base, concurrency=16, per_host=16, cache_dir=tmp + "/c")
            cold = timed(PageFetcher(cfg), titles)
            warm = [timed(PageFetcher(cfg), titles) for _ in range(repeat)]
            rows.append(("cache cold (fetch+parse+write), 16", *cold))
            rows.append(("cache warm (read back), 16", statistics.median(w[0] for w in warm),
                         warm[0][1]))  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(10)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=190, help="HotpotQA titles to add")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05,
                        help="simulated server latency (s) of the second mirror")  # fmt: skip
    args = parser.parse_args()
    long_titles = [a["title"] for a in json.loads(LONG.read_text())]
    short = list(MirrorCorpus.from_files([demo_corpus_path()]).pages)[: args.short]
    titles = long_titles + short
    n = len(titles)
    print(f"{n} pages ({len(long_titles)} long articles + {len(short)} HotpotQA pages); "
          f"median of {args.repeat}")  # fmt: skip
    for latency in (0.0, args.latency):
        rows = measure(titles, latency, args.repeat)
        base_s = rows[0][1]
        print(f"\nmirror latency {latency * 1000:.0f} ms; {rows[0][2]:,} words of clean text")
        print(f"{'setting':40} {'seconds':>8} {'pages/s':>9} {'vs conc. 1':>11}")
        for name, seconds, _words in rows:
            print(f"{name:40} {seconds:8.3f} {n / seconds:9.1f} {base_s / seconds:10.2f}x")
        print(f"cache hit speed-up over a cold fetch: {rows[2][1] / rows[3][1]:.1f}x")


if __name__ == "__main__":
    main()
