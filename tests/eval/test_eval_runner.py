"""The evaluation runner: resume after kill -9, per-item failures, run-directory safety."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from searchain.eval.runner import (
    RESULTS,
    Item,
    RunConfigMismatch,
    pending,
    prepare_run_dir,
    read_results,
    run,
)
from searchain.llm import RetryPolicy
from searchain.llm.openai_backend import OpenAILLM
from searchain.methods import RetrieveRead
from searchain.methods.searchain.node_labels import LABEL_RULE
from searchain.retrieval import default_index
from servers import completion_body


def hotpot_file(data_dir: Path, tmp: Path, n: int) -> Path:
    out = tmp / "questions.jsonl"
    with (data_dir / "hotpotqa" / "dev_subsampled.jsonl").open() as f, out.open("w") as w:
        for _, line in zip(range(n), f, strict=False):
            d = json.loads(line)
            answers = [s for a in d["answers_objects"] for s in a["spans"]]
            w.write(json.dumps({"id": d["question_id"], "question": d["question_text"],
                                "answers": answers}) + "\n")  # fmt: skip
    return out


@pytest.mark.slow
def test_kill_9_then_resume_runs_every_item_exactly_once(data_dir: Path, tmp_path: Path) -> None:
    questions = hotpot_file(data_dir, tmp_path, 6)
    out = tmp_path / "run"
    env = {**os.environ, "SEARCHAIN_CACHE_DIR": str(tmp_path / "cache")}
    exe = str(Path(sys.executable).parent / "searchain")
    cmd = [exe, "eval", "--dataset", str(questions), "--methods", "retrieve-read",
           "--concurrency", "1", "--out", str(out), "--no-cache"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    results = out / RESULTS
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= 2:
            break
        assert proc.poll() is None, proc.stderr.read().decode()  # type: ignore[union-attr]
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = read_results(out)
    assert 2 <= len(before) < 6, "the kill must land mid-run"

    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    after = read_results(out)
    ids = [r["id"] for r in after]
    assert sorted(ids) == sorted({json.loads(x)["id"] for x in questions.read_text().splitlines()})
    assert len(ids) == len(set(ids)) == 6  # every item exactly once
    assert after[: len(before)] == before  # finished items were neither redone nor lost
    assert summary["skipped"] == len(before) and summary["done"] == 6 - len(before)
    assert all(r["status"] == "ok" and "cover_em" in r["metrics"] for r in after)

    # The manifest says what produced the numbers: config, seed, dataset hash, model, versions.
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["seed"] == 0 and manifest["config"]["methods"] == ["retrieve-read"]
    assert len(manifest["config"]["dataset_sha256"]) == 64
    assert manifest["label_rule"] == LABEL_RULE  # SearChain's node labels, named
    model = manifest["environment"]["model"]
    assert model["backend"] == "local" and model["path"].endswith(".gguf")
    assert model["bytes"] == Path(model["path"]).stat().st_size > 100_000_000
    from importlib.metadata import version

    packages = manifest["environment"]["packages"]
    assert packages["llama-cpp-python"] == version("llama-cpp-python")
    assert packages["bm25s"] == version("bm25s")


class PoisonServer:
    """An OpenAI-compatible server that answers, except for prompts naming one question."""

    def __init__(self, poison: str) -> None:
        outer = self
        self.calls = 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                outer.calls += 1
                bad = poison in body.get("prompt", "")
                payload = json.dumps(
                    {"error": {"message": "boom"}} if bad else completion_body("An answer [1].")
                ).encode()
                self.send_response(500 if bad else 200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_failing_item_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    server = PoisonServer("Kiss and Tell")
    try:
        llm = OpenAILLM("x", base_url=server.url, retry=RetryPolicy(3, 0.01, 0.05))
        method = RetrieveRead(llm, default_index(cache_dir=tmp_path / "cache"))
        items = [
            Item("a", "Who wrote Hamlet?"),
            Item("b", "Who portrayed Corliss Archer in Kiss and Tell?"),
            Item("c", "Where is the Eiffel Tower?"),
        ]
        out = prepare_run_dir(tmp_path / "run", {"test": 1})
        summary = run(items, {"retrieve-read": method.run}, out, concurrency=3)
    finally:
        server.close()
    assert (summary.done, summary.failed) == (2, 1)
    by_id = {r["id"]: r for r in read_results(out)}
    assert by_id["b"]["status"] == "error"
    assert "after 3 attempts" in by_id["b"]["error"] and "HTTP 500" in by_id["b"]["error"]
    assert by_id["a"]["status"] == by_id["c"]["status"] == "ok"


def test_retry_failed_answers_only_the_failed_items_again_and_keeps_every_attempt(
    tmp_path: Path,
) -> None:
    items = [Item("a", "Who wrote Hamlet?"), Item("b", "Who portrayed Corliss Archer?")]
    out = prepare_run_dir(tmp_path / "run", {"test": 2})
    for poison, retry in (("Corliss", False), ("Corliss", False), ("nothing", True)):
        server = PoisonServer(poison)  # the last one is the server back in order
        try:
            llm = OpenAILLM("x", base_url=server.url, retry=RetryPolicy(2, 0.01, 0.02))
            method = RetrieveRead(llm, default_index(cache_dir=tmp_path / "cache"))
            summary = run(items, {"rr": method.run}, out, concurrency=1, retry_failed=retry)
        finally:
            server.close()
        if poison == "Corliss" and summary.skipped:  # a plain re-run redoes nothing
            assert (summary.done, summary.failed, summary.skipped, server.calls) == (0, 0, 2, 0)
    assert (summary.done, summary.failed, summary.skipped) == (1, 0, 1)  # only b again
    attempts = read_results(out, latest=False)
    assert [(r["id"], r["status"]) for r in attempts] == [("a", "ok"), ("b", "error"), ("b", "ok")]
    latest = read_results(out)
    assert [(r["id"], r["status"]) for r in latest] == [("a", "ok"), ("b", "ok")]


def test_a_run_dir_of_another_configuration_is_refused(tmp_path: Path) -> None:
    prepare_run_dir(tmp_path, {"methods": ["searchain"], "limit": 10})
    prepare_run_dir(tmp_path, {"methods": ["searchain"], "limit": 10})  # same: fine
    with pytest.raises(RunConfigMismatch, match="differs in: methods"):
        prepare_run_dir(tmp_path, {"methods": ["cot"], "limit": 10})
    with pytest.raises(RunConfigMismatch, match=r"differs in: limit.*may grow, not shrink"):
        prepare_run_dir(tmp_path, {"methods": ["searchain"], "limit": 5})
    with pytest.raises(RunConfigMismatch, match="differs in: limit, methods"):
        prepare_run_dir(tmp_path, {"methods": ["cot"], "limit": 20})


def test_a_larger_limit_grows_the_run_and_keeps_its_items(tmp_path: Path) -> None:
    prepare_run_dir(tmp_path, {"methods": ["rr"], "limit": 1, "seed": 0})
    items = [Item("1", "q1"), Item("2", "q2")]
    assert run(items[:1], {"rr": _echo}, tmp_path).done == 1
    prepare_run_dir(tmp_path, {"methods": ["rr"], "limit": 2, "seed": 0})
    summary = run(items, {"rr": _echo}, tmp_path)
    assert (summary.skipped, summary.done) == (1, 1)  # only the new item is answered
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["config"]["limit"] == 2 and manifest["grown_from"][0]["limit"] == 1
    prepare_run_dir(tmp_path, {"methods": ["rr"], "limit": None, "seed": 0})  # all: grows too


def test_a_torn_last_line_is_ignored_and_repaired(tmp_path: Path) -> None:
    path = tmp_path / RESULTS
    path.write_text('{"method": "m", "id": "1", "status": "ok"}\n{"method": "m", "id": "2", "sta')
    assert [r["id"] for r in read_results(tmp_path)] == ["1"]
    summary = run([Item("1", "q1"), Item("2", "q2")], {"m": _echo}, tmp_path)
    assert (summary.skipped, summary.done) == (1, 1)
    lines = path.read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["1", "2"]


def _echo(question: str):
    from searchain.types import Trace

    return Trace(question=question, method="m", answer=question)


def test_items_run_one_after_another_with_all_their_methods(tmp_path: Path) -> None:
    items = [Item(str(i), f"q{i}") for i in range(3)]
    (tmp_path / RESULTS).write_text('{"method": "b", "id": "0", "status": "ok"}\n')
    todo, skipped = pending(items, ["a", "b"], tmp_path)
    assert skipped == 1
    assert [(m, it.id) for m, it in todo] == [("a", "0"), ("a", "1"), ("b", "1"), ("a", "2"),
                                              ("b", "2")]  # fmt: skip
    # Run one at a time and stopped after 3: every finished item has both methods.
    summary = run(items[:2], {"a": _echo, "b": _echo}, tmp_path, concurrency=1)
    assert (summary.done, summary.skipped) == (3, 1)
    assert sorted((r["method"], r["id"]) for r in read_results(tmp_path)) == [
        ("a", "0"), ("a", "1"), ("b", "0"), ("b", "1")]  # fmt: skip


def test_resuming_with_another_index_or_package_version_is_reported(tmp_path: Path) -> None:
    from searchain.eval.runner import environment_changes, index_fingerprint, runtime_environment
    from searchain.retrieval import BM25Index
    from searchain.types import Passage

    docs = [Passage("a", "Oslo is the capital of Norway."), Passage("b", "Bern is in Switzerland.")]
    first = BM25Index.build(docs, tmp_path / "i1", show_progress=False)
    again = BM25Index.build(docs, tmp_path / "i2", show_progress=False)
    other = BM25Index.build(docs[:1], tmp_path / "i3", show_progress=False)
    # Built twice from the same passages: the same fingerprint (the build time is left out).
    assert index_fingerprint(first) == index_fingerprint(again) is not None
    assert index_fingerprint(first) != index_fingerprint(other)
    # The same corpus file indexed into two directories: the same index wherever it lies.
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(f'{{"id": "{p.id}", "text": "{p.text}"}}\n' for p in docs))
    a = BM25Index.build(docs, tmp_path / "ia", corpus_path=corpus, show_progress=False)
    moved = tmp_path / "elsewhere.jsonl"
    corpus.rename(moved)
    b = BM25Index.build(docs, tmp_path / "ib", corpus_path=moved, show_progress=False)
    assert a.metadata["corpus"]["path"] != b.metadata["corpus"]["path"]
    assert index_fingerprint(a) == index_fingerprint(b)

    started = runtime_environment(None, first)
    prepare_run_dir(tmp_path / "run", {"x": 1}, started)
    assert environment_changes(tmp_path / "run", runtime_environment(None, again)) == []
    later = runtime_environment(None, other)
    later["packages"] = {**later["packages"], "bm25s": "0.0.1"}
    changes = environment_changes(tmp_path / "run", later)
    assert "the index differs from the one that started this run" in changes
    assert any(c.startswith("bm25s 0.0.1 (the run started with") for c in changes)
    assert environment_changes(tmp_path / "new", later) == []  # nothing started there


def test_a_query_planned_index_is_fingerprinted_by_its_base_and_plan(tmp_path: Path) -> None:
    from searchain.eval.runner import environment_changes, index_fingerprint, runtime_environment
    from searchain.retrieval import BM25Index
    from searchain.retrieval.query_plan import QueryPlanRetriever
    from searchain.types import Passage

    docs = [Passage("a", "Oslo is the capital of Norway."), Passage("b", "Bern is in Switzerland.")]
    index = BM25Index.build(docs, tmp_path / "i", show_progress=False)
    other = BM25Index.build(docs[:1], tmp_path / "o", show_progress=False)
    planned = index_fingerprint(QueryPlanRetriever(index))  # the default bm25+parts+bridge
    assert planned["base"] == index_fingerprint(index) is not None
    assert planned["query_plan"]["parts"] and planned["query_plan"]["bridge"]
    assert index_fingerprint(QueryPlanRetriever(other))["base"] != planned["base"]
    assert index_fingerprint(QueryPlanRetriever(index, bridge=False)) != planned

    # A run started before query-planned indexes were fingerprinted recorded none: resuming
    # it has nothing to compare, so it claims no change of index.
    started = runtime_environment(None, None) | {"index": None}
    prepare_run_dir(tmp_path / "run", {"x": 1}, started)
    now = runtime_environment(None, QueryPlanRetriever(index))
    assert now["index"] == planned
    assert environment_changes(tmp_path / "run", now) == []


def _git(repo: Path, *args: str) -> str:
    who = {f"GIT_{role}_{what}": "t@t" for role in ("AUTHOR", "COMMITTER") for what in
           ("NAME", "EMAIL")}  # fmt: skip
    env = {**os.environ, **who}
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env, check=True)  # fmt: skip
    return done.stdout.strip()


def test_a_run_records_the_code_that_made_it_and_a_resume_says_when_it_changed(
    tmp_path: Path,
) -> None:
    from searchain.eval.run_environment import source_revision
    from searchain.eval.runner import environment_changes

    repo = tmp_path / "checkout"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "method.py").write_text("THETA = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "code")
    first = source_revision(repo / "src")
    assert first["git_commit"] == _git(repo, "rev-parse", "HEAD")
    assert first["uncommitted_code"] is False and "uncommitted_code_sha256" not in first
    prepare_run_dir(tmp_path / "run", {"x": 1}, {"source": first})

    # Committing results moves HEAD but not the code: nothing to say on resume.
    (repo / "results.jsonl").write_text("{}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "partial results")
    moved = source_revision(repo / "src")
    assert moved["git_commit"] != first["git_commit"]
    assert moved["code_tree"] == first["code_tree"]
    assert environment_changes(tmp_path / "run", {"source": moved}) == []

    # An uncommitted edit of the code is the code changing, and is said.
    (repo / "src" / "method.py").write_text("THETA = 2\n")
    edited = source_revision(repo / "src")
    assert edited["uncommitted_code"] is True and len(edited["uncommitted_code_sha256"]) == 64
    assert environment_changes(tmp_path / "run", {"source": edited}) == [
        f"the code is at commit {moved['git_commit'][:12]} with uncommitted changes "
        f"(the run started at commit {first['git_commit'][:12]})"
    ]
    # Outside any checkout (an installed package) it says so instead of a commit.
    (tmp_path / "plain").mkdir()
    assert source_revision(tmp_path / "plain") == {
        "git_commit": None, "why": "not run from a git checkout"}  # fmt: skip


def test_a_run_records_the_commit_of_the_code_that_made_it(tmp_path: Path) -> None:
    from searchain.eval.runner import runtime_environment

    source = runtime_environment()["source"]
    root = Path(__file__).resolve().parents[2]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                          text=True)  # fmt: skip
    if head.returncode != 0:  # an unpacked source archive, or git refuses: it says why
        assert source["git_commit"] is None and source["why"]
        return
    assert source["git_commit"] == head.stdout.strip()
    tree = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD:src"], capture_output=True,
                          text=True)  # fmt: skip
    assert source["code_tree"] == tree.stdout.strip()  # the tree of src/, this package's code
