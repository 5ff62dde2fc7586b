"""Regenerate src/searchain/data/hotpotqa_demo_corpus.jsonl.gz from ../shared/data.

The demo corpus is the deduplicated pool of the context paragraphs of the 500-question
HotpotQA dev subsample (IRCoT format), as ``{"id", "title", "text"}`` lines. The gzip header
carries no timestamp or file name, so rerunning gives a byte-identical file (the demo index's
cache key is the file's hash).

Usage: python scripts/make_demo_corpus.py [--source PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # runnable from a checkout without installing

from searchain.retrieval.corpus import read_hotpotqa_pool  # noqa: E402

DEFAULT_SOURCE = ROOT.parent / "shared" / "data" / "hotpotqa" / "dev_subsampled.jsonl"
DEFAULT_OUT = ROOT / "src" / "searchain" / "data" / "hotpotqa_demo_corpus.jsonl.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    n = 0
    with (
        open(args.out, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz,
    ):
        for p in read_hotpotqa_pool(args.source):
            line = json.dumps({"id": p.id, "title": p.title, "text": p.text}, ensure_ascii=False)
            gz.write(line.encode() + b"\n")
            n += 1
    print(f"wrote {n:,} passages to {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
