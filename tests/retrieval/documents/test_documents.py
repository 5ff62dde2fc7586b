"""Indexing folders of real documents: sources kept, incremental, hostile files bounded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from documents_kit import (
    docs_with_manuals,
    hang,
    write_docx,
    write_docx_bomb,
    write_guide_pdf,
    write_pdf_bomb,
)
from searchain.retrieval import BM25Index
from searchain.retrieval.documents import DocumentIndexError, index_documents
from searchain.retrieval.documents.sandbox import Failure, run_sandboxed

CLI = [sys.executable, "-m", "searchain.cli"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The project's own docs (Markdown) beside a real PDF manual and a Word file."""
    return docs_with_manuals(tmp_path)


def test_documents_keep_file_page_and_heading(folder: Path, tmp_path: Path) -> None:
    index, report = index_documents([folder], tmp_path / "idx")
    n_md = len(list((folder / "project").glob("*.md")))
    assert len(report.added) == n_md + 2 and not report.skipped
    hit = index.search("error E42 quartz crystal", k=1)[0]
    assert hit.source == {
        "path": "manuals/guide.pdf",
        "page": 3,
        "heading": ["Troubleshooting"],
        "start": hit.source["start"],
        "end": hit.source["end"],
    }
    assert hit.locator() == "manuals/guide.pdf p. 3 · Troubleshooting"
    assert hit.title.startswith("Frobnicator Guide")
    word = index.search("warranty months", k=1)[0]
    assert word.source["path"] == "manuals/warranty.docx"
    assert word.source["heading"] == ["Warranty"] and "thirty-one" in word.text
    md = index.search("bootstrap confidence intervals paired", k=3)
    assert any(p.source["path"].startswith("project/") and p.source.get("heading") for p in md)
    # offsets point into the Markdown file itself
    p = next(p for p in md if p.source["path"].endswith(".md"))
    raw = (folder / p.source["path"]).read_text()
    assert raw[p.source["start"] : p.source["end"]].split()[:3] == p.text.split()[:3]
    # the source survives the index's reload
    again = BM25Index.load(tmp_path / "idx").search("error E42 quartz crystal", k=1)[0]
    assert again.source == hit.source


def test_reindex_reads_only_what_changed(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "idx"
    index_documents([folder], out)
    _, same = index_documents([folder], out)
    assert same.read == [] and not same.added and not same.changed and same.unchanged
    touched = folder / "project" / "evaluation.md"
    touched.write_text(touched.read_text() + "\n\nThe zanzibar flag resumes nothing.\n")
    (folder / "project" / "benchmarks.md").unlink()
    index, report = index_documents([folder], out)
    assert report.changed == ["project/evaluation.md"]
    assert report.read == ["project/evaluation.md"]
    assert report.removed == ["project/benchmarks.md"]
    assert index.search("zanzibar flag", k=1)[0].source["path"] == "project/evaluation.md"
    assert not any(
        p.source["path"] == "project/benchmarks.md"
        for p in index.search("benchmark bench ratio baseline", k=20)
    )
    # the unchanged files' passages came from the old index, identical to a fresh build
    fresh, _ = index_documents([folder], tmp_path / "fresh")
    assert [p.to_dict() for p in index.rows(0, len(index))] == [
        p.to_dict() for p in fresh.rows(0, len(fresh))
    ]
    # another splitting reads everything again
    _, resplit = index_documents([folder], out, max_words=50)
    assert len(resplit.read) == len(resplit.changed) + len(resplit.added) > 10


def test_hostile_files_are_skipped_named_and_nothing_else_lost(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    write_guide_pdf(root / "guide.pdf")
    (root / "truncated.pdf").write_bytes((root / "guide.pdf").read_bytes()[:400])
    write_guide_pdf(root / "locked.pdf", password="s3cret")
    (root / "firmware.txt").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" * 100)
    write_docx_bomb(root / "bomb.docx")
    write_pdf_bomb(root / "stream-bomb.pdf")
    (root / "huge.md").write_text("word " * 300_000)  # 1.5 MB, over the 1.3 MB limit below
    outside = tmp_path / "secret.md"
    outside.write_text("The launch code is 0000.")
    (root / "escape.md").symlink_to(outside)
    (root / "sub").mkdir()
    (root / "sub" / "loop").symlink_to(root)
    write_docx(root / "sub" / "ok.docx")
    t0 = time.monotonic()
    index, report = index_documents([root], tmp_path / "idx", max_file_mb=1.3, timeout_s=30)
    assert time.monotonic() - t0 < 120
    why = report.skipped
    assert "encrypted" in why["locked.pdf"]
    assert "not a readable PDF" in why["truncated.pdf"]
    assert "binary" in why["firmware.txt"]
    assert "decompression bomb" in why["bomb.docx"]
    assert "stream-bomb.pdf" in why  # bounded: no text within pypdf's inflate limit
    assert "too large" in why["huge.md"]
    assert "out of the indexed folder" in why["escape.md"]
    assert "already walked" in why["sub/loop/"]
    assert sorted(report.added) == sorted(
        [
            "guide.pdf",
            "truncated.pdf",
            "locked.pdf",
            "firmware.txt",
            "bomb.docx",
            "stream-bomb.pdf",
            "sub/ok.docx",
        ]
    )
    paths = {p.source["path"] for p in index.rows(0, len(index))}
    assert paths == {"guide.pdf", "sub/ok.docx"}  # nothing else lost, nothing leaked
    assert not index.search("launch code", k=3)
    with pytest.raises(DocumentIndexError, match="--strict"):
        index_documents([root], tmp_path / "strict", max_file_mb=1.3, strict=True)
    assert not (tmp_path / "strict").exists()


def test_sandbox_bounds_time_memory_and_crashes() -> None:
    jobs = ["a", "hang", "b", "crash", "hog", "c"]
    t0 = time.monotonic()
    results = list(run_sandboxed(hang, jobs, workers=2, timeout_s=3, memory_mb=512))
    assert time.monotonic() - t0 < 30
    assert [j for j, _ in results] == jobs  # in order, whatever finished first
    got = dict(results)
    assert got["a"] == "parsed a" and got["b"] == "parsed b" and got["c"] == "parsed c"
    assert isinstance(got["hang"], Failure) and "longer than 3 s" in got["hang"].reason
    assert isinstance(got["crash"], Failure) and "crashed" in got["crash"].reason
    assert isinstance(got["hog"], Failure) and "512 MB" in got["hog"].reason


def test_a_killed_build_leaves_the_previous_index_working(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(1500):
        (root / f"note{i:04}.md").write_text(f"# Note {i}\n\nNote {i} mentions item-{i}.\n")
    out = tmp_path / "idx"
    index_documents([root / "note0001.md"], out)
    before = [p.to_dict() for p in BM25Index.load(out).search("item-1", k=3)]
    proc = subprocess.Popen(
        [*CLI, "index", str(root), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".idx.tmp-*")) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert list(tmp_path.glob(".idx.tmp-*")), "the build never started writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    after = BM25Index.load(out)
    assert len(after) == 1
    assert [p.to_dict() for p in after.search("item-1", k=3)] == before


def test_tables_html_and_rst(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path / "mixed"
    root.mkdir()
    (root / "faq.csv").write_text(
        'id,question,answer\nq1,Opening hours?,"Open 9 to 5, '
        'closed on the solstice."\nq2,Parking?,Behind the mill.\n'
    )
    pq.write_table(
        pa.table(
            {
                "body": ["The ferry leaves at dawn.", "The ferry returns at dusk."],
                "name": ["Ferry out", "Ferry back"],
            }
        ),
        root / "ferry.parquet",
    )
    (root / "page.html").write_text(
        "<html><head><title>Lighthouse</title><script>var x='hidden script';</script></head>"
        "<body><nav>Home | About</nav><h1>Lighthouse</h1><h2>Keepers</h2>"
        "<p>The last keeper left in 1987.</p></body></html>"
    )
    (root / "manual.rst").write_text(
        "=====\nPumps\n=====\n\nIntro text.\n\nPriming\n-------\n\nPrime the pump with "
        "two litres of water.\n"
    )
    idx, report = index_documents([root], tmp_path / "idx", columns={"text": "answer"})
    assert "ferry.parquet" in report.skipped and "body" in report.skipped["ferry.parquet"]
    hit = idx.search("solstice", k=1)[0]
    assert hit.id == "q1" and hit.source == {
        "path": "faq.csv",
        "row": 1,
        "start": 0,
        "end": len(hit.text),
    }
    html = idx.search("keeper 1987", k=1)[0]
    assert html.source["heading"] == ["Lighthouse", "Keepers"] and "script" not in html.text
    assert not idx.search("Home About hidden", k=1) or "nav" not in idx.search("Home", k=1)[0].text
    rst = idx.search("prime pump litres", k=1)[0]
    assert rst.source["heading"] == ["Pumps", "Priming"] and rst.title == "Pumps › Priming"
    idx2, _ = index_documents(
        [root / "ferry.parquet"], tmp_path / "idx2", columns={"text": "body", "title": "name"}
    )
    ferry = idx2.search("dusk", k=1)[0]
    assert ferry.title == "Ferry back" and ferry.source["row"] == 2


def test_cli_indexes_a_folder_and_a_title_sentences_corpus(tmp_path: Path, folder: Path) -> None:
    env = {**os.environ, "COLUMNS": "80"}
    run = subprocess.run(
        [*CLI, "index", str(folder), "--out", str(tmp_path / "idx"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    out = json.loads(run.stdout)
    assert out["files"]["passages"] == out["passages"] > 100 and not out["files"]["skipped"]
    assert "it/s" not in run.stderr and "DEBUG" not in run.stderr  # no third-party bars or logs
    found = subprocess.run(
        [
            *CLI,
            "search",
            "quartz crystal E42",
            "--index",
            str(tmp_path / "idx"),
            "-k",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert json.loads(found.stdout)[0]["source"]["page"] == 3
    corpus = tmp_path / "hippo.json"
    corpus.write_text(
        json.dumps(
            {
                "Abba": ["Abba is a Swedish band.", " It won in 1974."],
                "Bjorn": ["Bjorn was a member of Abba."],
            },
            indent=2,
        )
    )
    run = subprocess.run(
        [*CLI, "index", str(corpus), "--out", str(tmp_path / "hippo")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    hit = BM25Index.load(tmp_path / "hippo").search("Swedish band 1974", k=1)[0]
    assert hit.id == "Abba" and hit.text == "Abba is a Swedish band. It won in 1974."
    weird = tmp_path / "weird.jsonl"
    weird.write_text("this is not json\n")
    run = subprocess.run(
        [*CLI, "index", str(weird), "--out", str(tmp_path / "w")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 1 and "name it with --format" in run.stderr


def test_building_an_index_prints_no_log_line_of_bm25s(tmp_path: Path) -> None:
    """bm25s sets its logger to DEBUG; once a CLI configures logging (``ask`` does), its
    "Building index from IDs" reached the terminal before the first answer."""
    import logging

    from searchain.types import Passage

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logging.getLogger().addHandler(handler)
    try:
        BM25Index.build([Passage("a", "alpha beta"), Passage("b", "gamma")], tmp_path / "i",
                        show_progress=False)  # fmt: skip
    finally:
        logging.getLogger().removeHandler(handler)
    assert not [r.getMessage() for r in records if r.name.startswith("bm25s")]


def test_a_file_skipped_for_time_is_tried_again(tmp_path: Path) -> None:
    """A timeout says nothing about the file (the machine may have been busy): the next build
    reads it again; a file skipped for what it is (binary) stays skipped until it changes."""
    from searchain.retrieval.documents import MANIFEST

    root = tmp_path / "docs"
    root.mkdir()
    write_guide_pdf(root / "guide.pdf")
    (root / "blob.txt").write_bytes(b"\x00\x01" * 100)
    (root / "note.md").write_text("# Note\n\nA short note.\n")
    out = tmp_path / "idx"
    _, first = index_documents([root], out)
    assert "binary" in first.skipped["blob.txt"] and "guide.pdf" not in first.skipped
    # the record a build leaves when the PDF's parser ran out of time (sandbox.py's words)
    manifest = json.loads((out / MANIFEST).read_text())
    entry = manifest["files"]["guide.pdf"]
    del entry["rows"]
    entry["skipped"] = "took longer than 60 s to parse"
    (out / MANIFEST).write_text(json.dumps(manifest))
    index, again = index_documents([root], out)
    assert again.read == ["guide.pdf"] and "guide.pdf" not in again.skipped
    assert "blob.txt" in again.unchanged and "binary" in again.skipped["blob.txt"]
    assert index.search("quartz crystal", k=1)[0].source["path"] == "guide.pdf"


def test_index_help_shows_the_formats_as_written() -> None:
    """Rich reads "[sentences]" as markup and dropped it from the help."""
    from typer.testing import CliRunner

    from searchain.cli import app

    out = CliRunner().invoke(app, ["index", "--help"], env={"COLUMNS": "300"}).output
    assert "{title: [sentences]} JSON" in out and ".pdf .docx" in out


def test_dense_index_of_a_folder_keeps_sources(tmp_path: Path) -> None:
    """``--kind dense`` over a folder: embeddings of the same passages, same sources."""
    root = tmp_path / "docs"
    root.mkdir()
    write_guide_pdf(root / "guide.pdf")
    write_docx(root / "warranty.docx")
    (root / "blob.txt").write_bytes(b"\x00" * 64)
    args = ["index", str(root), "--out", str(tmp_path / "dense"), "--kind", "dense", "--json"]
    out = subprocess.run([*CLI, *args], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["kind"] == "dense" and report["passages"] == 5
    assert "binary" in report["files"]["skipped"]["blob.txt"]
    from searchain.retrieval import DenseIndex

    hit = DenseIndex.load(tmp_path / "dense").search("the crystal is too cold", k=1)[0]
    assert hit.source is not None and hit.source["path"] == "guide.pdf"
    assert hit.source["page"] == 3
