"""How faithfully documents are read: real PDFs and HTML sites from Debian's packages.

Set-up (cached in ``~/.cache/searchain-bench``, or ``$SEARCHAIN_BENCH_CACHE``; never in the
repository): ``apt-get download`` of the packages below, ``dpkg -x``, ``.pdf.gz`` unpacked.
Needs apt-get, dpkg and poppler-utils (``pdftotext``, ``pdfinfo``), and the extractors it
compares: ``pip install pypdf pdfminer.six trafilatura`` (not searchain's dependencies).

PDF: each file's producer is what ``pdfinfo`` names (``Producer``, with dblatex's
``Creator`` where it says DBLaTeX). On up to ``--pages`` pages per file (evenly spread), each
extractor's page text is compared with ``pdftotext``'s: word agreement is the Dice overlap of
the two bags of words (lower case; CJK characters one word each), pooled per producer. The
row ``searchain`` is the indexer's own reading (PDFium, then headers, footers, page numbers
and table-of-contents lines dropped) as passages; its boilerplate share is the share of
passages that are, digits aside, the same text on three or more pages of one PDF, or
dot leaders; ``<15 w`` the share of passages under 15 words.

HTML: per site (a folder of pages of one generator), the indexer's passages against the
page's visible text (``<body>`` less scripts and styles, navigation included), and
trafilatura's main text beside them: ``recall`` is the share of the visible words kept,
``precision`` the share of kept words that are visible; boilerplate passages are texts that
come back in three or more pages of the site.

Each extractor runs in its own subprocess: files/s and peak memory (ru_maxrss) are its own.

    .venv/bin/python bench/documents_fidelity.py [--pages 8] [--extractors pypdf,pdfium,pdfminer]
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
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
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
LEADER = re.compile(r"(?:\.\s?){4,}\s*\d*\s*$")


def words(text: str) -> Counter[str]:
    text = text.replace("\ufffe", "").replace("\u00ad", "")
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


def searchain_pages(pdf: Path, pages: list[int]) -> tuple[list[str], list[str]]:
    """The indexer's passages of ``pdf``: their text on the sampled pages, and all."""
    from searchain.retrieval.documents.binary_formats import parse_pdf
    from searchain.retrieval.documents.sections import to_passages

    passages = list(to_passages(parse_pdf(pdf), pdf.name, 100))
    on = defaultdict(list)
    for p in passages:
        on[p.source["page"] - 1].append(p.text)
    return ["\n".join(on[p]) for p in pages], [p.text for p in passages]


def pdf_boilerplate(texts: list[str]) -> int:
    shapes = Counter(re.sub(r"\d+", "#", " ".join(t.lower().split())) for t in texts)
    return sum(
        1
        for t in texts
        if shapes[re.sub(r"\d+", "#", " ".join(t.lower().split()))] >= 3 or LEADER.search(t)
    )


def worker(name: str, files: list[str], n_pages: int) -> dict[str, object]:
    """One extractor over the PDFs: per file, agreement counts and passage counts."""
    t0 = time.perf_counter()
    rows = []
    for f in files:
        pdf = Path(f)
        pages = sample(page_count(pdf), n_pages)
        try:
            if name == "searchain":
                texts, passages = searchain_pages(pdf, pages)
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
                "passages": len(passages),
                "boiler": pdf_boilerplate(passages),
                "short": sum(len(p.split()) < 15 for p in passages),
            }
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rows": rows, "seconds": time.perf_counter() - t0, "peak_mb": peak}


def run_worker(name: str, files: list[Path], n_pages: int) -> dict[str, object]:
    args = [sys.executable, __file__, "--worker", name, "--pages", str(n_pages)]
    got = subprocess.run(
        args, input="\n".join(map(str, files)), capture_output=True, text=True, check=True
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
    agg: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    per_file: dict[str, dict[str, float]] = defaultdict(dict)
    for name, result in results.items():
        for row in result["rows"]:
            f = row["file"]
            if refs[f] is None:
                refs[f] = reference(CACHE / "pdfs" / f, row["pages"])
            a = agg[(producer_of[f], name)]
            num = den = 0
            for ref, got in zip(refs[f], row["texts"], strict=True):
                r, g = words(ref), words(got)
                num += 2 * sum((r & g).values())
                den += sum(r.values()) + sum(g.values())
            per_file[f][name] = num / den if den else 1.0
            a[0] += num
            a[1] += den
            a[2] += row["passages"]
            a[3] += row["boiler"]
            a[4] += row["short"]
            a[5] += 1
    return _pdf_lines(pdfs, extractors, results, agg, per_file)


def _pdf_lines(
    pdfs: list[tuple[Path, str]],
    extractors: list[str],
    results: dict[str, dict],
    agg: dict[tuple[str, str], list[float]],
    per_file: dict[str, dict[str, float]],
) -> list[str]:
    counts = Counter(prod for _, prod in pdfs)
    head = "| producer | PDFs | " + " | ".join(f"{e} agreement" for e in extractors)
    lines = [head + " | searchain boilerplate | searchain <15 w |"]
    lines.append("|---" * (len(extractors) + 4) + "|")
    for prod in sorted(counts, key=lambda p: (-counts[p], p)):
        cells = []
        for e in extractors:
            a = agg[(prod, e)]
            worst = min(per_file[p.name][e] for p, pr in pdfs if pr == prod)
            cells.append(f"{a[0] / a[1]:.1%} (min {worst:.1%})" if a[1] else "–")
        s = agg[(prod, "searchain")] if "searchain" in extractors else None
        boiler = f"{s[3] / s[2]:.1%}" if s and s[2] else "–"
        short = f"{s[4] / s[2]:.1%}" if s and s[2] else "–"
        lines.append(
            f"| {prod} | {counts[prod]} | " + " | ".join(cells) + f" | {boiler} | {short} |"
        )
    speed = ", ".join(
        f"{e}: {len(pdfs) / results[e]['seconds']:.1f} files/s, {results[e]['peak_mb']:.0f} MB"
        for e in extractors
    )
    lines.append(f"\n{len(pdfs)} PDFs, {len(counts)} producers. Speed and peak memory: {speed}")
    return lines


def visible_text(html: str) -> str:
    import lxml.html

    tree = lxml.html.fromstring(html.encode())
    for bad in tree.xpath("//script|//style|//head|//noscript"):
        bad.drop_tree()
    return tree.text_content()


def html_table(sites: dict[str, list[Path]]) -> list[str]:
    import trafilatura

    from searchain.retrieval.documents.sections import to_passages
    from searchain.retrieval.documents.text_formats import parse_html

    lines = [
        "| site | pages | searchain recall | searchain precision | trafilatura recall "
        "| trafilatura precision | searchain boilerplate | searchain <15 w | files/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for site, pages in sites.items():
        stat = Counter()
        files_of: dict[str, set[str]] = defaultdict(set)
        texts = []
        t0 = time.perf_counter()
        for page in pages:
            html = page.read_text(errors="replace")
            for p in to_passages(parse_html(html, page), page.name, 100):
                files_of[p.text].add(page.name)
                texts.append(p.text)
        seconds = time.perf_counter() - t0
        for page in pages:
            html = page.read_text(errors="replace")
            vis = words(visible_text(html))
            ours = words("\n".join(b.text for b in parse_html(html, page).blocks))
            traf = words(trafilatura.extract(html, include_tables=True) or "")
            for key, got in (("s", ours), ("t", traf)):
                stat[key + "hit"] += sum((vis & got).values())
                stat[key + "got"] += sum(got.values())
            stat["vis"] += sum(vis.values())
        boiler = sum(1 for t in texts if len(files_of[t]) >= 3)
        short = sum(len(t.split()) < 15 for t in texts)
        lines.append(
            f"| {site} | {len(pages)} | {stat['shit'] / stat['vis']:.1%} | "
            f"{stat['shit'] / max(1, stat['sgot']):.1%} | {stat['thit'] / stat['vis']:.1%} | "
            f"{stat['thit'] / max(1, stat['tgot']):.1%} | {boiler / len(texts):.1%} | "
            f"{short / len(texts):.1%} | {len(pages) / seconds:.0f} |"
        )
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
    print("\n## HTML: words against the visible text\n")
    print("\n".join(html_table(sites)))


if __name__ == "__main__":
    main()
