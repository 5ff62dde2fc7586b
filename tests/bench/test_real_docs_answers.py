"""The scoring rules of the real-documentation answers bench (issue 39;
``searchain.scoring.document_answers``, its tables ``searchain.eval.document_answers_tables``
and ``searchain.eval.short_answer_tables``):
which citation names the right file and page, when a two-passage question counts as answered,
when the answer's passage was in hand, and where a miss is put. No model, no documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchain.eval import document_answers_tables as T
from searchain.eval import document_records as R
from searchain.eval import short_answer_tables as S
from searchain.scoring.document_answers import holds, rescore, score, squash, trace_record, view
from searchain.scoring.match import alias_match

ROOT = Path(__file__).resolve().parents[2]
PDF_Q = {
    "id": "mg-name-length",
    "answer": "keep its length within 30 characters",
    "source": {"package": "maint-guide", "file": "maint-guide.en.pdf", "page": 17},
    "kind": "one-passage",
}
TWO_Q = {
    "id": "two-pin",
    "answer": ["except if its priority is higher than 1000", "the default Pin-Priority value is 1"],
    "source": [
        {"package": "debian-handbook", "file": "sect.apt-get.html", "section": "6.2"},
        {"package": "debian-reference-en", "file": "ch02.en.html", "section": "2.5"},
    ],
    "kind": "two-passages",
}
GUIDE = "maint-guide/maint-guide.en.pdf"


def test_a_citation_names_the_file_and_the_page_or_the_passage_holding_the_answer() -> None:
    answer = "Keep its length within 30 characters [1]."
    on_page = view(GUIDE, 17, "Package names ...")
    before_page = view(GUIDE, 16, "... it is a good idea to keep its length within 30 characters.")
    elsewhere = view(GUIDE, 40, "Something else entirely.")
    other_file = view("debmake-doc/debmake-doc.en.pdf", 17, "keep its length within 30 characters")

    s = score(PDF_Q, answer, [on_page], [on_page])
    assert (s["cover_em"], s["cite_file"], s["cite_page"]) == (1.0, 1.0, 1.0)
    assert score(PDF_Q, answer, [], [before_page])["cite_page"] == 1.0
    assert score(PDF_Q, answer, [], [elsewhere])["cite_page"] == 0.0
    s = score(PDF_Q, answer, [], [other_file])
    assert (s["cite_file"], s["cite_page"]) == (0.0, 0.0)
    assert score(PDF_Q, "Thirty characters.", [], [])["cover_em"] == 0.0


def test_a_two_passage_question_needs_both_answers_and_both_files() -> None:
    first = view(
        "debian-handbook/sect.apt-get.html", None, "except if its priority is higher than 1000"
    )
    second = view("debian-reference-en/ch02.en.html", None, "the default Pin-Priority value is 1")
    both = "Only except if its priority is higher than 1000; the default Pin-Priority value is 1."
    s = score(TWO_Q, both, [first, second], [first, second])
    assert (s["cover_em"], s["cite_file"], s["in_hand"], s["cite_page"]) == (1.0, 1.0, True, None)
    s = score(TWO_Q, "Except if its priority is higher than 1000.", [first], [first])
    assert s["cover_em_parts"] == [1.0, 0.0]
    assert (s["cover_em"], s["cite_file"], s["in_hand"]) == (0.0, 0.0, False)


def test_the_answer_passage_is_in_hand_through_markup_and_glued_words() -> None:
    raw_html = view(GUIDE, 17, "<p>keep its <em>length</em> within 30&#160;characters</p>")
    glued = view(GUIDE, 17, "Itisagoodideatokeepitslengthwithin30characters.")
    wrong_file = view("debian-faq/debian-faq.en.pdf", 3, "keep its length within 30 characters")
    assert score(PDF_Q, "", [raw_html], [])["in_hand"]
    assert score(PDF_Q, "", [glued], [])["in_hand"]
    assert not score(PDF_Q, "", [wrong_file], [])["in_hand"]


def test_where_each_item_stands() -> None:
    ok = {"status": "ok", "arm": "searchain", "nodes": 2, "node_had_answer": False}
    assert T.category({"status": "failed", "arm": "searchain"}) == "failed"
    assert T.category(ok | {"cover_em": 1.0, "cite_file": 1.0}) == T.CATEGORIES[0]
    assert T.category(ok | {"cover_em": 1.0, "cite_file": 0.0}) == T.CATEGORIES[1]
    assert T.category(ok | {"cover_em": 0.0, "nodes": 0, "in_hand": True}) == "plan not parsed"
    # A record says whether a chain made it (one made before that: only a chain's counts 0).
    unplanned = ok | {"cover_em": 0.0, "nodes": 0, "in_hand": True, "chain_of_query": False}
    assert T.category(unplanned) == "answer passage in hand, answer wrong"
    lost = ok | {"cover_em": 0.0, "node_had_answer": True, "in_hand": True}
    assert T.category(lost) == "a node had the answer, the final answer lost it"
    missed = ok | {"cover_em": 0.0, "in_hand": False}
    assert T.category(missed) == "retrieval missed the answer passage"
    peer = {"status": "ok", "arm": "llamaindex", "cover_em": 0.0, "in_hand": True}
    assert T.category(peer) == "answer passage in hand, answer wrong"


def test_in_hand_counts_only_the_passages_the_answering_step_read() -> None:
    """Issue 50: a node retrieved the answer's passage, but the answering step (tracing: the
    pairs; ``meta.final_read``) did not read it: not in hand; ``in_hand_retrieved`` says it
    was retrieved."""
    from searchain.types import Node, Passage, Trace

    page = Passage(id=f"{GUIDE}#3", text="Please keep its length within 30 characters.",
                   source={"path": GUIDE, "page": 17})  # fmt: skip
    node = Node("r1.1", "How long may the name be?", "30", "ir-completed", "q", passages=[page])
    trace = Trace(question="q", method="searchain", nodes=[node], answer="30")
    trace.meta["final_read"] = []
    record = trace_record(PDF_Q, trace)
    assert not record["in_hand"] and record["in_hand_retrieved"]
    assert record["chain_of_query"] is False  # the trace records no chains
    trace.meta["final_read"] = [page.id]
    assert trace_record(PDF_Q, trace)["in_hand"]
    del trace.meta["final_read"]  # a method whose answering step reads all it retrieved
    assert trace_record(PDF_Q, trace)["in_hand"]


def test_the_table_says_how_often_searchain_answered_as_one_hop() -> None:
    rows = {"a": {"hops": 1}, "b": {"hops": 3}, "c": {"hops": 0}, "d": {}}
    assert T.one_hop_rows({"searchain": rows, "retrieve-read": {"a": {}}}) == [
        "",
        "searchain answered 2 of 3 questions as one hop (at most one answered node on its path).",
    ]


def test_the_table_names_the_right_answers_only_the_node_queries_made_possible() -> None:
    rows = {
        "a": {"id": "a", "cover_em": 1.0, "in_hand": True, "in_hand_question": False},  # nodes only
        "b": {"id": "b", "cover_em": 1.0, "in_hand": True, "in_hand_question": True},
        "c": {"id": "c", "cover_em": 0.0, "in_hand": True, "in_hand_question": False},  # not right
        "d": {"id": "d", "cover_em": 1.0, "in_hand": True},  # tracing: the evidence roles unknown
    }
    assert T.node_only_rows(
        {"searchain-evidence": rows, "searchain-tracing": {"d": rows["d"]}}
    ) == [
        "",
        "searchain-evidence: 1 of its 2 right answers had their passages in hand only through "
        "the node queries: a.",
    ]


def test_in_hand_question_reads_the_evidence_steps_roles() -> None:
    """A needed passage the evidence step read only as a node's passage is not in hand through
    the question's own top-k."""
    from searchain.types import Node, Passage, Trace

    page = Passage(id=f"{GUIDE}#3", text="Please keep its length within 30 characters.",
                   source={"path": GUIDE, "page": 17})  # fmt: skip
    node = Node("r1.1", "How long may the name be?", "30", "ir-completed", "q", passages=[page])
    trace = Trace(question="q", method="searchain", nodes=[node], answer="30")
    trace.meta["final_read"] = [page.id]
    trace.meta["evidence"] = {"passages": [{"id": page.id, "roles": ["completes r1.1"]}]}
    record = trace_record(PDF_Q, trace)
    assert record["in_hand"] and record["in_hand_question"] is False
    trace.meta["evidence"]["passages"][0]["roles"].append("question rank 2")
    assert trace_record(PDF_Q, trace)["in_hand_question"] is True


def test_markup_is_dropped_but_an_address_in_angle_brackets_is_kept() -> None:
    assert holds("Write to <em>the</em> list <a href='x'>here</a>", "the list here")
    assert holds("Maintainer: Ana <ana@example.org>", "ana@example.org")
    assert squash("Ana <ana@example.org>") == "ana<ana@example.org>"
    assert not holds("Maintainer: Ana", "ana@example.org")


# -- the short-answer golds (issue 62) on recorded lines ------------------------------------

RECORDS = ROOT / "results" / "real-docs" / "qwen2.5-coder-1.5b"
QUESTIONS = ROOT / "bench" / "data" / "real_docs_questions.jsonl"  # the reported set


def recorded(arm: str, qid: str) -> tuple[dict, dict]:
    """The reported set's question ``qid`` and ``arm``'s recorded line for it, rescored."""
    lines = QUESTIONS.read_text().splitlines()
    questions = {q["id"]: q for q in map(json.loads, filter(str.strip, lines))}
    record = R.load_records(RECORDS / f"{arm}.jsonl")[qid]
    return questions[qid], rescore(questions[qid], record)


def test_a_right_short_answer_the_quote_gold_scored_0_now_scores_1() -> None:
    """retrieve-read said "tmpfs"; the old gold was the evidence quote "The tmpfs is a
    temporary filesystem", which no short answer holds."""
    q, r = recorded("retrieve-read", "rf-tmpfs")
    assert r["short_answer"] == "tmpfs" and q["answers"] == ["tmpfs"]
    assert (r["cover_em"], r["cover_em_short"]) == (0.0, 0.0)  # as recorded
    assert (r["right_whole"], r["right_short"], r["right_derived"]) == (1.0, 1.0, 1.0)


def test_a_two_part_answer_needs_an_alias_of_both_parts() -> None:
    """two-nmu-salvage: the NMU version and the salvaging wait. The ablation stated both
    ("1.5+nmu4 and 21 days": the quote gold's second part, a sentence, scored it 0); the
    default stated the version and a wrong wait."""
    q, both = recorded("searchain-evidence-question", "two-nmu-salvage")
    assert q["answers"] == [["1.5+nmu4"], ["21 day", "three weeks", "3 weeks"]]
    assert both["short_answer"] == "1.5+nmu4 and 21 days"
    assert both["cover_em_parts"] == [1.0, 0.0] and both["cover_em"] == 0.0
    assert (both["right_whole"], both["right_short"], both["right_derived"]) == (1.0, 1.0, 1.0)
    _, one = recorded("searchain-evidence-path", "two-nmu-salvage")
    assert "1.5+nmu4" in one["answer"] and "more than one NMU in a row" in one["answer"]
    assert (one["right_whole"], one["right_short"]) == (0.0, 0.0)


def test_an_arm_without_a_short_answer_is_scored_on_its_whole_reply() -> None:
    """LlamaIndex records no short answer: its short answer is its reply; the derived one is
    ``answers.short_answer`` of that reply, as for every arm."""
    from searchain.answers import short_answer

    q, r = recorded("llamaindex", "dd-debmake-version")
    assert "short_answer" not in r and r["right_short"] == r["right_whole"] == 1.0
    assert r["right_derived"] == float(alias_match(short_answer(r["answer"]), q["answers"]))
    assert S.short_of({"a": r}) == "= whole reply"
    _, searchain = recorded("searchain", "dd-debmake-version")
    assert S.short_of({"a": searchain}) == "recorded"


def test_a_failed_record_is_not_rescored_and_counts_0() -> None:
    failed = {"status": "failed", "error": "boom", "kind": "one-passage"}
    assert rescore({"answers": ["x"]}, failed) == failed
    assert T.value(failed, "right_whole") == 0.0


def test_the_short_answer_golds_table_pairs_each_arm_with_the_arms_asked() -> None:
    rows = {
        "retrieve-read": {"a": {"right_whole": 1.0}, "b": {"right_whole": 0.0}},
        "searchain": {"a": {"right_whole": 1.0}, "b": {"right_whole": 1.0}},
    }
    for items in rows.values():
        for r in items.values():
            r |= {"status": "ok", "kind": "one-passage", "short_answer": "x", "cover_em": 0.0}
            r |= {"right_short": r["right_whole"], "right_derived": r["right_whole"]}
    text = S.alias_markdown(rows, "m", "reported", 2, ["retrieve-read", "absent"])
    assert "| searchain | 2 | +50.0 [+0.0, +100.0] (1 / 0) |" in text
    assert "Paired with absent" not in text


def test_the_route_table_counts_each_route_and_what_the_chain_added_over_the_first_read() -> None:
    def routed(taken: str, final: float, first: float, seconds: float) -> dict:
        first_read = {"right_whole": first, "right_short": first}
        return {
            "status": "ok", "kind": "one-passage", "short_answer": "x", "cover_em": 0.0,
            "right_whole": final, "right_short": final, "right_derived": final,
            "seconds": seconds, "route": {"taken": taken, "first_read": first_read},
        }  # fmt: skip

    rows = {
        "searchain": {
            "a": routed("read", 1.0, 1.0, 10.0),
            "b": routed("chain", 1.0, 0.0, 50.0),  # the chain added it
            "c": routed("chain", 0.0, 1.0, 70.0),  # the chain lost it
            "d": routed("chain", 0.0, 0.0, 90.0),
        },
        "retrieve-read": {i: {"status": "ok", "kind": "one-passage", "short_answer": "x",
                              "cover_em": 0.0, "right_whole": 1.0, "right_short": 1.0,
                              "right_derived": 1.0, "seconds": 20.0} for i in "abcd"},
    }  # fmt: skip
    text = S.alias_markdown(rows, "m", "reported", 4, ["retrieve-read"])
    assert "| searchain | read | 1 | 1/1, 100.0 [100.0, 100.0] |" in text
    assert "| searchain | chain | 3 | 1/3, 33.3" in text and text.count("| 1 / 1 |") == 1
    assert "| searchain | first read, every question | 4 | 2/4, 50.0" in text
    assert "| searchain | 60.0 (4) | 3.00x (4) |" in text  # medians 60 s against 20 s
    assert "| retrieve-read | read |" not in text  # an arm without routes has no route rows


def test_the_tables_show_the_kinds_held_each_kind_paired_and_the_citations() -> None:
    """A bridge column only where bridge questions are; the difference within a kind with its
    interval (a target on bridge questions is read there); citations by the set's rule."""

    def rec(kind: str, right: float, cites: float) -> dict:
        return {"status": "ok", "kind": kind, "short_answer": "x", "cover_em": 0.0,
                "right_whole": right, "right_short": right, "right_derived": right,
                "cite_source": cites, "cite_file": 0.0}  # fmt: skip

    kinds = {"a": "one-passage", "b": "bridge", "c": "bridge"}
    rows = {
        "searchain": {i: rec(k, 1.0, 1.0) for i, k in kinds.items()},
        "retrieve-read": {i: rec(k, float(k == "one-passage"), 0.0) for i, k in kinds.items()},
    }
    text = S.alias_markdown(rows, "m", "git-doc", 3, ["retrieve-read"])
    assert "bridge: whole" in text and "two-passage: whole" not in text
    assert "| searchain | bridge | 2 | +100.0 [+100.0, +100.0] * (2 / 0) |" in text
    assert "| searchain | one-passage | 1 | +0.0" in text
    assert (
        "| searchain | 3 | 100.0 [100.0, 100.0] | 100.0 [100.0, 100.0] | 0.0 [0.0, 0.0] |" in text
    )
    assert "| retrieve-read | 3 | 0.0 [0.0, 0.0] | 0.0 [0.0, 0.0] | 0.0 [0.0, 0.0] |" in text
    one_kind = {a: {"a": r["a"]} for a, r in rows.items()}
    assert "within each kind" not in S.alias_markdown(one_kind, "m", "x", 1, ["retrieve-read"])
    # a set written with aliases (git-doc): its evidence quotes are no gold, so no quote column
    assert "cover-EM of the quote" in text
    aliases_only = S.alias_markdown(rows, "m", "git-doc", 3, ["retrieve-read"], quotes=False)
    assert "cover-EM of the quote" not in aliases_only and "| searchain | 3 | 100.0" in aliases_only


def test_traces_beside_the_records_keep_the_last_line_per_item_and_name_a_bad_line(
    tmp_path: Path,
) -> None:
    records = tmp_path / "searchain-plan.jsonl"
    traces = R.traces_path(records)
    assert traces.name == "searchain-plan.traces.jsonl"
    first, again = {"question": "q1"}, {"question": "q1, answered again"}
    lines = [json.dumps({"id": "a", "trace": first}), json.dumps({"id": "a", "trace": again})]
    traces.write_text("\n".join([*lines, '{"id": "b", "tra']))  # a run killed mid-line
    assert R.load_traces(traces) == {"a": again}
    traces.write_text("\n".join([lines[0], "not json", lines[1]]))
    with pytest.raises(ValueError, match=r"searchain-plan.traces.jsonl:2: not a JSON line"):
        R.load_traces(traces)
    assert R.load_traces(tmp_path / "absent.traces.jsonl") == {}


def test_a_resume_with_other_settings_is_named_setting_by_setting() -> None:
    """A records folder's arm resumed after a default changed: every changed setting is
    named (the bench stops on it rather than mix two configurations in one file); where the
    answers were made (the index path, the thread count) is not a setting."""
    recorded = {
        "spec": {"retriever": "bm25", "index": "/a", "threads": 1},
        "method": {"route": "chain", "k": 1},
    }
    same = {
        "spec": {"retriever": "bm25", "index": "/b", "threads": 2},
        "method": {"k": 1, "route": "chain"},
    }
    assert R.settings_changes(recorded, same) == []
    # as the manifest stores it: a tuple now is the list it was written as, not a change
    listed = {**recorded, "spec": {**recorded["spec"], "checks": []}}
    assert R.settings_changes(listed, {**same, "spec": {**same["spec"], "checks": ()}}) == []
    now = {"spec": {"retriever": "bm25+parts"}, "method": {"route": "read-first", "k": 1, "new": 0}}
    assert R.settings_changes(recorded, now) == [
        "spec.retriever: 'bm25' -> 'bm25+parts'",
        "method.new: None -> 0",
        "method.route: 'chain' -> 'read-first'",
    ]


def test_the_frozen_set_is_not_answered_without_saying_so() -> None:
    """``run --set git-doc`` stops before loading a model, a question or an index unless
    ``--frozen-run`` says this is its one run."""
    from bench_kit import run_bench

    done = run_bench("real_docs_answers", "run", "--set", "git-doc", "--arms", "searchain-plan")
    assert done.returncode != 0
    assert "git-doc is a frozen set" in done.stderr and "--frozen-run" in done.stderr
