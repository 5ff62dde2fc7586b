"""LLM-URL end to end through the real local mirror: fast tests replay recorded real model
calls (tests/data/recordings/llm_url.jsonl); slow ones run the embedded model itself, through
the library and the CLI (direct-retrieval and SearChain with --retriever llm-url)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recordings import RECORD, recorded_llm
from searchain.llm.local import LocalLLM
from searchain.methods import RetrieveRead
from searchain.methods.registry import build_method
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
    # The URL generation's usage is in the trace: 2 LLM calls per question.
    assert trace.usage.llm_calls + trace.usage.cached_calls == 2
    assert Trace.from_dict(json.loads(json.dumps(trace.to_dict()))) == trace
    return report


def test_retrieve_read_with_llm_url_replayed(mirror, hotpot, tmp_path: Path) -> None:
    llm = recorded_llm("llm_url")
    method = with_retrieval_reports(RetrieveRead(llm, retriever(llm, mirror, tmp_path), k=5).run)
    for i in QUESTIONS:
        trace = method(hotpot[i]["question_text"])
        report = check(trace, mirror)
        if not RECORD:
            assert trace.usage.cached_calls == 2 and trace.usage.llm_calls == 0
        gold = [s for a in hotpot[i]["answers_objects"] for s in a["spans"]]
        metrics = retrieval_metrics(trace, gold)
        assert set(metrics) >= {"passage_recall@1", "doc_recall@10", "valid_url_share"}
        assert metrics["valid_url_share"] == report["valid_url_share"]


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
        assert live.usage.llm_calls == 2
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
