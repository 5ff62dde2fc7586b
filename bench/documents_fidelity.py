"""How faithfully documents are read: real PDFs and HTML sites from Debian's packages.

Set-up (cached in ``~/.cache/searchain-bench``, or ``$SEARCHAIN_BENCH_CACHE``; never in the
repository): ``apt-get download`` of the packages below, ``dpkg -x``, ``.pdf.gz`` unpacked.
Needs apt-get, dpkg and poppler-utils (``pdftotext``, ``pdfinfo``), and the extractors it
compares: ``pip install pypdf pdfminer.six trafilatura`` (not searchain's dependencies).

PDF: each file's producer is what ``pdfinfo`` names (``Producer``, with dblatex's
``Creator`` where it says DBLaTeX). On up to ``--pages`` pages per file (evenly spread), each
extractor's page text is compared with ``pdftotext``'s: word agreement is the Dice overlap of
the two bags of words (lower case, NFKC so a ligature glyph is its letters; CJK characters
one word each), pooled per producer. The row ``searchain`` is the indexer's own reading
(PDFium, then headers, footers, page numbers and table-of-contents lines dropped) as
passages; ``searchain (furniture aside)`` compares it with ``pdftotext`` less the words of
the lines the indexer dropped as furniture (``furniture``: their share of ``pdftotext``'s
words), since ``pdftotext`` keeps them. Its boilerplate share is the share of passages whose
text, digits aside, stands on three or more pages of one PDF, or dot leaders; ``<15 w`` the
share of passages under 15 words.

HTML (``documents_fidelity_html.py``): per site (a folder of pages of one generator), the
indexer's passages (markup's navigation left out, then blocks repeated across the site's
pages) against the page's visible text (``<body>`` less scripts and styles, navigation
included), and trafilatura's main text beside them: ``recall`` is the share of the visible
words kept, ``precision`` the share of kept words that are visible; boilerplate passages
are texts that come back in three or more pages of the site. A second table reads the same
pages with every class, id and role attribute taken out (a generator that marks nothing):
markup alone cannot find the navigation there, the repeated-block rule has to.

Each extractor runs in its own subprocess: files/s and peak memory (ru_maxrss) are its own.

    .venv/bin/python -m bench.documents_fidelity [--pages 8] [--extractors pypdf,pdfium,pdfminer]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

from bench.kit import ROOT, module_command

CACHE = Path(os.environ.get("SEARCHAIN_BENCH_CACHE", Path.home() / ".cache" / "searchain-bench"))

PDF_PACKAGES = [
    "debmake-doc",
    "maint-guide",
    "developers-reference",
    "debian-reference-en",
    "debian-policy",
    "debian-faq",
    "debian-history",
    "debian-refcard",
    "groff",
    "ghostscript-doc",
    "fonts-sil-charis",
    "python-reportlab-doc",
    "asymptote-doc",
    "gnuplot-doc",
    "fop-doc",
    "xfig-doc",
    "octave-doc",
    "r-doc-pdf",
]
DOC = "usr/share/doc"
HTML_SITES = {
    "debian-handbook (Publican)": (
        "debian-handbook",
        f"{DOC}/debian-handbook/html/en-US",
        "*.html",
    ),
    "debian-reference (DocBook)": (
        "debian-reference-en",
        "usr/share/debian-reference",
        "*.en.html",
    ),
    "developers-reference (Sphinx)": (
        "developers-reference",
        "usr/share/developers-reference",
        "*.html",
    ),
    "maint-guide (DocBook)": ("maint-guide", f"{DOC}/maint-guide/html", "*.en.html"),
    "debmake-doc (DocBook)": ("debmake-doc", f"{DOC}/debmake-doc/html", "*.en.html"),
}
CJK = r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]"
TOKEN = re.compile(CJK + r"|[^\W_]+(?:['’][^\W_]+)*")
ASIDE = "searchain (furniture aside)"
LEADER = re.compile(r"(?:\.\s?){4,}\s*\d*\s*$")


def words(text: str) -> Counter[str]:
    # NFKC: a ligature glyph (poppler's ``postﬁx``) is the same word as its letters.
    text = unicodedata.normalize("NFKC", text.replace("\ufffe", "").replace("\u00ad", ""))
    return Counter(m.lower() for m in TOKEN.findall(text))


def setup() -> tuple[list[tuple[Path, str]], dict[str, list[Path]]]:
    """Fetch and unpack the packages once; ``([(pdf, producer)], {site: [pages]})``."""
    debs, root, pdfs = CACHE / "debs", CACHE / "root", CACHE / "pdfs"
    for d in (debs, root, pdfs):
        d.mkdir(parents=True, exist_ok=True)
    packages = sorted({*PDF_PACKAGES, *(p for p, _, _ in HTML_SITES.values())})
    for package in packages:
        if (root / package / ".extracted").is_file():
            continue
        subprocess.run(["apt-get", "download", package], cwd=debs, check=True)
        deb = max(debs.glob(f"{package}_*.deb"), key=lambda p: p.stat().st_mtime)
        subprocess.run(["dpkg", "-x", str(deb), str(root / package)], check=True)
        (root / package / ".extracted").touch()
        for f in sorted((root / package).rglob("*.pdf*")):
            if f.suffix not in (".pdf", ".gz") or not f.name.removesuffix(".gz").endswith(".pdf"):
                continue
            data = gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes()
            (pdfs / f"{package}--{f.name.removesuffix('.gz')}").write_bytes(data)
    out = []
    for pdf in sorted(pdfs.glob("*.pdf")):
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
        field = dict(re.findall(r"^(\w+):\s*(.*)$", info, re.M))
        if int(field.get("Pages", "0") or 0) == 0:
            continue
        producer = re.split(r" \(| version| Copyright| 20\d\d-", field.get("Producer", "?"))[0]
        if field.get("Creator", "").startswith("DBLaTeX") or producer == "DBLaTeX":
            producer = f"dblatex ({producer})" if producer != "DBLaTeX" else "dblatex (pdfTeX)"
        out.append((pdf, producer.strip() or "?"))
    sites = {
        name: sorted((root / package / folder).glob(glob))
        for name, (package, folder, glob) in HTML_SITES.items()
    }
    return out, sites


def sample(n: int, k: int) -> list[int]:
    return sorted({round(i * (n - 1) / max(1, min(n, k) - 1)) for i in range(min(n, k))})


def page_count(pdf: Path) -> int:
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(pdf))
    try:
        return len(doc)
    finally:
        doc.close()


def extract(name: str, pdf: Path, pages: list[int]) -> list[str]:
    """Each sampled page's text by extractor ``name``."""
    if name == "pypdf":
        from pypdf import PdfReader

        reader = PdfReader(str(pdf))
        return [reader.pages[p].extract_text() or "" for p in pages]
    if name == "pdfminer":
        from pdfminer.high_level import extract_text

        return [extract_text(str(pdf), page_numbers=[p]) for p in pages]
    if name == "pdfium":
        import pypdfium2

        from searchain.retrieval.documents.binary_formats import _page_text

        doc = pypdfium2.PdfDocument(str(pdf))
        try:
            return [_page_text(doc, p) for p in pages]
        finally:
            doc.close()
    raise ValueError(name)


def searchain_pages(
    pdf: Path, pages: list[int]
) -> tuple[list[str], list[tuple[int, str]], list[str]]:
    """The indexer's passages of ``pdf``: their text on the sampled pages, what it dropped
    there (page furniture), and all passages as ``(page, text)``."""
    from searchain.retrieval.documents.binary_formats import parse_pdf
    from searchain.retrieval.documents.sections import to_passages

    doc = parse_pdf(pdf)
    passages = [(p.source["page"] - 1, p.text) for p in to_passages(doc, pdf.name, 100)]
    on, dropped = defaultdict(list), defaultdict(list)
    for page, text in passages:
        on[page].append(text)
    for d in doc.dropped:
        dropped[(d.page or 0) - 1].append(d.text)
    texts = ["\n".join(on[p]) for p in pages]
    return texts, passages, ["\n".join(dropped[p]) for p in pages]


def pdf_boilerplate(passages: list[tuple[int, str]]) -> int:
    """Passages whose text, digits aside, stands on three or more pages, or dot leaders."""
    pages_of: dict[str, set[int]] = defaultdict(set)
    for page, text in passages:
        pages_of[re.sub(r"\d+", "#", " ".join(text.lower().split()))].add(page)
    return sum(
        1
        for _, t in passages
        if len(pages_of[re.sub(r"\d+", "#", " ".join(t.lower().split()))]) >= 3 or LEADER.search(t)
    )


def worker(name: str, files: list[str], n_pages: int) -> dict[str, object]:
    """One extractor over the PDFs: per file, agreement counts and passage counts."""
    t0 = time.perf_counter()
    rows = []
    for f in files:
        pdf = Path(f)
        pages = sample(page_count(pdf), n_pages)
        dropped = [""] * len(pages)
        try:
            if name == "searchain":
                texts, passages, dropped = searchain_pages(pdf, pages)
            else:
                texts, passages = extract(name, pdf, pages), []
        except Exception as e:  # an extractor that fails on a file scores 0 there
            print(f"{name}: {pdf.name}: {type(e).__name__}: {e}", file=sys.stderr)
            texts, passages = [""] * len(pages), []
        rows.append(
            {
                "file": pdf.name,
                "pages": pages,
                "texts": texts,
                "dropped": dropped,
                "passages": len(passages),
                "boiler": pdf_boilerplate(passages),
                "short": sum(len(t.split()) < 15 for _, t in passages),
            }
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rows": rows, "seconds": time.perf_counter() - t0, "peak_mb": peak}


def run_worker(name: str, files: list[Path], n_pages: int) -> dict[str, object]:
    args = module_command(__spec__.name, "--worker", name, "--pages", str(n_pages))
    got = subprocess.run(
        args, input="\n".join(map(str, files)), capture_output=True, text=True, check=True, cwd=ROOT
    )
    return json.loads(got.stdout)


def reference(pdf: Path, pages: list[int]) -> list[str]:
    return [
        subprocess.run(
            ["pdftotext", "-q", "-enc", "UTF-8", "-f", str(p + 1), "-l", str(p + 1), str(pdf), "-"],
            capture_output=True,
            text=True,
        ).stdout
        for p in pages
    ]


def pdf_table(pdfs: list[tuple[Path, str]], extractors: list[str], n_pages: int) -> list[str]:
    producer_of = {p.name: prod for p, prod in pdfs}
    refs = {p.name: None for p, _ in pdfs}
    results = {name: run_worker(name, [p for p, _ in pdfs], n_pages) for name in extractors}
    # per (producer, column): Dice numerator and denominator, passages, boilerplate ones,
    # short ones, reference words in dropped lines, reference words
    agg: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0] * 7)
    per_file: dict[str, dict[str, float]] = defaultdict(dict)
    for name, result in results.items():
        for row in result["rows"]:
            f = row["file"]
            if refs[f] is None:
                refs[f] = reference(CACHE / "pdfs" / f, row["pages"])
            # ASIDE: the reference less the words of the lines the indexer dropped as page
            # furniture (headers, footers, page numbers, contents), which pdftotext keeps.
            for label, aside in [(name, False)] + [(ASIDE, True)] * (name == "searchain"):
                a = agg[(producer_of[f], label)]
                num, den, furniture, total = agreement(refs[f], row, aside)
                per_file[f][label] = num / den if den else 1.0
                for i, v in enumerate([num, den, row["passages"], row["boiler"], row["short"]]):
                    a[i] += v
                a[5] += furniture
                a[6] += total
    return _pdf_lines(pdfs, extractors, results, agg, per_file)


def agreement(refs: list[str], row: dict, aside: bool) -> tuple[int, int, int, int]:
    """Dice numerator and denominator of a file's sampled pages, how many of the
    reference's words were in lines dropped as furniture (taken out of it when ``aside``)
    and how many words the reference has."""
    num = den = furniture = total = 0
    for ref, got, dropped in zip(refs, row["texts"], row["dropped"], strict=True):
        r, g = words(ref), words(got)
        d = r & words(dropped)
        furniture += sum(d.values())
        total += sum(r.values())
        if aside:
            r -= d
        num += 2 * sum((r & g).values())
        den += sum(r.values()) + sum(g.values())
    return num, den, furniture, total


def _pdf_lines(
    pdfs: list[tuple[Path, str]],
    extractors: list[str],
    results: dict[str, dict],
    agg: dict[tuple[str, str], list[float]],
    per_file: dict[str, dict[str, float]],
) -> list[str]:
    counts = Counter(prod for _, prod in pdfs)
    columns = extractors + [ASIDE] * ("searchain" in extractors)
    head = "| producer | PDFs | " + " | ".join(f"{e} agreement" for e in columns)
    lines = [head + " | searchain furniture | searchain boilerplate | searchain <15 w |"]
    lines.append("|---" * (len(columns) + 5) + "|")
    for prod in sorted(counts, key=lambda p: (-counts[p], p)):
        cells = []
        for e in columns:
            a = agg[(prod, e)]
            worst = min(per_file[p.name][e] for p, pr in pdfs if pr == prod)
            cells.append(f"{a[0] / a[1]:.1%} (min {worst:.1%})" if a[1] else "–")
        s = agg[(prod, "searchain")] if "searchain" in extractors else None
        ok = s and s[2]
        # furniture: the share of pdftotext's words that stood in lines dropped as furniture
        furniture = f"{s[5] / s[6]:.1%}" if ok and s[6] else "–"
        boiler = f"{s[3] / s[2]:.1%}" if ok else "–"
        short = f"{s[4] / s[2]:.1%}" if ok else "–"
        lines.append(
            f"| {prod} | {counts[prod]} | "
            + " | ".join(cells)
            + f" | {furniture} | {boiler} | {short} |"
        )
    speed = ", ".join(
        f"{e}: {len(pdfs) / results[e]['seconds']:.1f} files/s, {results[e]['peak_mb']:.0f} MB"
        for e in extractors
    )
    lines.append(f"\n{len(pdfs)} PDFs, {len(counts)} producers. Speed and peak memory: {speed}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=8, help="pages sampled per PDF")
    ap.add_argument("--extractors", default="pypdf,pdfminer,pdfium,searchain")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        files = sys.stdin.read().split("\n")
        print(json.dumps(worker(args.worker, [f for f in files if f], args.pages)))
        return
    for tool in ("apt-get", "dpkg", "pdftotext", "pdfinfo"):
        if shutil.which(tool) is None:
            sys.exit(f"needs {tool} (Debian: apt-get install poppler-utils)")
    pdfs, sites = setup()
    print(f"## PDF: word agreement with pdftotext ({args.pages} pages per file at most)\n")
    print("\n".join(pdf_table(pdfs, args.extractors.split(","), args.pages)))
    from bench.documents_fidelity_html import html_tables

    print("\n## HTML: words against the visible text\n")
    print("\n".join(html_tables(sites, words)))


if __name__ == "__main__":
    main()
