"""LLM-URL end to end through the real local mirror: fast tests replay recorded real model
calls (tests/data/recordings/llm_url.jsonl), through the library and the HTTP service; slow
ones run the embedded model itself, through the library and the CLI (direct-retrieval,
SearChain and an evaluation of MuSiQue with --retriever llm-url)."""

from __future__ import annotations

import contextvars
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from recordings import RECORD, reader_calls, recorded_llm
from searchain.llm.local import LocalLLM
from searchain.methods import RetrieveRead
from searchain.methods.catalog import build_method
from searchain.retrieval.demo import demo_corpus_path
from searchain.retrieval.llm_url import (
    FetchConfig,
    LLMURLConfig,
    LLMURLRetriever,
    MirrorCorpus,
    MirrorServer,
    with_retrieval_reports,
)
from searchain.retrieval.llm_url.evaluation import retrieval_metrics
from searchain.retrieval.llm_url.generate import load_demos
from searchain.types import Trace

# Questions for which the embedded model names pages the pooled corpus has (5: Lewiston
# Maineiacs; 6: Annie Morton, Terry Richardson) -- so fetching, ranking and reading all run.
QUESTIONS = (5, 6)


@pytest.fixture(scope="module")
def mirror():
    with MirrorServer(MirrorCorpus.from_files([demo_corpus_path()])) as server:
        yield server


def retriever(llm, mirror: MirrorServer, cache: Path, m: int = 5) -> LLMURLRetriever:
    fetch = FetchConfig(base_url=mirror.url, cache_dir=str(cache), retries=0)
    return LLMURLRetriever(llm, LLMURLConfig(m=m, keep_documents=True, fetch=fetch))


def check(trace: Trace, mirror: MirrorServer, m: int = 5) -> dict:
    [report] = trace.meta["retrieval"]
    urls = report["urls"]
    assert 1 <= len([u for u in urls if u.get("url")]) <= m
    for u in urls:
        if u["status"] in ("fetched", "not_found"):
            # The verdict is the mirror's: fetched iff it has the title (perhaps via redirect).
            assert (mirror.corpus.resolve(u["title"]) is not None) == (u["status"] == "fetched")
    fetched = [u for u in urls if u["status"] == "fetched"]
    assert report["valid_urls"] == len(fetched) >= 1
    assert report["valid_url_share"] == len(fetched) / m
    titles = {d["title"] for d in report["documents"]}
    assert titles == {u["page_title"] for u in fetched}
    assert trace.references and len(trace.references) <= 5
    for p in trace.references:
        assert p.title in titles and p.id.startswith(p.title + "#")
        page = " ".join(mirror.corpus.pages[p.title])
        assert " ".join(p.text.split()) in " ".join(page.split())  # clean text, no markup
    scores = [p.score for p in trace.references]
    assert scores == sorted(scores, reverse=True)
    assert trace.answer
    # The URL generation's usage is in the trace: 2 LLM calls per question (and the reader's,
    # where the reply named no short answer)
    assert trace.usage.llm_calls + trace.usage.cached_calls == 2 + reader_calls(trace)
    assert Trace.from_dict(json.loads(json.dumps(trace.to_dict()))) == trace
    return report


def test_retrieve_read_with_llm_url_replayed(mirror, hotpot, tmp_path: Path) -> None:
    llm = recorded_llm("llm_url")
    method = with_retrieval_reports(RetrieveRead(llm, retriever(llm, mirror, tmp_path), k=5).run)
    for i in QUESTIONS:
        trace = method(hotpot[i]["question_text"])
        report = check(trace, mirror)
        if not RECORD:
            assert trace.usage.cached_calls == 2 + reader_calls(trace)
            assert trace.usage.llm_calls == 0
        gold = [s for a in hotpot[i]["answers_objects"] for s in a["spans"]]
        metrics = retrieval_metrics(trace, gold)
        assert set(metrics) >= {"passage_recall@1", "doc_recall@1", "valid_url_share"}
        assert "doc_recall@10" not in metrics  # asked for 5: no "@10" (issue 29 L2)
        assert metrics["valid_url_share"] == report["valid_url_share"]


def test_service_answer_carries_the_retrieval_report(mirror, hotpot, tmp_path: Path) -> None:
    """`searchain serve --retriever llm-url`: the trace the service returns has the URLs and
    their fates in meta.retrieval and the URL generation's call in its usage, and the URL
    generation goes through the service's cancellable LLM (a timed-out answer stops it)."""
    try:
        import httpx2 as httpx
    except ImportError:  # pragma: no cover
        import httpx  # type: ignore[no-redef]

    from searchain.server import Engine
    from searchain.server.engine import _CANCEL, Cancelled
    from serverkit import serving

    llm = recorded_llm("llm_url")
    engine = Engine(llm, retriever(llm, mirror, tmp_path), max_concurrent=1)
    assert engine.retriever.llm is engine.llm  # type: ignore[union-attr]
    question = hotpot[6]["question_text"]
    with serving(engine, runs_dir=None) as url:
        res = httpx.post(f"{url}/v1/ask", json={"question": question, "method": "retrieve-read",
                                                "options": {"k": 5}}, timeout=120)  # fmt: skip
    assert res.status_code == 200, res.text
    trace = Trace.from_dict(res.json())
    report = check(trace, mirror)
    assert report["query"] == question and report["shots"] == 10
    # The same answer as on the command line / in the library (the recorded calls replayed).
    local = with_retrieval_reports(RetrieveRead(llm, retriever(llm, mirror, tmp_path), k=5).run)
    assert trace.meta["retrieval"][0]["completion"] == local(question).meta["retrieval"][0][
        "completion"]  # fmt: skip
    # A cancelled request: the retriever's next LLM call raises instead of running.
    cancel = threading.Event()
    cancel.set()
    calls = llm.usage.llm_calls + llm.usage.cached_calls

    def cancelled_search() -> None:
        _CANCEL.set(cancel)
        engine.retriever.search(question, 5)  # type: ignore[union-attr]

    with pytest.raises(Cancelled):
        contextvars.copy_context().run(cancelled_search)
    assert llm.usage.llm_calls + llm.usage.cached_calls == calls


@pytest.mark.slow
def test_recordings_match_the_real_model(mirror, hotpot, tmp_path: Path) -> None:
    """The embedded model, run now, writes what the recordings say (greedy decoding)."""
    real = LocalLLM()
    replay = recorded_llm("llm_url")
    for i in QUESTIONS:
        q = hotpot[i]["question_text"]
        live = with_retrieval_reports(
            RetrieveRead(real, retriever(real, mirror, tmp_path / "a"), k=5).run
        )(q)
        again = with_retrieval_reports(
            RetrieveRead(replay, retriever(replay, mirror, tmp_path / "b"), k=5).run
        )(q)
        check(live, mirror)
        assert live.usage.llm_calls == 2 + reader_calls(live)
        assert live.meta["retrieval"][0]["completion"] == again.meta["retrieval"][0]["completion"]
        assert live.answer == again.answer
        assert [p.id for p in live.references] == [p.id for p in again.references]


@pytest.mark.slow
def test_searchain_with_llm_url(mirror, hotpot, tmp_path: Path) -> None:
    llm = LocalLLM()
    r = retriever(llm, mirror, tmp_path, m=3)
    method = build_method("searchain", llm, r, r_max=1)
    trace = with_retrieval_reports(method.run)(hotpot[6]["question_text"])
    reports = trace.meta["retrieval"]
    assert reports, "SearChain queried the LLM-URL retriever"
    # One report per IR query, each for the query SearChain asked.
    queries = [n.query for n in trace.nodes]
    assert all(rep["query"] in queries for rep in reports)
    for node in trace.nodes:
        for p in node.passages:
            assert mirror.corpus.resolve(p.title) is not None
    assert trace.usage.llm_calls > len(reports)


@pytest.mark.slow
def test_cli_direct_retrieval_and_eval_with_llm_url(mirror, hotpot, tmp_path: Path) -> None:
    env = {**os.environ, "SEARCHAIN_CACHE_DIR": str(tmp_path / "cache"), "SEARCHAIN_THREADS": "2"}
    spec = f"llm-url:base={mirror.url},m=5"
    cli = [sys.executable, "-m", "searchain.cli"]
    out = subprocess.run(
        [*cli, "ask", hotpot[6]["question_text"], "--method", "direct-retrieval",
         "--retriever", spec, "--json"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    trace = Trace.from_dict(json.loads(out.stdout))
    check(trace, mirror)
    run_dir = tmp_path / "run"
    ev = subprocess.run(
        [*cli, "eval", "--dataset", "hotpotqa", "--limit", "2", "--methods", "direct-retrieval",
         "--retriever", spec, "-k", "10", "--out", str(run_dir), "--concurrency", "1"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert ev.returncode == 0, ev.stderr
    records = [json.loads(line) for line in (run_dir / "results.jsonl").open()]
    assert len(records) == 2 and all(r["status"] == "ok" for r in records)
    for r in records:
        m = r["metrics"]
        assert {"passage_recall@1", "passage_recall@10", "doc_recall@1", "doc_recall@10",
                "valid_url_share", "em"} <= set(m)  # fmt: skip
        assert m["valid_url_share"] == r["trace"]["meta"]["retrieval"][0]["valid_url_share"]


@pytest.mark.slow
def test_cli_searchain_with_llm_url(mirror, hotpot, tmp_path: Path) -> None:
    env = {**os.environ, "SEARCHAIN_CACHE_DIR": str(tmp_path / "cache"), "SEARCHAIN_THREADS": "2"}
    out = subprocess.run(
        [sys.executable, "-m", "searchain.cli", "ask", hotpot[6]["question_text"],
         "--method", "searchain", "--r-max", "1", "--retriever",
         f"llm-url:base={mirror.url},m=3,shots=2", "--json",
         "-O", "searchain.route=chain"],  # the chain's node queries (the default reads first)
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    trace = Trace.from_dict(json.loads(out.stdout))
    assert trace.method == "searchain" and trace.answer
    reports = trace.meta["retrieval"]
    assert reports, "SearChain queried the LLM-URL retriever"
    queries = [n.query for n in trace.nodes]
    for rep in reports:
        assert rep["query"] in queries and rep["m"] == 3 and rep["shots"] == 2
        assert rep["valid_urls"] == sum(u["status"] == "fetched" for u in rep["urls"])
    assert any(rep["valid_urls"] for rep in reports)  # it names Annie Morton's page
    assert any(node.passages for node in trace.nodes)
    for node in trace.nodes:
        for p in node.passages:
            assert mirror.corpus.resolve(p.title) is not None
    # The URL generations are counted: one call per report, on top of SearChain's own.
    url_calls = sum(rep["usage"]["llm_calls"] + rep["usage"]["cached_calls"] for rep in reports)
    assert url_calls == len(reports)
    assert trace.usage.llm_calls + trace.usage.cached_calls > url_calls


@pytest.mark.slow
def test_cli_eval_of_musique_leaves_its_items_out_of_the_demos(mirror, tmp_path: Path) -> None:
    """The packaged demos are MuSiQue train items; `--dataset musique --limit 1 --seed 14`
    evaluates the first of them, so the prompt shows the 2nd to 11th instead."""
    env = {**os.environ, "SEARCHAIN_CACHE_DIR": str(tmp_path / "cache"), "SEARCHAIN_THREADS": "2"}
    run_dir = tmp_path / "run"
    ev = subprocess.run(
        [sys.executable, "-m", "searchain.cli", "eval", "--dataset", "musique", "--limit", "1",
         "--seed", "14", "--methods", "direct-retrieval", "-k", "1",
         "--retriever", f"llm-url:base={mirror.url},m=1", "--out", str(run_dir),
         "--concurrency", "1"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert ev.returncode == 0, ev.stderr
    pool = load_demos(d=None)
    [record] = [json.loads(line) for line in (run_dir / "results.jsonl").open()]
    assert record["status"] == "ok" and record["id"] == pool[0].id
    demos = json.loads((run_dir / "manifest.json").read_text())["config"]["llm_url_demos"]
    assert demos == {"shots": 10, "shown": [d.id for d in pool[1:11]], "excluded": [pool[0].id]}
    [report] = record["trace"]["meta"]["retrieval"]
    assert report["shots"] == 10 and report["demos_excluded"] == 1
    assert "left out" in ev.stderr
