"""Recall@5 over real documentation, before and after issue 39's reading (PDFium).

The questions are ``bench/data/real_docs_questions.jsonl`` (written before any retrieval
was run; see ``real_docs_questions.md``). The documents are Debian's packages, fetched like
``bench/documents_fidelity.py`` does (``apt-get download`` + ``dpkg -x`` into
``~/.cache/searchain-bench``, or ``$SEARCHAIN_BENCH_CACHE``; never in the repository):
four PDFs (the New Maintainers' Guide, the Guide for Debian Maintainers and the Debian FAQ
from dblatex + xdvipdfmx, the Developer's Reference from Sphinx + pdfTeX) and two HTML sites
(the Debian Reference, DocBook; the Debian Administrator's Handbook, Publican), copied into
one folder and read into passages twice:

* ``after``: the current reader, ``files.parse_job`` (what ``searchain index`` runs in its
  workers) and ``sites.Sites``: PDFium, page furniture dropped; HTML without its navigation
  (marked as such, or repeated across its site's pages).
* ``before``: the pre-issue-39 reading. PDF: the old ``parse_pdf`` (pypdf's
  ``extract_text`` per page, the outline as headings), reimplemented here as it was in
  ``binary_formats.py`` before issue 39 (pypdf is no longer a dependency of searchain: this
  bench needs ``pip install pypdf``). HTML: the current parser with navigation kept (what
  the pre-issue parser read; its other changes, code lines kept and table cells separated,
  are not undone). Passages are packed by the current ``to_passages`` in both.

Each reading gets a BM25 index and, with ``--retriever hybrid`` (the ``dense`` extra), a
dense MiniLM index fused with it by RRF, as ``searchain search --retriever hybrid`` does;
indexes go under ``<cache>/real-docs``. A question's needed passage is found when one of the
top 5 passages comes from the file its ``source`` names and contains its ``answer``
(NFKC, case and whitespace normalised); a two-passage question counts as found when both
are (``passages`` also counts each half). ``answerable``: the share of needed passages whose
answer is in some passage of that file at all (what the reading lost before ranking).

    .venv/bin/python -m bench.real_docs_recall [--retriever bm25,hybrid] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.kit import ROOT
from searchain.retrieval.documents import binary_formats as bf
from searchain.retrieval.documents import text_formats as tf
from searchain.retrieval.documents.files import ParseJob, discover, parse_job
from searchain.retrieval.documents.sections import (
    Block,
    Document,
    paragraphs,
    to_passages,
)
from searchain.scoring.document_answers import found, needs, norm, source_type
from searchain.types import Passage

CACHE = Path(os.environ.get("SEARCHAIN_BENCH_CACHE", Path.home() / ".cache" / "searchain-bench"))
QUESTIONS = ROOT / "bench" / "data" / "real_docs_questions.jsonl"
DOC = "usr/share/doc"
# package: (folder in the package, file glob): what goes into the corpus, as <package>/<name>
SOURCES = {
    "maint-guide": (f"{DOC}/maint-guide", "maint-guide.en.pdf*"),
    "debmake-doc": (f"{DOC}/debmake-doc", "debmake-doc.en.pdf*"),
    "debian-faq": (f"{DOC}/debian/FAQ", "debian-faq.en.pdf*"),
    "developers-reference": ("usr/share/developers-reference", "developers-reference.pdf"),
    "debian-reference-en": ("usr/share/debian-reference", "*.en.html"),
    "debian-handbook": (f"{DOC}/debian-handbook/html/en-US", "*.html"),
}
# Packages whose version a question set was written from (the frozen git-doc set's README
# names it): fetched at that version, so a Debian point release cannot change the corpus under
# a run that spans machines.
PINNED = {"git-doc": "1:2.39.5-0+deb12u3"}
K = 5
MAX_WORDS = 100


def setup(sources: dict[str, tuple[str, str]] = SOURCES, name: str = "corpus") -> Path:
    """The corpus folder ``<cache>/real-docs/<name>`` of ``sources`` (fetched, unpacked and
    copied once)."""
    debs, root = CACHE / "debs", CACHE / "root"
    corpus = CACHE / "real-docs" / name
    for package, (folder, glob) in sources.items():
        if not (root / package / ".extracted").is_file():
            debs.mkdir(parents=True, exist_ok=True)
            version = PINNED.get(package)
            wanted = f"{package}={version}" if version else package
            subprocess.run(["apt-get", "download", wanted], cwd=debs, check=True)
            deb = max(debs.glob(f"{package}_*.deb"), key=lambda p: p.stat().st_mtime)
            (root / package).mkdir(parents=True, exist_ok=True)  # dpkg -x makes no parents
            subprocess.run(["dpkg", "-x", str(deb), str(root / package)], check=True)
            (root / package / ".extracted").touch()
        out = corpus / package
        if out.is_dir():
            continue
        tmp = corpus / f".{package}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        base = root / package / folder
        # "a|b": several patterns; a "**/" pattern keeps the files' subfolders
        for f in sorted({f for pattern in glob.split("|") for f in base.glob(pattern)}):
            if not f.is_file():
                continue
            data = gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes()
            target = tmp / f.relative_to(base).with_name(f.name.removesuffix(".gz"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if not any(tmp.iterdir()):
            raise SystemExit(f"{package}: nothing matches {folder}/{glob}")
        tmp.rename(out)
    return corpus


# -- the pre-issue-39 reading ---------------------------------------------------------------


def parse_pdf_pypdf(path: Path) -> Document:
    """Pre-issue-39 ``parse_pdf``, as it was in ``binary_formats.py`` (pypdf): each page's
    ``extract_text()`` cut into paragraphs, the outline (bookmarks) as headings."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise bf.UnreadableDocument("encrypted PDF (needs a password)")
        pages = reader.pages
        outline = _pypdf_outline_by_page(reader)
        title = ((reader.metadata or {}).get("/Title") or "").strip() or path.stem
    except bf.UnreadableDocument:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise bf.UnreadableDocument(f"not a readable PDF ({type(e).__name__}: {e})") from None
    blocks: list[Block] = []
    heading: tuple[str, ...] = ()
    for number, page in enumerate(pages, 1):
        heading = outline.get(number, heading)
        try:
            text = page.extract_text() or ""
        except (PdfReadError, ValueError, KeyError, TypeError) as e:
            raise bf.UnreadableDocument(f"page {number} unreadable ({e})") from None
        blocks += paragraphs(text, heading, page=number)
    return Document(title=str(title), blocks=blocks)


def _pypdf_outline_by_page(reader: Any) -> dict[int, tuple[str, ...]]:
    """Pre-issue-39 ``_outline_by_page``: ``{page: heading path}`` where an entry starts."""
    starts: dict[int, tuple[str, ...]] = {}

    def walk(items: list[Any], path: tuple[str, ...]) -> None:
        last: tuple[str, ...] = path
        for item in items:
            if isinstance(item, list):
                walk(item, last)
                continue
            try:
                page = reader.get_destination_page_number(item) + 1
            except Exception:  # a broken destination: the heading is skipped, not the file
                continue
            last = (*path, str(item.title).strip())
            starts.setdefault(page, last)

    try:
        walk(reader.outline, ())
    except Exception:  # a malformed outline only costs the headings
        return {}
    return starts


def parse_html_with_navigation(text: str, path: Path) -> Document:
    """The current HTML parser with navigation kept, as before issue 39."""
    parser = tf._Sections(skip_navigation=False)
    parser.feed(text)
    parser.close()
    parser.end_block()
    title = " ".join("".join(parser.title_parts).split())
    first_h1 = next((b.heading[0] for b in parser.blocks if b.heading), "")
    return Document(title=title or first_h1 or path.stem, blocks=parser.blocks)


# -- reading, indexing, scoring -------------------------------------------------------------


def read(corpus: Path, reading: str) -> tuple[list[Passage], dict[str, float]]:
    """Every passage of the corpus by ``reading`` (``before`` | ``after``), and the seconds
    spent per kind of file."""
    from searchain.retrieval.documents.files import read_text_file

    files, _ = discover([corpus], [], [], 10**9)
    if reading == "after":
        return read_after(files)
    out: list[Passage] = []
    seconds: dict[str, float] = {}
    for f in files:
        t0 = time.perf_counter()
        if f.kind == "pdf":
            doc = parse_pdf_pypdf(f.path)
        else:
            doc = parse_html_with_navigation(read_text_file(f.path), f.path)
        out += list(to_passages(doc, f.rel, MAX_WORDS))
        seconds[f.kind] = seconds.get(f.kind, 0.0) + time.perf_counter() - t0
    return out, seconds


def read_after(files: list[Any]) -> tuple[list[Passage], dict[str, float]]:
    """The current reader, in this process: ``files.parse_job`` per file, then an HTML
    site's pages without the blocks repeated across them (``sites.Sites``), as
    ``searchain index`` does."""
    from searchain.retrieval.documents.sites import Sites

    sites, rows, seconds = Sites(MAX_WORDS), {}, {}
    for f in files:
        t0 = time.perf_counter()
        parsed = parse_job(ParseJob(str(f.path), f.rel, f.kind, MAX_WORDS, {}))
        if parsed.document is not None:
            sites.add(f.rel, parsed)
        else:
            rows[f.rel] = parsed.passages
        seconds[f.kind] = seconds.get(f.kind, 0.0) + time.perf_counter() - t0
    for rel in list(sites.parsed):
        rows[rel] = getattr(sites.finish(rel), "passages", [])
    out = [Passage(*row[:3], None, row[3]) for f in files for row in rows.get(f.rel, [])]
    return out, seconds


def build(passages: list[Passage], work: Path, retriever: str) -> Any:
    """The ``retriever`` (``bm25`` | ``hybrid``) over ``passages``, indexed under ``work``."""
    from searchain.retrieval.bm25 import BM25Index

    shutil.rmtree(work, ignore_errors=True)
    bm25 = BM25Index.build(iter(passages), work / "bm25", show_progress=False)
    if retriever == "bm25":
        return bm25
    from searchain.retrieval.dense import DenseIndex
    from searchain.retrieval.hybrid import HybridRetriever

    dense = DenseIndex.build(iter(passages), work / "dense", show_progress=False)
    return HybridRetriever([bm25, dense])


def score(
    questions: list[dict[str, Any]], passages: list[Passage], top: list[list[Passage]]
) -> dict[str, Any]:
    """Recall@K overall, per kind and per source type; passages found; answerable."""
    by_file: dict[str, list[str]] = {}
    for p in passages:
        by_file.setdefault(p.id.rsplit("#", 1)[0], []).append(norm(p.text))
    groups: dict[str, list[float]] = {}
    halves = [0, 0]
    answerable = [0, 0]
    per_question = {}
    for q, hits in zip(questions, top, strict=True):
        got = [found(n, hits) for n in needs(q)]
        halves[0] += sum(got)
        halves[1] += len(got)
        for path, answer in needs(q):
            answerable[0] += any(answer in t for t in by_file.get(path, []))
            answerable[1] += 1
        hit = float(all(got))
        per_question[q["id"]] = hit
        for g in ("all", q["kind"], source_type(q)):
            groups.setdefault(g, []).append(hit)
    out = {
        g: {"hits": int(sum(v)), "n": len(v), "recall": sum(v) / len(v)} for g, v in groups.items()
    }
    out["passages"] = {"hits": halves[0], "n": halves[1], "recall": halves[0] / halves[1]}
    out["answerable"] = {
        "hits": answerable[0],
        "n": answerable[1],
        "recall": answerable[0] / answerable[1],
    }
    out["per_question"] = per_question
    return out


COLUMNS = ("all", "one-passage", "two-passages", "PDF", "HTML", "passages", "answerable")


def run(retrievers: list[str], corpus: Path) -> dict[str, Any]:
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    texts = [q["question"] for q in questions]
    result: dict[str, Any] = {"questions": len(questions), "k": K, "rows": [], "readings": {}}
    for reading in ("before", "after"):
        passages, seconds = read(corpus, reading)
        result["readings"][reading] = {
            "passages": len(passages),
            "read_seconds": {k: round(v, 1) for k, v in seconds.items()},
        }
        print(f"{reading}: {len(passages):,} passages ({seconds})", file=sys.stderr)
        for name in retrievers:
            t0 = time.perf_counter()
            retriever = build(passages, CACHE / "real-docs" / f"{reading}-{name}", name)
            built = time.perf_counter() - t0
            top = retriever.search_batch(texts, k=K)
            row = {"reading": reading, "retriever": name, "index_seconds": round(built, 1)}
            row.update(score(questions, passages, top))
            result["rows"].append(row)
            print(f"  {name}: indexed in {built:.0f} s", file=sys.stderr)
    return result


def markdown(result: dict[str, Any]) -> str:
    head = ["reading", "retriever", *COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in result["rows"]:
        cells = [row["reading"], row["retriever"]]
        for c in COLUMNS:
            g = row.get(c)
            cells.append(f"{g['recall']:.1%} ({g['hits']}/{g['n']})" if g else "–")
        lines.append("| " + " | ".join(cells) + " |")
    before = {r["retriever"]: r["per_question"] for r in result["rows"] if r["reading"] == "before"}
    for row in (r for r in result["rows"] if r["reading"] == "after"):
        old = before.get(row["retriever"], {})
        won = sorted(q for q, v in row["per_question"].items() if v > old.get(q, 0))
        lost = sorted(q for q, v in row["per_question"].items() if v < old.get(q, 0))
        lines.append(
            f"\n{row['retriever']}: found after only: {', '.join(won) or 'none'}; "
            f"before only: {', '.join(lost) or 'none'} (sign test p = {sign_test(won, lost):.2f})"
        )
    sizes = ", ".join(f"{k} {v['passages']:,}" for k, v in result["readings"].items())
    lines.append(f"\n{result['questions']} questions, Recall@{result['k']}; passages: {sizes}")
    return "\n".join(lines)


def sign_test(won: list[str], lost: list[str]) -> float:
    """Two-sided exact sign test on the questions that changed."""
    n, k = len(won) + len(lost), min(len(won), len(lost))
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--retriever", default="bm25,hybrid", help="bm25, hybrid or both")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    retrievers = [r for r in args.retriever.split(",") if r]
    if unknown := set(retrievers) - {"bm25", "hybrid"}:
        ap.error(f"unknown retriever(s): {', '.join(sorted(unknown))}")
    result = run(retrievers, setup())
    print(json.dumps(result, indent=2) if args.json else markdown(result))


if __name__ == "__main__":
    main()
