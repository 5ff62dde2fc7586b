"""Documents no one here wrote: Debian's documentation packages, fetched by the test set-up
(``apt-get download`` + ``dpkg -x``, cached outside the repository, never committed).

* maint-guide (0.5 MB): the Debian New Maintainers' Guide as a dblatex PDF (xdvipdfmx), on
  whose pages pypdf drops the spaces between words;
* debian-reference-en (1.7 MB): the Debian Reference as a multi-page DocBook HTML site, with
  a navigation bar on every page and captioned tables.

``scripts/install.sh test`` installs poppler-utils, whose ``pdftotext`` is the reference.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from searchain.retrieval.documents import index_documents
from searchain.retrieval.documents.sections import to_passages
from searchain.retrieval.documents.text_formats import parse_html

CACHE = Path(os.environ.get("SEARCHAIN_TEST_CACHE", Path.home() / ".cache" / "searchain-tests"))
WORD = re.compile(r"[^\W\d_]{2,}")


def fetch(package: str) -> Path:
    """The files of Debian package ``package``, extracted once into the cache."""
    root = CACHE / "debian" / package
    if (root / ".extracted").is_file():
        return root
    if not (shutil.which("apt-get") and shutil.which("dpkg")):
        pytest.skip("fetching real documents needs apt-get and dpkg (Debian or Ubuntu)")
    debs = CACHE / "debian" / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    got = subprocess.run(["apt-get", "download", package], cwd=debs, capture_output=True)
    if got.returncode != 0 and os.geteuid() == 0:  # no package lists yet: read them once
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, check=False)
        got = subprocess.run(["apt-get", "download", package], cwd=debs, capture_output=True)
    assert got.returncode == 0, got.stderr.decode(errors="replace")
    deb = max(debs.glob(f"{package}_*.deb"), key=lambda p: p.stat().st_mtime)
    subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    (root / ".extracted").touch()
    return root


@pytest.fixture(scope="module")
def guide_pdf() -> Path:
    return fetch("maint-guide") / "usr/share/doc/maint-guide/maint-guide.en.pdf"


@pytest.fixture(scope="module")
def reference_html() -> Path:
    site = fetch("debian-reference-en") / "usr/share/debian-reference"
    assert len(list(site.glob("*.en.html"))) >= 10
    return site


def pdftotext(pdf: Path, page: int) -> str:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is the reference: scripts/install.sh test")
    args = ["pdftotext", "-q", "-f", str(page), "-l", str(page), str(pdf), "-"]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def test_pdf_words_keep_their_spaces(guide_pdf: Path, tmp_path: Path) -> None:
    """On every page, the words of the passages are words pdftotext reads there: a glued
    word (``makeanativeDebiansourcepackage``) is none of them."""
    index, report = index_documents([guide_pdf], tmp_path / "idx")
    assert not report.skipped
    by_page: dict[int, Counter[str]] = defaultdict(Counter)
    for p in index.rows(0, len(index)):
        by_page[p.source["page"]].update(w.lower() for w in WORD.findall(p.text))
    assert len(by_page) > 50
    foreign_total = words_total = 0
    for page, words in sorted(by_page.items()):
        reference = {w.lower() for w in WORD.findall(pdftotext(guide_pdf, page))}
        # A word joined across a line-end hyphen is not in pdftotext's text: both halves are.
        foreign = [w for w in words if w not in reference and not _dehyphenated(w, reference)]
        foreign_total += sum(words[w] for w in foreign)
        words_total += sum(words.values())
        assert sum(words[w] for w in foreign) <= max(2, 0.02 * sum(words.values())), (
            page,
            foreign[:10],
        )
    assert foreign_total < 0.005 * words_total
    # The running header (title and page number) and the table of contents are not text.
    texts = [p.text for p in index.rows(0, len(index))]
    assert not any(re.search(r"Debian New Maintainers’ Guide \d+ / \d+", t) for t in texts)
    assert not any(re.search(r"(\. ){5,}", t) for t in texts)


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
