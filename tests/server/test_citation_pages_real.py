"""Citation pages of documents no one here wrote (server/citation_pages.py on Debian's
documentation, fetched by the test set-up): the Debian New Maintainers' Guide as its dblatex
PDF and a chapter of the Debian Reference as its DocBook HTML. A cited passage's page names the
file, the PDF page or the HTML section it came from, marks the passage between its neighbours
as they stand in the file, and links to the file itself, served sandboxed."""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from debian_docs import fetch
from searchain.llm import make_llm
from searchain.retrieval import BM25Index
from searchain.retrieval.documents import index_documents
from searchain.server import Engine
from searchain.server.cited import page_link
from searchain.types import Passage
from serverkit import serving

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

TOKEN = "real-pages-token-0123456789"
MARKED = re.compile(r'<mark id="cited">(.*?)</mark>', re.S)
WHERE = re.compile(r'<p class="where">(.*?)</p>', re.S)
NEAR = re.compile(r'<p class="near">(.*?)</p>', re.S)
FILE_LINK = re.compile(r'<a href="([^"]+)">Open the file</a>')


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, BM25Index, Path]]:
    guide = fetch("maint-guide") / "usr/share/doc/maint-guide/maint-guide.en.pdf"
    reference = fetch("debian-reference-en") / "usr/share/debian-reference/ch02.en.html"
    root = tmp_path_factory.mktemp("debian-docs")
    shutil.copy(guide, root / "maint-guide.en.pdf")
    shutil.copy(reference, root / "ch02.en.html")
    out = root.parent / (root.name + "-index")
    index_documents([root], out)
    index = BM25Index.load(out)
    llm = make_llm("local", model="gemma-3-270m")  # the pages make no model call
    with serving(Engine(llm, index), token=TOKEN) as url:
        yield url, index, root


def top_passage(index: BM25Index, query: str, file: str) -> Passage:
    hits = [p for p in index.search(query, k=10) if (p.source or {}).get("path") == file]
    assert hits, f"no passage of {file} for {query!r}"
    return hits[0]


def page_of(url: str, passage: Passage) -> str:
    page = httpx.get(page_link(f"{url}/", passage.id, TOKEN), timeout=60)
    assert page.status_code == 200, page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    marked = MARKED.search(page.text)
    assert marked is not None, page.text[:500]
    assert html.unescape(marked.group(1)) == passage.text
    return page.text


def served_file(url: str, page: str) -> httpx.Response:
    link = FILE_LINK.search(page)
    assert link is not None, "the page has no link to its file"
    got = httpx.get(url + html.unescape(link.group(1)), timeout=60)
    assert got.status_code == 200
    assert got.headers["content-security-policy"].startswith("sandbox")
    return got


def test_a_pdf_passage_opens_on_its_page_between_its_neighbours(
    served: tuple[str, BM25Index, Path],
) -> None:
    url, index, root = served
    passage = top_passage(index, "mailing list for the novice mentors", "maint-guide.en.pdf")
    page = page_of(url, passage)
    where = html.unescape(WHERE.search(page).group(1))  # type: ignore[union-attr]
    assert where.startswith(f"maint-guide.en.pdf · page {passage.source['page']}"), where
    assert len(NEAR.findall(page)) >= 1  # what stands before or after it in the guide
    pdf = served_file(url, page)
    assert pdf.headers["content-type"] == "application/pdf" and pdf.content[:5] == b"%PDF-"
    assert pdf.content == (root / "maint-guide.en.pdf").read_bytes()  # the file itself


def test_an_html_passage_names_its_section_and_serves_the_chapter_sandboxed(
    served: tuple[str, BM25Index, Path],
) -> None:
    url, index, _ = served
    passage = top_passage(index, "aptitude apt-get package management", "ch02.en.html")
    heading = (passage.source or {}).get("heading")
    assert heading, passage.source
    page = page_of(url, passage)
    where = html.unescape(WHERE.search(page).group(1))  # type: ignore[union-attr]
    assert where.startswith("ch02.en.html · ") and str(heading[-1]) in where, where
    chapter = served_file(url, page)
    assert chapter.headers["content-type"].startswith("text/html")
    assert b"<html" in chapter.content[:2000].lower()
