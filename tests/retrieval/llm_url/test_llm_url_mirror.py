"""LLM-URL fetching through the real local mirror (a server on 127.0.0.1): missing page,
redirect, slow page, oversized page, hostile private addresses, per-host limit, cache, the
dense ranker, the CLI's mirror, and the whole pipeline on a hostile generation."""

from __future__ import annotations

import asyncio
import time
from itertools import chain
from pathlib import Path
from urllib.parse import unquote

import pytest

from searchain.net.safe_http import UnsafeURLError, afetch
from searchain.retrieval.corpus import read_documents
from searchain.retrieval.demo import demo_corpus_path
from searchain.retrieval.llm_url import (
    Document,
    FetchConfig,
    LLMURLConfig,
    LLMURLRetriever,
    MirrorCorpus,
    MirrorServer,
    PageFetcher,
    extract_urls,
    html_to_text,
    parse_spec,
    rank_passages,
    split_document,
)
from searchain.types import Passage

W = "https://en.wikipedia.org/wiki/"


SLOW, BIG = "Slow page", "Huge page"


@pytest.fixture(scope="module")
def mirror(data_dir: Path):
    docs = [Passage("s", "A page that takes its time.", SLOW), Passage("h", "Big start.", BIG)]
    physics = data_dir / "wikipedia" / "physics_articles_10.json"
    corpus = MirrorCorpus(chain(read_documents(demo_corpus_path()), read_documents(physics), docs))
    with MirrorServer(corpus, delays={SLOW: 3.0}, padding={BIG: 3_000_000}) as server:
        yield server


def fetcher(mirror: MirrorServer, tmp_path: Path, **options) -> PageFetcher:
    options.setdefault("retries", 0)
    return PageFetcher(FetchConfig(base_url=mirror.url, cache_dir=str(tmp_path), **options))


def test_fetch_page_missing_page_and_redirect(mirror: MirrorServer, tmp_path: Path) -> None:
    f = fetcher(mirror, tmp_path)
    ok, missing, redirected = f.fetch_titles(
        ["Aristotle", "No such article", "kiss and tell (1945 film)"]
    )
    assert ok.status == "fetched" and ok.http_status == 200 and ok.page_title == "Aristotle"
    assert len(ok.text.split()) > 5000 and "Privacy policy" not in ok.text
    assert missing.status == "not_found" and missing.http_status == 404 and not missing.text
    assert redirected.status == "fetched"
    assert redirected.final_url == f"{mirror.url}/wiki/Kiss_and_Tell_(1945_film)"
    assert redirected.page_title == "Kiss and Tell (1945 film)"
    assert "Shirley Temple" in redirected.text


def test_slow_page_times_out_and_others_still_arrive(mirror: MirrorServer, tmp_path) -> None:
    f = fetcher(mirror, tmp_path, timeout_s=0.5)
    t0 = time.perf_counter()
    slow, fine = f.fetch_titles([SLOW, "Aristotle"])
    assert time.perf_counter() - t0 < 2.5
    assert slow.status == "error" and "time" in slow.error.lower()
    assert fine.status == "fetched"


def test_oversized_page_is_truncated_or_refused(mirror: MirrorServer, tmp_path: Path) -> None:
    page = fetcher(mirror, tmp_path, max_bytes=200_000).fetch_titles([BIG])[0]
    assert page.status == "fetched" and page.truncated and "Big start." in page.text
    refused = fetcher(mirror, tmp_path / "e", max_bytes=200_000, oversize="error")
    assert refused.fetch_titles([BIG])[0].status == "error"


async def test_hostile_private_addresses_are_refused(mirror: MirrorServer, tmp_path) -> None:
    f = fetcher(mirror, tmp_path)
    port = mirror.url.rsplit(":", 1)[1]
    before = len(mirror.requests)
    hostile = [
        f"http://127.0.0.1:{int(port) + 1}/wiki/Aristotle",  # loopback, but not the opted-in port
        f"http://2130706433:{port}/wiki/Aristotle",  # 127.0.0.1 in decimal
        f"http://[::ffff:127.0.0.1]:{port}/wiki/Aristotle",  # IPv6-mapped loopback
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata
        "http://10.0.0.1/wiki/Aristotle",
        f"http://localhost:{port}/wiki/Aristotle",
    ]
    for url in hostile:
        with pytest.raises(UnsafeURLError):
            await afetch(url, policy=f.policy)
    assert len(mirror.requests) == before  # nothing reached the mirror
    # Without an explicit base URL nothing local is allowed at all.
    real = PageFetcher(FetchConfig(cache=False))
    with pytest.raises(UnsafeURLError):
        await afetch(f"{mirror.url}/wiki/Aristotle", policy=real.policy)
    # A model-written URL only ever contributes a title: the host it names is never asked.
    assert [c.status for c in extract_urls(f"{mirror.url}/wiki/Aristotle").candidates] == [
        "off_domain"
    ]


def test_per_host_limit_and_cache(mirror: MirrorServer, tmp_path: Path) -> None:
    titles = ["Aristotle", "Academy Awards", "Alien", "Astronomer", "Anatomy", "Albert Einstein"]
    mirror.delays.update(dict.fromkeys(titles, 0.3))  # long enough for requests to overlap
    deadline = time.monotonic() + 5
    while mirror.in_flight and time.monotonic() < deadline:  # e.g. the slow page's handler
        time.sleep(0.05)
    try:
        mirror.max_in_flight = 0
        f = fetcher(mirror, tmp_path, per_host=2)
        first = f.fetch_titles(titles)
        assert all(p.status == "fetched" and not p.cached for p in first)
        assert mirror.max_in_flight == 2
        mirror.max_in_flight = 0
        fetcher(mirror, tmp_path / "wide", per_host=6).fetch_titles(titles)
        assert mirror.max_in_flight > 2
    finally:
        for t in titles:
            mirror.delays.pop(t)
    before = len(mirror.requests)
    again = f.fetch_titles(titles)
    assert len(mirror.requests) == before  # served from the page cache
    assert all(p.cached for p in again)
    assert [p.text for p in again] == [p.text for p in first]
    assert f.stats.cache_hits == len(titles)


def test_fetch_from_inside_a_running_loop(mirror: MirrorServer, tmp_path: Path) -> None:
    async def inside() -> str:
        return fetcher(mirror, tmp_path).fetch_titles(["Aristotle"])[0].status

    assert asyncio.run(inside()) == "fetched"


def test_dense_ranker(data_dir: Path) -> None:
    import json

    arts = json.loads((data_dir / "wikipedia" / "physics_articles_10.json").read_text())
    passages = [p for a in arts[:2] for p in split_document(Document("u", a["title"], a["text"]))]
    top = rank_passages("In which city was Aristotle born?", passages, 3, ranker="dense")
    assert len(top) == 3 and top[0].score >= top[1].score >= top[2].score
    assert all(p.title == "Aristotle" for p in top)
    assert any("Stagira" in p.text for p in top)


def test_other_wikipedias_only_when_allowed(mirror: MirrorServer, tmp_path: Path) -> None:
    f = fetcher(mirror, tmp_path, allowed_hosts=("en.wikipedia.org", "de.wikipedia.org"))
    assert f.url_for("Paris", "de.wikipedia.org") == "https://de.wikipedia.org/wiki/Paris"
    assert f.url_for("Paris") == f"{mirror.url}/wiki/Paris"  # the mirror stands in for en
    with pytest.raises(ValueError, match="allowed_hosts"):
        f.url_for("Paris", "fr.wikipedia.org")
    hosts = ("en.wikipedia.org", "de.wikipedia.org")
    ex = extract_urls("https://de.wikipedia.org/wiki/Berlin https://fr.wikipedia.org/wiki/X", 5,
                      allowed_hosts=hosts)  # fmt: skip
    assert [(c.status, c.host) for c in ex.candidates] == [
        ("ok", "de.wikipedia.org"),
        ("off_domain", "fr.wikipedia.org"),
    ]
    assert (
        parse_spec("llm-url:hosts=en.wikipedia.org+de.wikipedia.org").fetch.allowed_hosts == hosts
    )


def test_cli_mirror_serve_and_bad_spec(data_dir: Path) -> None:
    import socket
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    physics = data_dir / "wikipedia" / "physics_articles_10.json"
    cli = [sys.executable, "-m", "searchain.cli"]
    proc = subprocess.Popen(
        [*cli, "mirror", "serve", "--port", str(port), "-c", str(physics)],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert "Serving 10 articles" in proc.stderr.readline()
        base = f"http://127.0.0.1:{port}/wiki/"
        with urllib.request.urlopen(base + "albert_einstein", timeout=10) as r:
            assert r.url == base + "Albert_Einstein"  # followed the 301
            assert "relativity" in html_to_text(r.read().decode()).text
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base + "Kiss_and_Tell_(1945_film)", timeout=10)
        assert e.value.code == 404
    finally:
        proc.terminate()
        proc.wait(10)
    bad = subprocess.run(
        [*cli, "search", "x", "--retriever", "llm-url:m=42"], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "m must be between 1 and 10" in bad.stderr
    remote = subprocess.run(
        [*cli, "mirror", "serve", "--host", "0.0.0.0", "--port", str(port)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert remote.returncode == 1 and "not a loopback address" in remote.stderr


def test_pipeline_on_a_hostile_generation(mirror: MirrorServer, tmp_path: Path) -> None:
    from searchain.retrieval.llm_url import LLMURLConfig, LLMURLRetriever
    from searchain.retrieval.llm_url.retriever import generation_of

    port = mirror.url.rsplit(":", 1)[1]
    text = (
        "/Kiss_and_Tell_(1945_film)\n"
        "https://en.wikipedia.org/wiki/kiss_and_tell_(1945_film)\n"  # redirects: same page
        f"http://127.0.0.1:{port}/wiki/Shirley_Temple\n"  # the mirror itself: off-domain
        "http://169.254.169.254/latest/meta-data/\n"
        "https://en.wikipedia.org@127.0.0.1/wiki/Shirley_Temple\n"
        "https://en.wikipedia.org/wiki/No_such_page_at_all\n"
        "https://en.wikipedia.org/wiki/Special:Search"
    )
    cfg = LLMURLConfig(m=5, fetch=FetchConfig(base_url=mirror.url, cache_dir=str(tmp_path)))
    r = LLMURLRetriever(None, cfg)  # type: ignore[arg-type]  # no LLM: the text is given
    before = len(mirror.requests)
    result = r.from_generation("Who starred in Kiss and Tell?", generation_of(text, 5), k=3)
    statuses = [u["status"] for u in result.report["urls"]]
    assert statuses == ["fetched", "fetched", "off_domain", "off_domain", "malformed",
                        "not_found", "malformed"]  # fmt: skip
    asked = mirror.requests[before:]
    assert all(p.startswith("/wiki/") for p in asked) and len(asked) == 4  # 2 + redirect + 404
    assert [d["title"] for d in result.report["documents"]] == ["Kiss and Tell (1945 film)"]
    assert result.report["valid_urls"] == 2 and result.report["valid_url_share"] == 2 / 5
    assert [p.id for p in result.passages] == ["Kiss and Tell (1945 film)#0"]
    assert "Shirley Temple" in result.passages[0].text


def test_title_punctuation_fallback_through_the_mirror(mirror: MirrorServer, tmp_path) -> None:
    """A title that lost a trailing "." "!" "..." or "'" to trimming is found under the
    spelling that keeps it, only after the trimmed one is not (real HotpotQA page titles)."""
    from searchain.retrieval.llm_url.retriever import generation_of

    text = (
        "/Manchester_United_F.C.\n"
        f"{W}When_Harry_Met_Sally...\n"
        f"{W}These_Boots_Are_Made_for_Walkin'\n"
        f"'{W}Get_Christie_Love!'\n"
        f"{W}Aristotle.\n"  # found as trimmed: the "." is never tried
        f"{W}No_such_page!\n"
    )
    r = LLMURLRetriever(None, LLMURLConfig(m=10, keep_documents=True, fetch=FetchConfig(  # type: ignore[arg-type]
        base_url=mirror.url, cache_dir=str(tmp_path), retries=0)))  # fmt: skip
    before = len(mirror.requests)
    result = r.from_generation("Who?", generation_of(text, 10), k=3)
    urls = result.report["urls"]
    assert [(u["status"], u["title"], u.get("fallback_from")) for u in urls] == [
        ("fetched", "Manchester United F.C.", "Manchester United F.C"),
        ("fetched", "When Harry Met Sally...", "When Harry Met Sally"),
        ("fetched", "These Boots Are Made for Walkin'", "These Boots Are Made for Walkin"),
        ("fetched", "Get Christie Love!", "Get Christie Love"),
        ("fetched", "Aristotle", None),
        ("not_found", "No such page", None),
    ]
    assert urls[1]["url"] == f"{W}When_Harry_Met_Sally..."
    assert [d["url"] for d in result.report["documents"]] == [u["url"] for u in urls[:5]]
    for d in result.report["documents"]:
        start = " ".join(" ".join(mirror.corpus.pages[d["title"]]).split()[:8])
        assert d["text"].split() and " ".join(d["text"].split()).startswith(start)
    assert result.report["valid_urls"] == 5
    # 6 trimmed titles, then the 6 kept spellings of the 5 not found ("..." and ".").
    asked = [unquote(p) for p in mirror.requests[before:]]
    assert len(asked) == 12 and "/wiki/Aristotle." not in asked
    assert asked.count("/wiki/No_such_page!") == 1
