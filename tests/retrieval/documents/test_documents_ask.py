"""Asking questions about a folder of real documents (the project's own Markdown docs beside a
PDF manual), with the real embedded model: the answer cites the file and page, through the
CLI, the HTTP API and the Python API exactly as the README prints it."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from documents_kit import write_guide_pdf
from searchain.cli import app as cli_app
from searchain.llm import make_llm
from searchain.retrieval.documents import index_documents
from searchain.server import Engine
from searchain.types import Trace
from serverkit import serving

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[3]
QUESTION = "What does error E42 on the Frobnicator display mean?"
FAST = ["-O", "searchain.r_max=2", "-O", "searchain.max_tokens=96"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def doc_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "docs", root / "project", ignore=shutil.ignore_patterns("*.png"))
    (root / "manuals").mkdir()
    write_guide_pdf(root / "manuals" / "guide.pdf")
    out = root.parent / (root.name + "-index")
    index_documents([root], out)
    return out


def _cites_the_manual_page(trace: Trace) -> bool:
    return any(
        p.source and p.source["path"] == "manuals/guide.pdf" and p.source["page"] == 3
        for p in trace.cited().values()
    )


def test_cli_answer_cites_file_and_page(doc_index: Path, tmp_path: Path) -> None:
    env = {"COLUMNS": "100", "SEARCHAIN_CACHE_DIR": str(tmp_path)}
    res = CliRunner().invoke(
        cli_app, ["ask", QUESTION, "--index", str(doc_index), "--threads", "1", *FAST], env=env
    )
    assert res.exit_code == 0, res.output
    refs = res.output.split("References", 1)[1]
    assert re.search(r"\[\d\] manuals/guide\.pdf p\. 3 · Troubleshooting", refs), res.output
    res = CliRunner().invoke(
        cli_app, ["ask", QUESTION, "--index", str(doc_index), "--json", *FAST], env=env
    )
    assert _cites_the_manual_page(Trace.from_dict(__import__("json").loads(res.stdout)))


def test_http_api_answer_carries_the_source(doc_index: Path, tmp_path: Path) -> None:
    from searchain.retrieval import BM25Index

    engine = Engine(
        make_llm("local", model="gemma-3-270m", cache=tmp_path / "calls.sqlite"),
        BM25Index.load(doc_index),
    )
    with serving(engine) as url:
        res = httpx.post(f"{url}/v1/ask", json={"question": QUESTION, "method": "searchain",
                                                "options": {"r_max": 2}}, timeout=300)  # fmt: skip
    assert res.status_code == 200, res.text
    body = res.json()
    pdf = [r for r in body["references"] if (r.get("source") or {}).get("path") ==
           "manuals/guide.pdf"]  # fmt: skip
    assert (
        pdf and pdf[0]["source"]["page"] == 3 and pdf[0]["source"]["heading"] == ["Troubleshooting"]
    )
    assert _cites_the_manual_page(Trace.from_dict(body))


def _readme_python() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("```python\n", 1)[1].split("```", 1)[0]


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def test_readme_python_api_runs_as_printed(tmp_path: Path, monkeypatch) -> None:
    code = _readme_python()
    assert len(code.strip().splitlines()) <= 7  # the import, then at most 6 lines
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("*.png"))
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    out = io.StringIO()
    with _cwd(tmp_path), contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue()
    assert (tmp_path / "docs-index" / "documents.json").is_file()
    assert printed.strip()  # the answer
    cited = re.findall(r"^\[\d+\] (\S+\.md)", printed, flags=re.M)
    # Every cited source names its Markdown file. (The tests' 270M model does not always cite:
    # under the default retriever since issue 60 it answers "resume" without a mark, which
    # post-hoc citation does not attach; the 1.5B that `ask` uses by default cites.)
    assert all((tmp_path / "docs" / name).is_file() for name in cited), printed


CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def test_viewer_shows_a_cited_passage_in_its_document(doc_index: Path, tmp_path: Path) -> None:
    """The reference names file, page and heading; "show in document" puts the passage
    between its neighbours in the file (GET /v1/passages/context)."""
    import playwright.sync_api as playwright_api

    from searchain.retrieval import BM25Index

    index = BM25Index.load(doc_index)
    engine = Engine(make_llm("local", model="gemma-3-270m", cache=tmp_path / "calls.sqlite"), index)
    with serving(engine) as url:
        ctx = httpx.get(f"{url}/v1/passages/context", params={"id": "manuals/guide.pdf#2"})
        assert ctx.status_code == 200, ctx.text
        body = ctx.json()
        assert body["passage"]["source"]["page"] == 3 and not body["after"]
        assert [p["source"]["page"] for p in body["before"]] == [2]
        missing = httpx.get(f"{url}/v1/passages/context", params={"id": "manuals/guide.pdf#9"})
        assert missing.status_code == 404
        if not CHROMIUM.exists():
            pytest.fail("chromium not found at /usr/bin/chromium: run scripts/install.sh test")
        with playwright_api.sync_playwright() as p:
            browser = p.chromium.launch_persistent_context(
                str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True,
                args=ARGS, viewport={"width": 1280, "height": 900},
            )  # fmt: skip
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url + "/")
            page.wait_for_selector("#method option[value=searchain]", state="attached")
            page.fill("#question", QUESTION)
            page.click("details.options summary")
            page.fill("#opt-r_max", "2")
            page.click("#ask")
            page.wait_for_selector("#answer", timeout=300_000)
            named = page.locator("#refs li", has_text="manuals/guide.pdf p. 3 · Troubleshooting")
            named.first.wait_for(timeout=30_000)  # the list is drawn after the answer
            # SearChain's reference n is node n's passage; a passage two nodes found is
            # listed once (the later mark's entry says "the same passage as [n]").
            ref = named.filter(has_not=page.locator(".pid", has_text="not cited"))
            assert ref.count() == 1, page.locator("#refs").inner_html()
            ref.locator("button.in-doc").click()
            doc = ref.locator(".doc-context")
            doc.wait_for(timeout=30_000)
            assert "quartz crystal" in doc.locator(".ctx-here mark").inner_text()
            assert "ninety days" in doc.locator(".ctx-dim").first.inner_text()  # page 2
            assert not errors, errors
            browser.close()
