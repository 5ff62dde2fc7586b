"""Indexing throughput on a folder of real documents, against the corpus-file path in the same run.

The folder is made from MuSiQue's corpus (real Wikipedia paragraphs, ../shared/data): most
articles become Markdown files (title as a heading, one section per paragraph), every 10th
an HTML page and every 25th a PDF written by fpdf2. The baseline is the same texts as one
JSONL corpus file (``searchain index corpus.jsonl``: no parsing, no sandbox), so the ratio
shows what reading documents costs over reading records. Then: re-indexing the unchanged
folder (nothing re-read) and after touching one file (one re-read). Each build runs in a
fresh subprocess so its peak memory (``ru_maxrss``; in brackets the parser workers' peak,
VmHWM) is its own.

    .venv/bin/python -m bench.documents --docs 1500 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.kit import DATA

CORPUS = DATA / "musique" / "musique_train_corpus.json"


def make_folder(out: Path, n_docs: int) -> tuple[int, Path]:
    """Write ``n_docs`` documents under ``out/docs`` and the same texts to ``out/corpus.jsonl``."""
    from fpdf import FPDF

    articles: dict[str, list[str]] = {}
    for rec in json.loads(CORPUS.read_text()):
        articles.setdefault(rec["title"], []).append(rec["text"])
        if len(articles) > n_docs:
            break
    docs = out / "docs"
    jsonl = []
    for i, (title, paras) in enumerate(list(articles.items())[:n_docs]):
        sub = docs / f"part{i // 200:02}"
        sub.mkdir(parents=True, exist_ok=True)
        stem = f"doc{i:05}"
        jsonl += [{"id": f"{stem}#{j}", "title": title, "text": p} for j, p in enumerate(paras)]
        if i % 25 == 0:
            pdf = FPDF()
            pdf.set_font("Helvetica", size=11)
            pdf.add_page()
            safe = [p.encode("latin-1", "replace").decode("latin-1") for p in paras]
            pdf.multi_cell(0, 6, title.encode("latin-1", "replace").decode("latin-1"))
            for p in safe:
                pdf.ln(4)
                pdf.multi_cell(0, 6, p)
            pdf.output(str(sub / f"{stem}.pdf"))
        elif i % 10 == 0:
            body = "".join(f"<h2>Part {j}</h2><p>{p}</p>" for j, p in enumerate(paras))
            (sub / f"{stem}.html").write_text(f"<html><title>{title}</title><body>{body}</body>")
        else:
            body = "\n\n".join(f"## Part {j}\n\n{p}" for j, p in enumerate(paras))
            (sub / f"{stem}.md").write_text(f"# {title}\n\n{body}\n")
    corpus = out / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in jsonl))
    return min(n_docs, len(articles)), corpus


def timed(args: list[str]) -> dict[str, float]:
    """Run ``searchain index ... --json`` in a fresh process: seconds, peak RSS, its output."""
    code = (
        "import json, resource, sys, time\n"
        "from typer.main import get_command\n"
        "from searchain.cli import app\n"
        "t = time.perf_counter()\n"
        "try:\n"
        "    get_command(app).main(sys.argv[1:], standalone_mode=False)\n"
        "finally:\n"
        "    s = time.perf_counter() - t\n"
        "    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    print(json.dumps({'seconds': s, 'rss_mb': me / 1024}), file=sys.stderr)\n"
    )
    res = subprocess.run([sys.executable, "-c", code, "index", *args, "--json"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    figures = json.loads(res.stderr.strip().splitlines()[-1])
    figures.update(json.loads(res.stdout))
    return figures


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=1500)
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="searchain-docbench-"))
    try:
        t0 = time.perf_counter()
        n, corpus = make_folder(work, args.docs)
        print(f"{n:,} documents written in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        base = timed([str(corpus), "--out", str(work / "corpus-index")])
        docs = timed([str(work / "docs"), "--out", str(work / "docs-index")])
        again = timed([str(work / "docs"), "--out", str(work / "docs-index")])
        one = next((work / "docs").rglob("*.md"))
        one.write_text(one.read_text() + "\n\nA touched paragraph.\n")
        touched = timed([str(work / "docs"), "--out", str(work / "docs-index")])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    files = docs["files"]
    rows = [
        ("corpus file (baseline)", base, n, base["passages"]),
        ("document folder", docs, len(files["read"]), docs["passages"]),
        ("same folder again", again, len(again["files"]["read"]), again["passages"]),
        ("after touching 1 file", touched, len(touched["files"]["read"]), touched["passages"]),
    ]
    print("| build | files read | passages | seconds | files/s | passages/s | peak RSS MB "
          "(parser workers) | ÷ baseline s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for name, f, read, passages in rows:
        s = f["seconds"]
        workers = f.get("files", {}).get("parser_peak_mb", 0)
        print(f"| {name} | {read:,} | {passages:,} | {s:.2f} | {read / s:,.0f} | "
              f"{passages / s:,.0f} | {f['rss_mb']:.0f} ({workers:.0f}) | "
              f"{s / base['seconds']:.2f} |")  # fmt: skip
    print(f"\nskipped: {len(files['skipped'])}; unchanged on the second build: "
          f"{len(again['files']['unchanged'])}; re-read after the touch: "
          f"{touched['files']['read']}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"docs": n, "rows": [
            {"build": name, "files_read": read, "passages": passages, **{
                k: v for k, v in f.items() if k != "files"}} for name, f, read, passages in rows
        ]}, indent=2) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
