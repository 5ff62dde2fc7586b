"""Documents no one here wrote: Debian's documentation packages, fetched by the test set-up
(``apt-get download`` + ``dpkg -x``, cached outside the repository, never committed).

* maint-guide (0.5 MB): the Debian New Maintainers' Guide as a dblatex PDF (xdvipdfmx), on
  whose pages pypdf drops the spaces between words;
* debian-reference-en (1.7 MB): the Debian Reference as a multi-page DocBook HTML site, with
  a navigation bar on every page and captioned tables;
* developers-reference (1.1 MB): the Developer's Reference as a Sphinx site, read once as
  it is and once with every class, id and role taken out (a generator that marks nothing);
* groff (3.4 MB): ``pdfmark.pdf`` by Ghostscript 10, which positions its words without a
  space between them (PDFium alone glues ``anyother``), and mom's ``slide-demo.pdf``, whose
  slides are revealed step by step, a page per step.

``scripts/install.sh test`` installs poppler-utils, whose ``pdftotext`` is the reference.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from debian_docs import CACHE, fetch
from searchain.retrieval.documents import index_documents
from searchain.retrieval.documents.sections import to_passages
from searchain.retrieval.documents.text_formats import parse_html

WORD = re.compile(r"[^\W\d_]{2,}")


@pytest.fixture(scope="module")
def guide_pdf() -> Path:
    return fetch("maint-guide") / "usr/share/doc/maint-guide/maint-guide.en.pdf"


@pytest.fixture(scope="module")
def reference_html() -> Path:
    site = fetch("debian-reference-en") / "usr/share/debian-reference"
    assert len(list(site.glob("*.en.html"))) >= 10
    return site


@pytest.fixture(scope="module")
def groff_pdfs() -> Path:
    """groff's PDFs, unpacked from their ``.pdf.gz``."""
    root = fetch("groff") / "usr/share/doc/groff-base"
    out = CACHE / "debian" / "groff-pdf"
    out.mkdir(parents=True, exist_ok=True)
    for packed in ("pdf/pdfmark.pdf.gz", "examples/mom/slide-demo.pdf.gz"):
        pdf = out / Path(packed).name.removesuffix(".gz")
        if not pdf.is_file():
            pdf.write_bytes(gzip.decompress((root / packed).read_bytes()))
    return out


def pdftotext(pdf: Path, page: int) -> str:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is the reference: scripts/install.sh test")
    args = ["pdftotext", "-q", "-f", str(page), "-l", str(page), str(pdf), "-"]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def assert_words_as_pdftotext(pdf: Path, tmp_path: Path, min_pages: int) -> list[str]:
    """On every page, the words of the passages are words pdftotext reads there: a glued
    word (``makeanativeDebiansourcepackage``, ``anyother``) is none of them. The passages'
    texts."""
    index, report = index_documents([pdf], tmp_path / "idx")
    assert not report.skipped
    by_page: dict[int, Counter[str]] = defaultdict(Counter)
    for p in index.rows(0, len(index)):
        by_page[p.source["page"]].update(w.lower() for w in WORD.findall(p.text))
    assert len(by_page) >= min_pages
    foreign_total = words_total = 0
    for page, words in sorted(by_page.items()):
        reference = {w.lower() for w in WORD.findall(pdftotext(pdf, page))}
        # A word joined across a line-end hyphen is not in pdftotext's text: both halves are.
        foreign = [w for w in words if w not in reference and not _dehyphenated(w, reference)]
        foreign_total += sum(words[w] for w in foreign)
        words_total += sum(words.values())
        assert sum(words[w] for w in foreign) <= max(2, 0.02 * sum(words.values())), (
            page,
            foreign[:10],
        )
    assert foreign_total < 0.005 * words_total
    return [p.text for p in index.rows(0, len(index))]


def test_pdf_words_keep_their_spaces(guide_pdf: Path, tmp_path: Path) -> None:
    texts = assert_words_as_pdftotext(guide_pdf, tmp_path, 50)
    # The running header (title and page number) and the table of contents are not text.
    assert not any(re.search(r"Debian New Maintainers’ Guide \d+ / \d+", t) for t in texts)
    assert not any(re.search(r"(\. ){5,}", t) for t in texts)


def test_words_placed_apart_without_a_space_are_two(groff_pdfs: Path, tmp_path: Path) -> None:
    texts = assert_words_as_pdftotext(groff_pdfs / "pdfmark.pdf", tmp_path, 12)
    whole = " ".join(" ".join(texts).split())
    assert "any other groff macro package" in whole and "anyother" not in whole
    assert "A GNU MANUAL" in whole  # letter-spaced capitals: words by their own spacing


def test_the_steps_of_a_slide_are_one_passage(groff_pdfs: Path, tmp_path: Path) -> None:
    pdf = groff_pdfs / "slide-demo.pdf"
    index, report = index_documents([pdf], tmp_path / "idx")
    assert not report.skipped
    pages_of: dict[str, set[int]] = defaultdict(set)
    for p in index.rows(0, len(index)):
        pages_of[p.text].add(p.source["page"])
    assert not [t for t, pages in pages_of.items() if len(pages) >= 2], "a step repeated"
    whole = " ".join(pages_of)
    assert "the choice between two aspect ratios" in whole  # the last step is kept
    manifest = json.loads((tmp_path / "idx" / "documents.json").read_text())
    dropped = manifest["files"]["slide-demo.pdf"]["dropped"]
    assert dropped["earlier step of the next page (a slide revealed step by step)"] > 10


def _dehyphenated(word: str, reference: set[str]) -> bool:
    return any(word[:i] in reference and word[i:] in reference for i in range(2, len(word) - 1))


def test_navigation_is_not_a_passage(reference_html: Path, tmp_path: Path) -> None:
    index, report = index_documents([reference_html], tmp_path / "idx", include=["*.en.html"])
    assert not report.skipped and len(report.added) >= 10
    passages = index.rows(0, len(index))
    files_of: dict[str, set[str]] = defaultdict(set)
    for p in passages:
        files_of[p.text].add(p.source["path"])
        words = p.text.split()
        assert not ({"Prev", "Next"} <= set(words) and len(words) < 30), p.text
    repeated = [t for t, files in files_of.items() if len(files) >= 3]
    assert not repeated, repeated[:3]
    short = sum(len(p.text.split()) < 15 for p in passages)
    assert short < 0.03 * len(passages)


def test_navigation_no_markup_marks_is_found_by_its_repetition(tmp_path: Path) -> None:
    site = fetch("developers-reference") / "usr/share/developers-reference"
    bare = tmp_path / "bare"
    bare.mkdir()
    for page in site.glob("*.html"):
        html = re.sub(r'\s(?:class|id|role)="[^"]*"', "", page.read_text())
        (bare / page.name).write_text(html)
    marked, _ = index_documents([site], tmp_path / "marked", include=["*.html"])
    index, report = index_documents([bare], tmp_path / "bare-idx")
    texts = [p.text for p in index.rows(0, len(index))]
    assert not any("Created using Sphinx" in t or "Show Source" in t for t in texts)
    manifest = json.loads((tmp_path / "bare-idx" / "documents.json").read_text())
    left_out = {b["text"] for b in manifest["repeated_blocks"][""].values()}
    assert "Show Source" in left_out and report.left_out
    # No content lost: the words the markup-guided reading keeps are kept here too.
    kept = Counter(w.lower() for p in marked.rows(0, len(marked)) for w in WORD.findall(p.text))
    got = Counter(w.lower() for t in texts for w in WORD.findall(t))
    assert sum((kept & got).values()) >= 0.995 * sum(kept.values())


def test_a_caption_stays_with_its_table(reference_html: Path) -> None:
    page = reference_html / "ch01.en.html"
    doc = parse_html(page.read_text(), page)
    passages = [p.text for p in to_passages(doc, page.name, 100)]
    captions = 0
    for i, block in enumerate(doc.blocks[:-1]):
        if re.match(r"(Table|Example|Figure) \d+\.\d+\. ", block.text):
            captions += 1
            holder = next(t for t in passages if block.text in t)
            assert doc.blocks[i + 1].text[:60] in holder, block.text
    assert captions >= 10


def test_an_older_extractors_index_reads_its_files_again(
    guide_pdf: Path, reference_html: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(guide_pdf, folder / "guide.pdf")
    shutil.copy(reference_html / "ch02.en.html", folder / "packages.html")
    out = tmp_path / "idx"
    _, first = index_documents([folder], out)
    assert sorted(first.added) == ["guide.pdf", "packages.html"]
    _, again = index_documents([folder], out)
    assert sorted(again.unchanged) == ["guide.pdf", "packages.html"] and not again.outdated

    manifest = json.loads((out / "documents.json").read_text())
    assert "pypdfium2" in manifest["extractors"]["pdf"]
    manifest["extractors"]["pdf"] = "searchain 1; pypdf 5.1.0"  # as an older build wrote
    (out / "documents.json").write_text(json.dumps(manifest))
    _, report = index_documents([folder], out)
    assert report.outdated == ["guide.pdf"] and report.read == ["guide.pdf"]
    assert report.unchanged == ["packages.html"]
    assert "1 read again (indexed by an older extractor)" in report.summary()

    del manifest["extractors"]  # a manifest from before extractors were recorded
    (out / "documents.json").write_text(json.dumps(manifest))
    _, report = index_documents([folder], out)
    assert sorted(report.outdated) == ["guide.pdf", "packages.html"]
