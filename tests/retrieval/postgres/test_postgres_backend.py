"""PostgreSQL + pgvector as the index, against a real server (postgres_kit): the same
BM25 ranking as the in-process index, incremental and transactional folder indexing, a
kill -9 mid-file, readers during a write, the password kept out of every output, and
hostile collection names refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

import postgres_kit
from documents_kit import docs_with_manuals
from postgres_kit import PASSWORD, collection
from searchain.api import index_folder_report, open_index
from searchain.cli import app as cli_app
from searchain.redaction import redact_obj
from searchain.retrieval import BM25Index
from searchain.retrieval.demo import demo_corpus_path
from searchain.retrieval.postgres import (
    PostgresIndex,
    PostgresTargetError,
    index_corpus,
    parse_target,
)

pg_url = postgres_kit.pg_url  # the session's PostgreSQL (fixture)
CLI = [sys.executable, "-m", "searchain.cli"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Real documents: the project's Markdown docs, a PDF manual and a Word file."""
    return docs_with_manuals(tmp_path)


def _consistent(url: str) -> dict[str, int]:
    """Checks the stored statistics against the rows: counts, lengths, df, no duplicate."""
    target = parse_target(url)
    with psycopg.connect(target.dsn) as conn:
        cid, n_docs, total = conn.execute(
            "SELECT id, n_docs, total_len FROM searchain.collections WHERE name = %s",
            (target.collection,),
        ).fetchone()
        count, length, distinct = conn.execute(
            "SELECT count(*), coalesce(sum(length), 0), count(DISTINCT id) "
            "FROM searchain.passages WHERE collection = %s",
            (cid,),
        ).fetchone()
        wrong_df = conn.execute(
            "SELECT count(*) FROM searchain.terms t FULL JOIN (SELECT term, count(*) AS n "
            "FROM searchain.postings WHERE collection = %(c)s GROUP BY term) x "
            "ON x.term = t.term AND t.collection = %(c)s "
            "WHERE (t.collection = %(c)s OR t.collection IS NULL) AND t.df IS DISTINCT FROM x.n",
            {"c": cid},
        ).fetchone()[0]
    assert (n_docs, total) == (count, length) and distinct == count and wrong_df == 0
    return {"passages": count}


def test_lexical_ranking_is_the_in_process_bm25s(pg_url: str, hotpot, tmp_path: Path) -> None:
    url = collection(pg_url, "demo")
    corpus = demo_corpus_path()
    stats = index_corpus(corpus, parse_target(url), fmt="jsonl", max_words=None)
    local = BM25Index.from_corpus(
        corpus, tmp_path / "bm25", fmt="jsonl", max_words=None, show_progress=False
    )
    assert stats["passages"] == len(local) == len(PostgresIndex(url))
    index = PostgresIndex(url)
    questions = [item["question_text"] for item in hotpot[:60]]
    same = 0
    for q in questions:
        ours, theirs = index.search(q, k=5), local.search(q, k=5)
        same += [p.id for p in ours] == [p.id for p in theirs]
        # bm25s sums float32 scores, SQL float8: equal to 5 digits, and the order of two
        # passages whose scores differ in the 7th digit may swap.
        assert [round(p.score, 3) for p in ours] == [round(p.score, 3) for p in theirs]
    assert same >= 0.95 * len(questions), same
    # Indexing the same corpus again changes nothing (every batch is unchanged).
    again = index_corpus(corpus, parse_target(url), fmt="jsonl", max_words=None)
    assert again["batches_written"] == 0 and _consistent(url)["passages"] == len(local)


def test_folder_incremental_one_file_reread(pg_url: str, folder: Path) -> None:
    url = collection(pg_url, "folder")
    index, report = index_folder_report(folder, url)
    assert isinstance(index, PostgresIndex) and not report.skipped
    hit = index.search("error E42 quartz crystal", k=1)[0]
    assert hit.locator() == "manuals/guide.pdf p. 3 · Troubleshooting"
    before = _consistent(url)["passages"]
    _, again = index_folder_report(folder, url)
    assert again.read == [] and len(again.unchanged) == len(report.added)
    note = folder / "project" / "retrieval.md"
    note.write_text(note.read_text() + "\n\nThe zanzibar quokka rule: replicas answer reads.\n")
    _, changed = index_folder_report(folder, url)
    assert changed.read == ["project/retrieval.md"] and changed.changed == changed.read
    assert index.search("zanzibar quokka", k=1)[0].source["path"] == "project/retrieval.md"
    (folder / "manuals" / "warranty.docx").unlink()
    _, removed = index_folder_report(folder, url)
    assert removed.removed == ["manuals/warranty.docx"] and removed.read == []
    assert not [p for p in index.search("warranty thirty-one months", k=5) if "docx" in p.id]
    assert _consistent(url)["passages"] < before + 5


def test_kill_9_mid_file_then_rerun(pg_url: str, tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(12):  # big files: each transaction lasts long enough to be caught in
        words = " ".join(f"word{j % 997} topic{i} line{j}" for j in range(40_000))
        (root / f"part{i:02d}.txt").write_text(words)
    url = collection(pg_url, "killed") + "&application_name=searchain-kill-test"
    proc = subprocess.Popen([*CLI, "index", str(root), "--out", url, "--json"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    admin = parse_target(pg_url).dsn
    deadline = time.monotonic() + 240
    with psycopg.connect(admin, autocommit=True) as conn:
        while time.monotonic() < deadline and proc.poll() is None:
            writing = conn.execute(  # a transaction that has written rows and not committed
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                "'searchain-kill-test' AND backend_xid IS NOT NULL"
            ).fetchone()[0]
            done = conn.execute(
                "SELECT count(*) FROM searchain.units u JOIN searchain.collections c "
                "ON c.id = u.collection WHERE c.name = 'killed'"
            ).fetchone()[0] if conn.execute(
                "SELECT to_regclass('searchain.units')").fetchone()[0] else 0  # fmt: skip
            if writing and done >= 2:
                break
            time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    committed = _consistent(url)["passages"]
    assert committed > 0
    res = subprocess.run([*CLI, "index", str(root), "--out", url, "--json"],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    files = json.loads(res.stdout)["files"]
    assert len(files["unchanged"]) >= 2 and len(files["read"]) == 12 - len(files["unchanged"])
    total = _consistent(url)["passages"]
    fresh = collection(pg_url, "fresh")
    subprocess.run([*CLI, "index", str(root), "--out", fresh, "--json"], check=True,
                   capture_output=True, timeout=600)  # fmt: skip
    assert total == _consistent(fresh)["passages"] > committed
    a, b = PostgresIndex(url), PostgresIndex(fresh)
    for q in ("word5 topic3", "line39999 topic11", "topic0 word996"):
        assert [p.id for p in a.search(q, 10)] == [p.id for p in b.search(q, 10)]


def test_readers_never_see_half_a_file(pg_url: str, tmp_path: Path) -> None:
    url = collection(pg_url, "concurrent")
    root = tmp_path / "flip"
    root.mkdir()
    versions = [
        "\n\n".join(f"Zebra alpha paragraph {i}. " + "filler " * 120 for i in range(3)),
        "\n\n".join(f"Zebra beta paragraph {i}. " + "padding " * 120 for i in range(5)),
    ]
    (root / "flip.md").write_text(versions[0])
    (root / "other.md").write_text("An unrelated note about giraffes.")
    index_folder_report(root, url)
    seen: list[tuple[str, ...]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        index = PostgresIndex(url)  # its own connection: a second serving process's view
        try:
            while not stop.is_set():
                kinds = {p.text.split()[1] for p in index.search("zebra", k=50)}
                n = len(index.search("zebra", k=50))
                seen.append(tuple(sorted(kinds)))
                assert kinds in ({"alpha"}, {"beta"}) and n in (3, 5), (kinds, n)
        except BaseException as e:
            errors.append(e)
        finally:
            index.close()

    readers = [threading.Thread(target=read) for _ in range(2)]
    for t in readers:
        t.start()
    for i in range(8):
        (root / "flip.md").write_text(versions[(i + 1) % 2])
        _, report = index_folder_report(root, url)
        assert report.read == ["flip.md"]
    stop.set()
    for t in readers:
        t.join(timeout=60)
    assert not errors, errors[0]
    assert {("alpha",), ("beta",)} <= set(seen)
    _consistent(url)


def test_password_never_printed_traced_or_stored(pg_url: str, folder: Path) -> None:
    url = collection(pg_url, "secret")
    runner = CliRunner()
    outputs = []
    for args in (
        ["index", str(folder), "--out", url],
        ["index", str(folder), "--out", url, "--json"],
        ["search", "error E42 quartz", "--index", url, "--json"],
        ["search", "error E42 quartz", "--index", url],
        ["search", "x", "--index", url.replace("collection=secret", "collection=absent")],
        ["index", str(folder), "--out", url.replace("@/", "@127.0.0.1:1/")],
    ):
        res = runner.invoke(cli_app, args, env={"COLUMNS": "200"})
        outputs.append(res.output + (res.stderr if res.stderr_bytes else ""))
    assert "guide.pdf" in outputs[2] and "no collection 'absent'" in outputs[4]
    assert "cannot connect" in outputs[5] and "***" in outputs[5]
    index = open_index(url)
    outputs += [repr(index), str(index.target), index.target.display, json.dumps(index.metadata)]
    # What a run manifest or trace records of the spec passes through the redaction helper.
    outputs.append(json.dumps(redact_obj({"index": url, "dense_index": url + "&password=x"})))
    with psycopg.connect(parse_target(pg_url).dsn) as conn:
        stored = conn.execute(
            "SELECT string_agg(settings::text || manifest::text, '') FROM searchain.collections"
        ).fetchone()[0]
        stored += conn.execute(
            "SELECT string_agg(entry::text, '') FROM searchain.units"
        ).fetchone()[0]
    for text in [*outputs, stored]:
        assert PASSWORD not in text


@pytest.mark.parametrize(
    "name",
    ["x'; DROP TABLE searchain.passages; --", "Docs", "a b", "../etc", "", "é", "x" * 64, "1st"],
)
def test_hostile_collection_name_refused(pg_url: str, tmp_path: Path, name: str) -> None:
    from urllib.parse import quote

    (tmp_path / "a.md").write_text("A note.")
    # The table exists before the hostile name comes (whatever ran before), so its survival
    # below says the name did nothing.
    made = CliRunner().invoke(
        cli_app, ["index", str(tmp_path / "a.md"), "--out", f"{pg_url}&collection=guard"]
    )
    assert made.exit_code == 0, made.output
    with pytest.raises(PostgresTargetError, match="invalid collection name"):
        parse_target(f"{pg_url}&collection={quote(name)}", collection=name or None) if name else (
            parse_target(pg_url, collection="-x")
        )
    res = CliRunner().invoke(
        cli_app, ["index", str(tmp_path / "a.md"), "--out", f"{pg_url}&collection={quote(name)}"]
    )
    if name:
        assert res.exit_code == 1 and "invalid collection name" in res.output
    assert PASSWORD not in res.output
    with psycopg.connect(parse_target(pg_url).dsn) as conn:
        assert conn.execute("SELECT to_regclass('searchain.passages')").fetchone()[0]
