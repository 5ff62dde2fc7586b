"""Paired comparisons, the failure taxonomy and the quality bench's tables (``python -m
bench.quality``, its recipes ``searchain.eval.recipes``, its splits ``searchain.eval.splits``),
on the committed runs of the real 1.5B instruct model (results/chat-hotpotqa/chat) and on
hand-built traces for the categories those runs do not show."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench_kit import as_now, copy_of, run_bench
from searchain.eval import report as rep
from searchain.eval.analyses import one_hop_lines
from searchain.eval.compare import item_scores, paired_difference
from searchain.eval.recipes import RECIPES, golds
from searchain.eval.rescore import rescore
from searchain.eval.splits import SplitError, tune_split
from searchain.eval.taxonomy import CATEGORIES, Gold, classify, tabulate, verification_events
from searchain.types import Node, Passage, Trace

ROOT = Path(__file__).resolve().parents[2]
CHAT_RUN = ROOT / "results" / "chat-hotpotqa" / "chat"
FIRST20 = ROOT / "results" / "chat-hotpotqa" / "first20.jsonl"


def _golds() -> dict[str, Gold]:
    out = {}
    for line in FIRST20.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        answers = [s for a in r["answers_objects"] for s in a["spans"]]
        titles = tuple(c["title"] for c in r["contexts"] if c["is_supporting"])
        out[r["question_id"]] = Gold(answers, titles)
    return out


def test_paired_difference_counts_wins_and_needs_shared_items() -> None:
    scores = {"a": {"1": 1.0, "2": 1.0, "3": 0.0, "4": 1.0}, "b": {"1": 0.0, "2": 1.0, "3": 0.0}}
    d = paired_difference(scores, "a", "b", "cover_em")
    assert d is not None
    assert (d.items, d.wins, d.losses) == (3, 1, 0)  # item 4 is a's alone: not compared
    assert d.mean == pytest.approx(1 / 3)
    assert d.lo <= d.mean <= d.hi
    assert paired_difference({"a": {"1": 1.0}, "b": {"2": 0.0}}, "a", "b", "x") is None
    always = {"a": {str(i): 1.0 for i in range(30)}, "b": {str(i): 0.0 for i in range(30)}}
    assert paired_difference(always, "a", "b", "x").significant  # type: ignore[union-attr]
    even = {"a": {"1": 1.0, "2": 0.0}, "b": {"1": 0.0, "2": 1.0}}
    assert not paired_difference(even, "a", "b", "x").significant  # type: ignore[union-attr]


def test_failed_items_score_zero_in_paired_scores() -> None:
    records = [{"method": "m", "id": "1", "status": "error", "metrics": {"cover_em": 1.0}}]
    assert item_scores(records, "cover_em") == {"m": {"1": 0.0}}


def test_taxonomy_of_recorded_real_traces() -> None:
    """The first SearChain record: IR corrected both nodes with the gold paragraphs in hand
    ("Shirley Temple"), yet the reader said "United States ambassador" for gold "Chief of
    Protocol" — the reader is where it went wrong. Direct prompting never retrieves."""
    golds = _golds()
    records = rep.load([CHAT_RUN])[0].records
    first = next(r for r in records if r["method"] == "searchain")
    trace = Trace.from_dict(first["trace"])
    assert classify("searchain", "ok", trace, golds[first["id"]], correct=False) == "reader wrong"
    direct = next(r for r in records if r["method"] == "direct-prompting"
                  and not r["metrics"]["cover_em"])  # fmt: skip
    got = classify("direct-prompting", "ok", Trace.from_dict(direct["trace"]),
                   golds[direct["id"]], correct=False)  # fmt: skip
    assert got == "wrong without retrieval"
    table = tabulate(records, golds, "cover_em")
    for method, tax in table.items():
        assert sum(tax.counts.values()) == tax.items == 20, method
        assert set(tax.counts) <= {"correct", *CATEGORIES}
        right = sum(r["metrics"]["cover_em"] > 0 for r in records if r["method"] == method)
        assert tax.counts["correct"] == right


def _node(query: str, answer: str, *, passages: tuple[str, ...] = (), text: str = "…",
          **meta: object) -> Node:  # fmt: skip
    return Node(id=query[:3], query=query, answer=answer, source="llm",
                passages=[Passage(id=f"{t}#0", text=text, title=t) for t in passages],
                meta=dict(meta))  # fmt: skip


def test_taxonomy_categories_in_their_order() -> None:
    gold = Gold(["Chief of Protocol"], ("Shirley Temple", "Kiss and Tell (1945 film)"))

    def cat(trace: Trace, method: str = "searchain") -> str:
        return classify(method, "ok", trace, gold, correct=False)

    q = "What position did the actress hold?"
    assert cat(Trace(q, "searchain")) == "plan not parsed"
    assert classify("searchain", "error", None, gold, correct=False) == "failed"
    t = Trace(q, "searchain", answer="ambassador", final_content="She was Chief of Protocol [1].")
    assert cat(t, "self-ask") == "short-answer extraction"
    flipped = _node("Which post did Shirley Temple hold?", "ambassador",
                    llm_answer="Chief of Protocol", status="corrected")  # fmt: skip
    assert cat(Trace(q, "searchain", answer="ambassador", nodes=[flipped])) == (
        "verification turned right into wrong"
    )
    assert verification_events(Trace(q, "s", nodes=[flipped]), gold)["right→wrong"] == 1
    lost = _node("Which post did Shirley Temple hold?", "Chief of Protocol")
    assert cat(Trace(q, "searchain", answer="actress", nodes=[lost])) == (
        "tracing lost a correct intermediate answer"
    )
    held = "Shirley Temple was the United States Chief of Protocol."
    read = _node("Who played Corliss Archer?", "Judy", passages=("Shirley Temple",), text=held)
    assert cat(Trace(q, "searchain", answer="Judy", nodes=[read])) == "reader wrong"
    # a gold paragraph without the answer (the first hop's): the hop that holds it was missed
    hop = _node(
        "Who played Corliss Archer?", "Shirley Temple", passages=("Kiss and Tell (1945 film)",)
    )
    assert cat(Trace(q, "searchain", answer="actress", nodes=[hop])) == (
        "retrieval missed the gold paragraph"
    )
    yes_no = Gold(["yes"], ("Shirley Temple",))  # no paragraph says "yes": any gold one counts
    assert classify("searchain", "ok", Trace(q, "searchain", answer="no", nodes=[hop, read]),
                    yes_no, correct=False) == "reader wrong"  # fmt: skip
    asked = _node("Which post did Shirley Temple hold?", "mayor", passages=("Janet Waldo",))
    assert cat(Trace(q, "searchain", answer="mayor", nodes=[asked])) == (
        "retrieval missed the gold paragraph"
    )
    drift = _node("Who voiced Corliss Archer on radio?", "Janet", passages=("Janet Waldo",))
    assert cat(Trace(q, "searchain", answer="Janet", nodes=[drift])) == "query drift"
    # a verdict: a sub-answer "No." is no intermediate answer, nor is verification's "no"
    sub = _node("Is Albany the capital?", "No.", passages=("Albany, Georgia",), llm_answer="Yes.",
                status="corrected")  # fmt: skip
    verdict = Trace(q, "searchain", answer="yes", final_content="There is no sign. So: yes.",
                    nodes=[sub])  # fmt: skip
    assert classify("searchain", "ok", verdict, Gold(["no"]), correct=False) == (
        "wrong, no gold evidence"
    )
    assert not verification_events(verdict, Gold(["no"]))
    assert verification_events(verdict, Gold(["Chief"])) == {}  # no span either way
    no_gold = Gold(["yes"])
    assert classify("retrieve-read", "ok", Trace(q, "r", answer="no", nodes=[drift]), no_gold,
                    correct=False) == "wrong, no gold evidence"  # fmt: skip


def test_a_correction_the_label_does_not_confirm_still_changed_the_answer() -> None:
    """Node-label rule 3 labels a correction whose span repeats its query "unconfirmed"; the
    correction still changed the LLM's answer, so it is still a verification event."""
    gold = Gold(["Chief of Protocol"], ("Shirley Temple",))
    node = Node("r1.1", "Which post did Shirley Temple hold?", "Shirley Temple", "ir-corrected",
                meta={"status": "unconfirmed", "llm_answer": "Chief of Protocol"})  # fmt: skip
    assert verification_events(Trace("q", "s", nodes=[node]), gold) == {"right→wrong": 1}
    node.source = "llm"  # a node IR did not change is no event, whatever its label
    assert verification_events(Trace("q", "s", nodes=[node]), gold) == {}


def test_bench_table_recomputes_the_report_and_the_taxonomy(tmp_path: Path) -> None:
    """The HotpotQA table of the chat run (its first 20 items, four methods), as `table`
    prints it from a copy of the run in the place of a HotpotQA run."""
    copy_of(CHAT_RUN, tmp_path / "m").rename(tmp_path / "m" / "hotpotqa")
    done = run_bench("quality", "table", "--sets", "hotpotqa", "--model", "m",
                     "--root", str(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    text = done.stdout
    rescored = rescore(CHAT_RUN)  # the bench scores the traces with today's scoring
    rows = {r.method: r for r in rep.summarize([rescored])}
    assert set(rows) == {"direct-prompting", "retrieve-read", "self-ask", "searchain"}
    for method in rows:
        line = next(ln for ln in text.splitlines() if ln.startswith(f"| {method} |"))
        assert str(rows[method].metrics["cover_em"]) in line
    rr = next(ln for ln in text.splitlines() if ln.startswith("| retrieve-read |"))
    assert "| 34.09 |" in rr  # the paper's number beside ours
    scores = item_scores(rescored.records, "cover_em")
    diff = paired_difference(scores, "direct-prompting", "searchain", "cover_em")
    assert diff is not None and str(diff) in text
    assert "reader wrong" in text and "wrong without retrieval" in text
    # where SearChain's checked nodes got their answers: shares of one node count
    row = next(ln for ln in text.split("paper Table 2")[1].splitlines()
               if ln.startswith("| searchain |"))  # fmt: skip
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert int(cells[1]) > 0 and abs(sum(float(c.rstrip(" %")) for c in cells[2:]) - 100) <= 2


def test_tune_split_holds_no_reported_item(tmp_path: Path) -> None:
    from searchain.eval.datasets import load_dataset

    path = tune_split(RECIPES["hotpotqa"], 50, tmp_path)  # bench.tune's REPORTED
    assert path == tmp_path / "splits" / "hotpotqa-tune-50.jsonl"
    tune = {e.id for e in load_dataset(str(path))}
    # HotpotQA-100 (the reported run grown from the 50) and the frozen held-out items
    reported = {e.id for e in load_dataset("hotpotqa", limit=100, seed=0)}
    held_out = set((ROOT.parent / "shared/splits/hotpotqa-fresh-heldout-160.txt")
                   .read_text().split())  # fmt: skip
    assert len(held_out) == 160 and not tune & reported and not tune & held_out
    assert len(tune) == len(load_dataset("hotpotqa")) - len(reported | held_out) > 0
    with pytest.raises(SplitError, match="prepared subset"):  # FEVER's are the in-pool claims
        tune_split(RECIPES["fever"], 50, tmp_path)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict]]:
    """StrategyQA's and FEVER's prepared items and indexes, as `prepare` builds them before a
    run (in a fresh root): the root, and what it printed for each set."""
    root = tmp_path_factory.mktemp("quality")
    done = run_bench("quality", "prepare", "--sets", "strategyqa,fever", "--root", str(root))
    assert done.returncode == 0, done.stderr[-2000:]
    return root, {r["set"]: r for r in map(json.loads, done.stdout.splitlines())}


def test_strategyqa_searches_the_pooled_annotated_facts(
    prepared: tuple[Path, dict[str, dict]], data_dir: Path
) -> None:
    """StrategyQA's knowledge source: one passage per annotated fact of every question, so a
    question's own evidence sits among the other questions' facts, found by BM25."""
    from searchain.retrieval import BM25Index

    root, printed = prepared
    assert RECIPES["strategyqa"].prepare == "sqa-facts"
    facts = root / "indexes" / "strategyqa-facts"
    assert printed["strategyqa"] == {"set": "strategyqa", "items": "strategyqa",
                                     "eval_args": ["--index", str(facts)]}  # fmt: skip
    index = BM25Index.load(facts)
    rows = json.loads((data_dir / "strategyqa" / "strategyqa_dev.json").read_text())
    assert len(index) == sum(len(r["facts"]) for r in rows) == 594
    first = rows[0]  # "Will the Albany in Georgia reach a hundred thousand occupants ...?"
    top = index.search(first["question"], k=2)
    assert {p.text for p in top} == set(first["facts"])
    assert {p.title for p in top} == {first["term"]}
    # so the taxonomy's gold evidence is the question's own facts, found by that title
    assert golds(RECIPES["strategyqa"])[first["qid"]].titles == (first["term"],)


def test_fever_keeps_the_claims_the_offline_corpus_can_decide(
    prepared: tuple[Path, dict[str, dict]],
) -> None:
    """FEVER ships no evidence text: the bench keeps the SUPPORTS/REFUTES claims one of whose
    evidence sets lies in the demo index's paragraphs, and BM25 finds that evidence there."""
    from searchain.eval.datasets import load_dataset
    from searchain.eval.datasets.fever import wikipedia_title
    from searchain.retrieval import read_documents
    from searchain.retrieval.demo import default_index, demo_corpus_path

    root, printed = prepared
    assert RECIPES["fever"].prepare == "fever-pool"
    assert printed["fever"]["items"] == str(root / "indexes" / "fever-in-pool.jsonl")
    examples = load_dataset(printed["fever"]["items"])
    assert len(examples) == 58 and {e.label for e in examples} == {"SUPPORTS", "REFUTES"}
    index = default_index()
    titles = {p.title for p in read_documents(demo_corpus_path())}
    for e in examples:  # some evidence set wholly in the corpus, by Wikipedia title
        assert any(all(wikipedia_title(str(t)) in titles for t, _ in group)
                   for group in e.meta["evidence_sets"]), e.id  # fmt: skip
    found = sum(any(p.title in {g["title"] for g in e.gold_passages}
                    for p in index.search(e.question, k=5)) for e in examples)  # fmt: skip
    assert found >= len(examples) // 2  # the claims name their page: BM25 mostly finds it


@pytest.mark.slow
def test_bench_runs_a_resumable_eval_with_the_embedded_model(tmp_path: Path) -> None:
    """End to end with the real Gemma model: one item, two methods; the second run resumes
    (answers nothing again) and the table reads the run."""
    cmd = [sys.executable, "-m", "bench.quality", "run", "--sets", "hotpotqa",
           "--limit", "1", "--methods", "direct-prompting,retrieve-read",
           "--model", "gemma-3-270m", "--root", str(tmp_path)]  # fmt: skip
    first = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-2000:]
    run = tmp_path / "gemma-3-270m" / "hotpotqa"
    assert len(rep.load([run])[0].records) == 2
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert '"skipped": 2' in again.stdout
    table = subprocess.run([*cmd[:3], "table", *cmd[4:6], "--model", "gemma-3-270m",
                            "--root", str(tmp_path)], cwd=ROOT, capture_output=True,
                           text=True)  # fmt: skip
    assert "| retrieve-read |" in table.stdout and "Failure taxonomy" in table.stdout


def test_chat_vs_completions_table_is_what_the_committed_runs_say() -> None:
    """results/chat-hotpotqa/README.md's table (issue 17), recomputed from both runs."""
    text = (ROOT / "results" / "chat-hotpotqa" / "README.md").read_text(encoding="utf-8")
    rows = {"direct prompting": "direct-prompting", "retrieve-read": "retrieve-read",
            "Self-Ask": "self-ask", "SearChain": "searchain"}  # fmt: skip
    scores: dict[str, dict[str, float]] = {}
    for form in ("chat", "completions"):
        records = rescore(CHAT_RUN.parent / form).records  # today's scoring of the traces
        assert len({r["id"] for r in records}) == 20
        for method, by_id in item_scores(records, "cover_em").items():
            scores[f"{form}:{method}"] = by_id
    for label, method in rows.items():
        line = next(ln for ln in text.splitlines() if ln.startswith(f"| {label} |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        for cell, form in ((cells[1], "chat"), (cells[2], "completions")):
            mean = 100 * sum(scores[f"{form}:{method}"].values()) / 20
            assert cell.startswith(f"{mean:.0f} ["), (label, form, cell)
        d = paired_difference(scores, f"chat:{method}", f"completions:{method}", "cover_em")
        assert d is not None and d.items == 20
        assert cells[3].replace("−", "-").startswith(f"{100 * d.mean:+.0f} ["), (label, cells[3])
        assert cells[4] == f"{d.wins} / {d.losses}", label


def _committed_pages() -> list[Path]:
    return sorted((ROOT / "results" / "quality").glob("*/README.md"))


def test_quality_pages_are_what_the_committed_runs_say(tmp_path: Path) -> None:
    """results/quality/<model>/README.md (issue 18's tables) regenerated from the runs beside
    it, byte for byte, by the command the page names (`table --write`, on a copy of the
    runs): a table edited by hand, or a run grown without re-writing its page, fails here."""
    pages = _committed_pages()
    assert pages, "no committed quality page"
    for page in pages:
        text = page.read_text(encoding="utf-8")
        sets = text.split("--sets ", 1)[1].split()[0]
        model = page.parent.name
        copy = copy_of(page.parent, tmp_path)
        (copy / "README.md").unlink()  # written again by the bench
        done = run_bench("quality", "table", "--sets", sets, "--model", model,
                         "--root", str(tmp_path), "--write")  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert "(no runs yet)" not in done.stdout, page
        assert as_now(text) == (copy / "README.md").read_text(encoding="utf-8"), page
        assert (page.parent / "quality.png").stat().st_size > 10_000  # the chart it shows
        assert (copy / "quality.png").stat().st_size > 10_000


def test_webq_llm_url_recipe_asks_for_a_wikipedia_index(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "bench.quality", "run", "--sets", "webq-llm-url",
           "--limit", "1", "--root", str(tmp_path)]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "--wiki-index" in done.stderr
    assert not list(tmp_path.rglob("results.jsonl"))  # nothing ran half-configured


@pytest.mark.slow
def test_llm_url_recipe_compares_retrievers_through_the_mirror(tmp_path: Path) -> None:
    """The retriever comparison with the real Gemma model: one run per arm (BM25, LLM-URL
    through the in-process mirror), then one table that pairs the arms item by item."""
    cmd = [sys.executable, "-m", "bench.quality", "run", "--sets", "llm-url",
           "--limit", "1", "--model", "gemma-3-270m", "--root", str(tmp_path),
           "--mirror-port", "18765"]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    arms = tmp_path / "gemma-3-270m" / "llm-url"
    bm25 = rep.load([arms / "bm25"])[0].records
    url = rep.load([arms / "llm-url"])[0].records
    assert len(bm25) == len(url) == 1 and bm25[0]["id"] == url[0]["id"]
    assert "valid_url_share" in url[0]["metrics"] and "valid_url_share" not in bm25[0]["metrics"]
    table = subprocess.run([*cmd[:3], "table", "--sets", "llm-url", "--model", "gemma-3-270m",
                            "--root", str(tmp_path)], cwd=ROOT, capture_output=True,
                           text=True)  # fmt: skip
    assert "| bm25 |" in table.stdout and "| llm-url |" in table.stdout
    assert "valid_url_share" in table.stdout and "1 items every method answered" in table.stdout


def test_tune_page_is_what_the_committed_tune_runs_say() -> None:
    """results/quality/<model>/tune/README.md (`python -m bench.tune page`), regenerated byte
    for byte from the tune runs beside it: each change's paired difference on tune items."""
    pages = sorted((ROOT / "results" / "quality").glob("*/tune/README.md"))
    assert pages, "no committed tune page"
    for page in pages:
        model = page.parent.parent.name
        done = run_bench("tune", "page", "--model", model)  # it prints the page it would write
        assert done.returncode == 0, done.stderr[-2000:]
        text = done.stdout.removesuffix("\n")
        assert as_now(page.read_text(encoding="utf-8")) == text, page
        assert "paired Δ" in text and "Failure taxonomy" in text


# The README's summary rows (benchmark prefix → the set's section and the method whose score
# the row's third cell gives).
SUMMARY = {"HotpotQA (": ("hotpotqa", "searchain"), "MuSiQue": ("musique", "searchain"),
           "StrategyQA": ("strategyqa", "searchain"), "FEVER": ("fever", "searchain"),
           "Compositional": ("compositional-celebrities", "rebel"),
           "HotpotQA retrieval": ("llm-url", "llm-url")}  # fmt: skip


def test_results_summary_scores_are_the_quality_page_s() -> None:
    """docs/results.md's summary of the 1.5B runs (the papers' claims, once the README's table)
    quotes each proposed method's score as the committed quality page (itself recomputed from
    the runs above) states it."""
    import re

    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    header = "| benchmark (metric) | the paper says |"
    readme = text[text.index(header) :].split("\n\n", 1)[0]  # that one table
    page = (ROOT / "results" / "quality" / "qwen2.5-coder-1.5b" / "README.md").read_text()
    sections = {s.split(":", 1)[0].rsplit("/ ", 1)[-1]: s for s in page.split("### ")[1:]}
    seen = 0
    for line in readme.splitlines():
        for prefix, (name, method) in SUMMARY.items():
            if line.startswith(f"| {prefix}"):
                score = re.search(r"(\d+\.\d) \[", line.split("|")[3])
                assert score, line
                assert f"| {method} | {score.group(1)} [" in sections[name], (name, line)
                seen += 1
    assert seen == len(SUMMARY)


def test_the_tune_comparison_says_how_often_searchain_answered_as_one_hop() -> None:
    runs = {
        "a": [{"trace": {"meta": {"hops": h}}} for h in (1, 2, 0, 3)],
        "old": [{"trace": {"meta": {}}}],  # made before meta.hops: not counted
    }
    assert one_hop_lines(runs) == ["Answered as one hop, a: 2 of 4 (50 %)."]
