"""LLM-URL without a model: the URL extractor on nasty generations, demos, HTML cleaning,
passage ranking, specs and metrics (fetching through the real mirror:
``test_llm_url_mirror.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchain.retrieval.llm_url import (
    Document,
    FetchConfig,
    LLMURLConfig,
    LLMURLRetriever,
    build_prompt,
    extract_urls,
    html_to_text,
    load_demos,
    parse_spec,
    rank_passages,
    render_page,
    split_document,
)
from searchain.retrieval.llm_url.evaluation import retrieval_metrics
from searchain.retrieval.llm_url.generate import PRIMER, Generation
from searchain.types import Node, Passage, Trace

W = "https://en.wikipedia.org/wiki/"

# (generation, expected usable titles in order, expected statuses of all candidates)
EXTRACTION_TABLE = [
    # Parentheses that belong to the title survive; trailing punctuation does not.
    (f"{W}Kiss_and_Tell_(1945_film), {W}Shirley_Temple.",
     ["Kiss and Tell (1945 film)", "Shirley Temple"], ["ok", "ok"]),
    # Markdown link: the closing ")" of the link is not part of the URL.
    (f"1. [Corliss Archer]({W}Corliss_Archer)\n2. [Film]({W}Kiss_and_Tell_(1945_film))",
     ["Corliss Archer", "Kiss and Tell (1945 film)"], ["ok", "ok"]),
    # Mobile host, http, fragment, percent-encoding, angle brackets.
    ("<http://en.m.wikipedia.org/wiki/Caf%C3%A9#History>", ["Café"], ["ok"]),
    # The research regex's [$-_] range admitted ',' '<' '=' and kept them: here they end it.
    (f"{W}Paris,{W}London<br>{W}Rome;", ["Paris", "London", "Rome"], ["ok", "ok", "ok"]),
    # Duplicates (case of the first letter, underscores vs %20, fragments) count once.
    (f"{W}paris {W}Paris#Name {W}Paris", ["Paris"], ["ok"]),
    (f"{W}New%20York_City {W}New_York_City", ["New York City"], ["ok"]),
    # Bare host without a scheme; index.php?title= form.
    ("see en.wikipedia.org/wiki/Big_Stone_Gap_(film) and "
     "https://en.wikipedia.org/w/index.php?title=Adriana_Trigiani&oldid=5",
     ["Big Stone Gap (film)", "Adriana Trigiani"], ["ok", "ok"]),
    # Off-domain, private and credential tricks are reported, never usable.
    ("http://127.0.0.1:8080/wiki/X http://169.254.169.254/latest/meta-data "
     f"https://en.wikipedia.org@10.0.0.1/wiki/Y https://fr.wikipedia.org/wiki/Paris {W}Z",
     ["Z"], ["off_domain", "off_domain", "malformed", "off_domain", "ok"]),
    # Not articles: empty title, namespaces, bad percent-encoding, forbidden characters.
    (f"{W} {W}File:Cat.jpg {W}Special:Random {W}%E2%28 {W}A%7CB {W}Real",
     ["Real"], ["malformed"] * 5 + ["ok"]),
    # Quotes around URLs, trailing '...' and '!'.
    (f'"{W}Hank_Snow", \'{W}Publix\'... {W}Tennessee!', ["Hank Snow", "Publix", "Tennessee"],
     ["ok", "ok", "ok"]),
    # Apostrophes inside a title stay; a quote around a URL does not (nor in a Python list).
    (f"{W}Arthur's_Magazine and {W}Rock_'n'_roll.", ["Arthur's Magazine", "Rock 'n' roll"],
     ["ok", "ok"]),
    (f"See '{W}Arthur's_Magazine'. ['{W}Rock_'n'_roll', '{W}Hank_Snow']",
     ["Arthur's Magazine", "Rock 'n' roll", "Hank Snow"], ["ok", "ok", "ok"]),
    (f"'{W}Publix','{W}Guns_N'_Roses'", ["Publix", "Guns N' Roses"], ["ok", "ok"]),
    # Nothing URL-like at all.
    ("I do not know which pages have the answer.", [], []),
]  # fmt: skip


@pytest.mark.parametrize(("text", "titles", "statuses"), EXTRACTION_TABLE)
def test_extractor_on_nasty_generations(text: str, titles: list[str], statuses: list[str]) -> None:
    ex = extract_urls(text, m=10)
    assert [u.title for u in ex.urls] == titles
    assert [c.status for c in ex.candidates] == statuses
    for u in ex.urls:
        assert u.url == W + u.url.removeprefix(W)  # canonical https desktop URL
        assert "#" not in u.url and "?" not in u.url


# (generation, the title tried first, the spellings tried if it is not found)
ALTERNATIVES_TABLE = [
    (f"{W}Washington,_D.C.", "Washington, D.C", ["Washington, D.C."]),
    (f"{W}Oklahoma!", "Oklahoma", ["Oklahoma!"]),
    (f"{W}Oklahoma!.", "Oklahoma", ["Oklahoma!.", "Oklahoma!"]),
    (f"[musical]({W}Oklahoma!)", "Oklahoma", ["Oklahoma!"]),
    (f"{W}When_Harry_Met_Sally...", "When Harry Met Sally",
     ["When Harry Met Sally...", "When Harry Met Sally."]),
    (f"{W}These_Boots_Are_Made_for_Walkin'", "These Boots Are Made for Walkin",
     ["These Boots Are Made for Walkin'"]),
    # After an opening quote the apostrophe closes it; a full stop may still be the title's.
    (f"'{W}Washington,_D.C.'", "Washington, D.C", ["Washington, D.C."]),
    (f"'{W}Publix'.", "Publix", []),
    # Nothing was trimmed, or only what cannot end a title.
    (f"{W}Paris, {W}Rome;", "Paris", []),
    (f"{W}Caf%C3%A9#History.", "Café", []),  # the "." was the fragment's
]  # fmt: skip


@pytest.mark.parametrize(("text", "title", "alternatives"), ALTERNATIVES_TABLE)
def test_trimmed_title_punctuation_is_kept_as_an_alternative(
    text: str, title: str, alternatives: list[str]
) -> None:
    first = extract_urls(text, m=10).urls[0]
    assert (first.title, first.alternatives) == (title, alternatives)


def test_extractor_caps_at_m_and_counts_duplicates() -> None:
    text = "\n".join(f"{W}T{i}" for i in range(8)) + f"\n{W}T0"
    ex = extract_urls(text, m=3)
    assert [u.title for u in ex.urls] == ["T0", "T1", "T2"]
    assert ex.duplicates == 0  # candidates past the m-th usable URL are not looked at
    assert extract_urls(f"{W}A {W}A {W}B", m=5).duplicates == 1


def test_primer_continuation_is_read_whole() -> None:
    # The prompt ends with the primer; the model continues "/Title\nhttps://...".
    ex = extract_urls(PRIMER + "/Corliss_Archer\nhttps://en.wikipedia.org/wiki/Shirley_Temple")
    assert [u.title for u in ex.urls] == ["Corliss Archer", "Shirley Temple"]


def test_prompts_zero_and_few_shot() -> None:
    zero = build_prompt("Who wrote  Hamlet?", 3)
    assert zero == f"Who wrote Hamlet? Which 3 Wikipedia URLs would have the answer?\n{PRIMER}"
    assert build_prompt("Q?", 1).endswith("Which Wikipedia URL has the answer?\n" + PRIMER)
    demos = load_demos(d=10)
    assert len(demos) == 10 and all(d.urls for d in demos)
    few = build_prompt("Who wrote Hamlet?", 5, demos)
    assert few.count("Wikipedia URL") == 11 and few.endswith(PRIMER)
    assert demos[0].question in few and demos[0].urls[0] in few
    with pytest.raises(ValueError):
        build_prompt("Q?", 11)


def test_demos_come_from_a_train_split(data_dir: Path) -> None:
    import json

    pool = load_demos(d=None)
    assert len(pool) == 98 and load_demos(d=10) == pool[:10]
    train = {r["id"]: r for r in
             json.loads((data_dir / "musique" / "musique_train.json").read_text())}  # fmt: skip
    assert all(train[d.id]["question"] == d.question for d in pool)
    with (data_dir / "hotpotqa" / "dev_subsampled.jsonl").open() as f:
        hotpot = {json.loads(line)["question_text"] for line in f}
    assert not {d.question for d in pool} & hotpot


def test_webq_demos_come_from_its_train_split_with_the_answers_pages(
    data_dir: Path, tmp_path: Path
) -> None:
    """L1: the paper samples the evaluated data set's train split. WebQ's train file has no
    gold pages; each demo lists its answers' articles (at most m = 10), and the packaged file
    is what the script makes from the train file."""
    import json
    import subprocess
    import sys

    pool = load_demos("webq", None)
    train = {f"webq-train:{r['id']}": r for r in map(json.loads, (data_dir / "webq" /
             "webq-train.jsonl").read_text().splitlines())}  # fmt: skip
    test = {json.loads(line)["question"] for line in
            (data_dir / "webq" / "webq-test.jsonl").read_text().splitlines()}  # fmt: skip
    assert len(pool) == 100 and all(d.id in train for d in pool)
    assert not {d.question for d in pool} & test
    for d in pool:
        assert 1 <= len(d.urls) <= 10 and d.question == train[d.id]["question"]
        assert all(u.startswith("https://en.wikipedia.org/wiki/") for u in d.urls)
    out = tmp_path / "demos.jsonl"
    script = Path(__file__).resolve().parents[3] / "scripts" / "make_llm_url_demos.py"
    subprocess.run([sys.executable, str(script), "--dataset", "webq", "--d", "100", "--out",
                    str(out), "--source", str(data_dir / "webq" / "webq-train.jsonl")],
                   check=True, capture_output=True)  # fmt: skip
    assert load_demos(str(out), None) == pool


def test_a_data_set_without_train_demos_keeps_musiques_and_every_report_says_so(
    tmp_path: Path,
) -> None:
    r = llm_url(tmp_path)
    note = r.demos_for_dataset("hotpotqa")
    assert note and "hotpotqa has no train split" in note and r.demo_source == "musique"
    assert r.demos == load_demos(d=10)
    report = r.from_generation("Who?", Generation("", "", extract_urls(""))).report
    assert report["demo_note"] == note and report["demo_source"] == "musique"
    # Chosen demos, or zero-shot: nothing is switched and nothing to say.
    assert llm_url(tmp_path, demos="webq").demos_for_dataset("hotpotqa") is None
    assert llm_url(tmp_path, shots=0).demos_for_dataset("webq") is None
    webq = llm_url(tmp_path)
    assert webq.demos_for_dataset("webq") is None and webq.demos == load_demos("webq", 10)


def llm_url(tmp_path: Path, **options) -> LLMURLRetriever:
    """A retriever without an LLM: enough to see which demos its prompt would show."""
    return LLMURLRetriever(None, LLMURLConfig(fetch=FetchConfig(cache_dir=str(tmp_path)),  # type: ignore[arg-type]
                                              **options))  # fmt: skip


def test_demo_exclusion(tmp_path: Path) -> None:
    r = llm_url(tmp_path)
    pool = list(r.demo_pool)
    assert r.demos == pool[:10] and r.demo_summary()["excluded"] == []
    # By id (the 1st), and by question however it is spelled (the 3rd), the next ones fill in.
    spelled = "  " + pool[2].question.upper().replace("?", " ?!") + " "
    summary = r.exclude_demos([spelled, "An unrelated question?"], [pool[0].id, "other-id"])
    assert r.demos == [pool[1], *pool[3:12]]
    assert summary == {"shots": 10, "shown": [d.id for d in r.demos],
                       "excluded": [pool[0].id, pool[2].id]}  # fmt: skip
    prompt = build_prompt("Who?", 10, r.demos)
    assert pool[0].question not in prompt and pool[2].question not in prompt
    assert pool[1].question in prompt and pool[11].question in prompt
    # A new exclusion replaces the last one; excluding the whole pool leaves zero-shot.
    r.exclude_demos([], [])
    assert r.demos == pool[:10]
    r.exclude_demos([d.question for d in pool])
    assert r.demos == [] and r.demo_summary()["shots"] == 0
    assert build_prompt("Who?", 10, r.demos) == build_prompt("Who?", 10)
    # A demo file without ids is matched by question; fewer shots asked, fewer shown.
    own = tmp_path / "demos.jsonl"
    own.write_text("".join(f'{{"question": "Q{i}?", "urls": ["{W}T{i}"]}}\n' for i in range(5)))
    mine = llm_url(tmp_path, demos=str(own), shots=3)
    assert [d.question for d in mine.demos] == ["Q0?", "Q1?", "Q2?"]
    assert mine.exclude_demos(["q1"], ["Q0?"]) == {
        "shots": 3, "shown": ["Q0?", "Q2?", "Q3?"], "excluded": ["Q1?"]}  # fmt: skip
    assert llm_url(tmp_path, shots=0).exclude_demos([pool[0].question])["excluded"] == []


def test_eval_never_shows_an_evaluated_item_as_a_demo(data_dir, monkeypatch, tmp_path) -> None:
    """For every dataset `searchain eval` can load, the demos its LLM-URL prompt shows are not
    evaluated items (by id or question); WebQ shows its own train split's demos, the others
    MuSiQue-train's; only MuSiQue, whose train sample the packaged demos come from, needs an
    exclusion, and the manifest config says so."""
    from searchain.eval.datasets import DATASETS, load_dataset
    from searchain.eval.setup import exclude_evaluated_demos
    from searchain.retrieval.llm_url.generate import question_key

    monkeypatch.setenv("SEARCHAIN_DATA", str(data_dir))
    pool = load_demos(d=None)
    cases = [(name, None) for name in DATASETS] + [("musique", 20), ("musique", 95)]
    for name, limit in cases:
        examples = load_dataset(name, limit=limit, seed=0)
        r = llm_url(tmp_path)
        config: dict = {"dataset": name}
        exclude_evaluated_demos(r, examples, config)
        evaluated = {question_key(e.question) for e in examples}
        ids = {e.id for e in examples}
        assert not {question_key(d.question) for d in r.demos} & evaluated, name
        assert not {d.id for d in r.demos} & ids, name
        prompt = build_prompt("Who?", 10, r.demos)
        assert all(d.question in prompt for d in r.demos)
        overlap = [d.id for d in pool if d.id in ids]
        if name.startswith("webq"):  # its own train split's demos (webq-train: minus itself)
            assert r.demo_source == "webq" and config["llm_url_demos_from"] == "webq"
            assert all(d.id.startswith("webq-train:") for d in r.demos), name
            continue
        if name != "musique":
            assert not overlap and r.demos == pool[:10] and config == {"dataset": name}, name
            assert r.demo_note and name.split("-")[0] in r.demo_note  # the fallback, said
            continue
        assert overlap and config["llm_url_demos"]["excluded"] == overlap
        assert config["llm_url_demos"]["shown"] == [d.id for d in r.demos]
        # The whole sample leaves no MuSiQue demo (zero-shot); a part of it leaves the others.
        expected = {None: 0, 20: 10, 95: 5}[limit]
        assert len(r.demos) == config["llm_url_demos"]["shots"] == expected, limit
        assert r.demos == [d for d in pool if d.id not in ids][:10]


def test_bad_demo_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "demos.jsonl"
    bad.write_text('{"question": "q", "urls": ["u"]}\n{"question": "no urls"}\n')
    with pytest.raises(ValueError, match="line 2"):
        load_demos(bad)


def test_html_to_text_drops_chrome_and_clutter() -> None:
    page = html_to_text(render_page("Kiss and Tell (1945 film)", ["First para.", "Second one."]))
    assert page.title == "Kiss and Tell (1945 film)"
    assert page.text == "First para.\nSecond one."
    messy = (
        "<html><head><title>X - Wikipedia</title><script>var a=1</script></head><body>"
        "<nav>Main page</nav><div id='mw-content-text'><div class='mw-parser-output'>"
        "<p>Alpha <b>beta<sup class='reference'>[3]</sup> gamma<p>Delta &amp; epsilon"
        "<table class='navbox'><tr><td>Nav junk</td></tr></table><ul><li>One<li>Two</ul>"
        "<h2>History<span class='mw-editsection'>[edit]</span></h2></span></div></div>"
        "<footer>Privacy policy</footer></body></html>"
    )
    page = html_to_text(messy)
    assert page.title == "X"
    assert page.text.splitlines() == ["Alpha beta gamma", "Delta & epsilon", "One", "Two",
                                      "History"]  # fmt: skip
    # A page without MediaWiki's content container: the body text, chrome still dropped.
    plain = html_to_text("<body><nav>menu</nav><p>Just text</p><script>x()</script></body>")
    assert plain.text == "Just text"


def test_split_and_rank_passages(data_dir: Path) -> None:
    import json

    art = json.loads((data_dir / "wikipedia" / "physics_articles_10.json").read_text())[0]
    doc = Document("u", art["title"], art["text"])
    passages = split_document(doc)
    assert len(passages) > 50
    assert [p.id for p in passages[:3]] == [f"{art['title']}#{i}" for i in range(3)]
    assert all(len(p.text.split()) <= 100 and p.title == art["title"] for p in passages)
    assert " ".join(" ".join(p.text.split()) for p in passages).split() == art["text"].split()
    top = rank_passages("In which city was Aristotle born?", passages, 3)
    assert len(top) == 3 and top[0].score >= top[1].score >= top[2].score > 0
    assert any("Stagira" in p.text for p in top)
    # No query term matches: ties keep page order.
    assert [p.id for p in rank_passages("zzzq xxyq", passages, 2)] == [
        passages[0].id,
        passages[1].id,
    ]


def test_specs() -> None:
    cfg = parse_spec("llm-url:http://127.0.0.1:8765")
    assert cfg.fetch.base_url == "http://127.0.0.1:8765" and cfg.m == 10 and cfg.shots == 10
    cfg = parse_spec("llm-url:base=http://127.0.0.1:1,m=3,shots=0,per-host=2,cache=off")
    assert (cfg.m, cfg.shots, cfg.fetch.per_host, cfg.fetch.cache) == (3, 0, 2, False)
    bad_specs = [
        ("llm-url:m=0", "between 1 and 10"),
        ("llm-url:colour=red", "unknown"),
        ("llm-url:base=file:///etc/passwd", "http"),
        ("llm-url:m", "key=value"),
    ]
    for bad, why in bad_specs:
        with pytest.raises(ValueError, match=why):
            parse_spec(bad)


def _ranked(passages: list[Passage], k: int | None = None) -> Trace:
    """A retrieve-read trace: one node, the question's own ranked list, read in one round."""
    node = Node("1", "q", passages=passages, source="retrieval")
    return Trace("q", "retrieve-read", nodes=[node], rounds=1, meta={} if k is None else {"k": k})


def test_retrieval_metrics() -> None:
    ranked = [Passage("A#0", "nothing here", "A"), Passage("B#0", "Paris is big", "B")]
    trace = _ranked(ranked)
    trace.meta["retrieval"] = [{
        "retriever": "llm-url", "valid_url_share": 0.5, "m": 4,
        "urls": [{"url": W + "A"}, {"url": W + "B"}, {"url": None}],
        "documents": [{"url": W + "B", "title": "B", "text": "a long page about Paris"}],
    }]  # fmt: skip
    m = retrieval_metrics(trace, ["Paris"])
    assert m["passage_recall@1"] == 0.0 and m["passage_recall@10"] == 1.0
    assert m["doc_recall@1"] == 1.0  # the model's first fetched page has the answer
    assert m["valid_url_share"] == 0.5 and m["urls_named"] == 2
    bm25 = _ranked(ranked)
    assert retrieval_metrics(bm25, ["Paris"]) == {
        "passage_recall@1": 0.0, "passage_recall@10": 1.0,
        "doc_recall@1": 0.0, "doc_recall@10": 1.0,
    }  # fmt: skip
    assert retrieval_metrics(Trace("q", "searchain"), ["Paris"]) == {}
    followed = _ranked(ranked)
    followed.rounds = 2  # Self-Ask: one follow-up's list, asked after a first turn
    assert retrieval_metrics(followed, ["Paris"]) == {}


def test_recall_at_k_is_refused_for_a_list_asked_shorter_than_k() -> None:
    """Issue 29 L2: retrieve-read asked for 5 passages is not scored @10 (that would be @5
    under another name); a method that asked for 10 and got 2 back is scored @10 (its own
    shortfall); Recall@100 needs a request of 100."""
    ranked = [Passage(f"D{i}#0", "Paris" if i == 4 else "nothing", f"D{i}") for i in range(5)]
    five = _ranked(ranked, k=5)
    m = retrieval_metrics(five, ["Paris"])
    assert m == {"passage_recall@1": 0.0, "doc_recall@1": 0.0}
    ten = _ranked(ranked[3:], k=10)
    m = retrieval_metrics(ten, ["Paris"])
    assert m["passage_recall@10"] == 1.0 and "passage_recall@100" not in m
    hundred = _ranked(ranked, k=100)
    assert retrieval_metrics(hundred, ["Paris"])["passage_recall@100"] == 1.0
