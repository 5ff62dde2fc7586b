"""Citations a person can open (server/citation_pages.py): a chat client's citation link opens
in Chromium as a readable page — title, file and page, the passage marked between its
neighbours, a link that opens the file — without the bearer token, because the link is signed;
unsigned, forged or out-of-index links get nothing, and hostile document text stays text."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import openai
import pytest

from documents_kit import write_guide_pdf
from searchain.llm import make_llm
from searchain.retrieval import BM25Index
from searchain.retrieval.documents import index_documents
from searchain.server import Engine
from searchain.server.cited import page_link, signature
from searchain.types import Passage, Trace
from serverkit import serving

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

TOKEN = "pages-token-0123456789"
QUESTION = "What does error E42 on the Frobnicator display mean?"
HOSTILE = '<script>document.title="owned"</script><img src=x onerror=alert(1)> E42 overheats'
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Engine]]:
    root = tmp_path_factory.mktemp("docs")
    (root / "manuals").mkdir()
    write_guide_pdf(root / "manuals" / "guide.pdf")
    # markup in a code block is text the page must show as text (an HTML file's scripts are
    # dropped by its reader already)
    (root / "notes.md").write_text(f"# Notes\n\nError codes:\n\n```\n{HOSTILE}\n```\n")
    out = root.parent / (root.name + "-index")
    index_documents([root], out)
    cache = tmp_path_factory.mktemp("calls") / "calls.sqlite"
    llm = make_llm("local", model="gemma-3-270m", cache=cache)
    engine = Engine(llm, BM25Index.load(out))
    with serving(engine, token=TOKEN) as url:
        yield url, engine


def test_a_chat_citation_opens_in_chromium_as_a_readable_page(served: tuple[str, Engine]) -> None:
    import playwright.sync_api as playwright_api

    url, _ = served
    client = openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0, timeout=300)
    reply = client.chat.completions.create(
        model="retrieve-read", messages=[{"role": "user", "content": QUESTION}]
    )
    sources = {s["id"]: s for s in (reply.model_extra or {})["searchain"]["sources"]}
    links = [a.url_citation.url for a in reply.choices[0].message.annotations or []]
    assert links, reply.choices[0].message.content
    guide = next(pid for pid in sources if pid.startswith("manuals/guide.pdf#"))
    link = page_link(f"{url}/", guide, TOKEN)
    if not CHROMIUM.exists():
        pytest.fail("chromium not found at /usr/bin/chromium: run scripts/install.sh test")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = browser.new_page()  # a fresh browser: no token, no header
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        for each in links:  # every citation the chat client shows opens
            assert page.goto(each).status == 200, each
        assert page.goto(link).status == 200
        where = page.locator(".where").inner_text()
        assert where.startswith("manuals/guide.pdf · page "), where
        assert page.locator("mark#cited").inner_text().split() == sources[guide]["text"].split()
        assert page.locator("p.near").count() >= 1  # its neighbours in the file
        href = page.get_by_role("link", name="Open the file").get_attribute("href") or ""
        served_file = page.request.get(url + href)
        assert served_file.status == 200
        assert served_file.headers["content-type"] == "application/pdf"
        assert served_file.headers["content-security-policy"].startswith("sandbox")
        assert served_file.body()[:5] == b"%PDF-"
        assert not errors, errors
        browser.close()


def test_hostile_text_is_shown_as_text_and_runs_nothing(served: tuple[str, Engine]) -> None:
    url, _ = served
    pid = "notes.md#0"
    page = httpx.get(page_link(f"{url}/", pid, TOKEN), timeout=30)
    assert page.status_code == 200, page.text
    assert "<script>" not in page.text and "<img" not in page.text
    assert html.escape('<script>document.title="owned"</script>') in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    file = httpx.get(f"{url}/passage-file?id={quote(pid)}&cite={signature(TOKEN, pid)}")
    assert file.status_code == 200 and "sandbox" in file.headers["content-security-policy"]


def test_links_the_service_did_not_sign_open_nothing(served: tuple[str, Engine]) -> None:
    url, _ = served
    pid = "manuals/guide.pdf#0"
    unsigned = httpx.get(f"{url}/passages/{quote(pid, safe='')}", timeout=30)
    forged = httpx.get(f"{url}/passages/{quote(pid, safe='')}?cite={'0' * 32}", timeout=30)
    assert unsigned.status_code == forged.status_code == 403
    assert "Frobnicator" not in unsigned.text + forged.text
    other = signature(TOKEN, "manuals/guide.pdf#1")  # a real signature of another passage
    assert httpx.get(f"{url}/passage-file?id={quote(pid)}&cite={other}").status_code == 404
    for escape in ("../../etc/passwd#0", "/etc/passwd#0", "manuals/../../x#0"):
        signed = f"{url}/passage-file?id={quote(escape)}&cite={signature(TOKEN, escape)}"
        assert httpx.get(signed).status_code == 404


def test_a_corpus_passage_the_service_cited_opens_and_no_other(served: tuple[str, Engine]) -> None:
    url, engine = served
    cited = Passage("web#3", "Kiss and Tell is a 1945 film.", "Kiss and Tell")
    engine.cited.remember(Trace(question="q", method="retrieve-read", references=[cited]))
    page = httpx.get(page_link(f"{url}/", "web#3", TOKEN), timeout=30)
    assert page.status_code == 200 and "<h1>Kiss and Tell</h1>" in page.text
    assert '<mark id="cited">Kiss and Tell is a 1945 film.</mark>' in page.text
    never = httpx.get(page_link(f"{url}/", "web#4", TOKEN), timeout=30)
    assert never.status_code == 404
