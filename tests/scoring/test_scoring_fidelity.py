"""Scoring as the SearChain paper and the official scripts score (issue 21): every method on
its final answer with the final content beside, no citation mark ever matching a gold
answer, HotpotQA's yes/no F1 rule, SKC in knowledge items, FEVER without NOT ENOUGH INFO,
Table 5's units, and ``report --rescore``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from searchain import citations
from searchain.cli import app
from searchain.eval.datasets import dataset_fingerprint, load_dataset
from searchain.eval.rescore import rescore, rescore_records
from searchain.eval.runner import Item, prepare_run_dir, run
from searchain.scoring import (
    cover_em,
    exact_match,
    label_accuracy,
    score_trace,
    skc,
    supported_knowledge_count,
    supported_sentence_count,
    token_f1,
)
from searchain.types import Citation, Passage, Trace

# A comparison question where the chain names both entities but answers the wrong one (the
# shape of the 6 recorded Self-Ask HotpotQA items that were right only by their chain).
COMPARISON = Trace(
    question="Who was born first, Ada Lovelace or Charles Babbage?",
    method="self-ask",
    final_content="Ada Lovelace was born in 1815. Charles Babbage was born in 1791. "
    "So the final answer is: Ada Lovelace",
    answer="Ada Lovelace",
)
GOLD = {"answers": ["Charles Babbage"], "task": "multihop"}


def test_every_method_is_scored_on_its_final_answer_with_the_content_beside() -> None:
    scores = score_trace(COMPARISON, GOLD)
    # Before: cover-EM of the final content, 1.0 here (the chain names the gold entity).
    assert scores["cover_em"] == 0.0 and scores["em"] == 0.0 and scores["f1"] == 0.0
    assert scores["cover_em_content"] == 1.0
    # A method without a final content (direct prompting): both read its answer.
    direct = Trace(question="q", method="direct-prompting", answer="Charles Babbage")
    assert score_trace(direct, GOLD) == {"cover_em": 1.0, "em": 1.0, "f1": 1.0,
                                         "cover_em_content": 1.0}  # fmt: skip


def test_label_accuracy_reads_the_final_answer_too() -> None:
    t = Trace(question="q", method="cot", answer="no",
              final_content="Some say yes. So the answer is no.")  # fmt: skip
    s = score_trace(t, {"answers": ["yes"], "label": "yes", "task": "yesno"})
    assert s["accuracy"] == 0.0 and s["accuracy_content"] == 0.0
    t = Trace(question="q", method="cot", answer="It is not known",
              final_content="Yes, it is. It is not known")  # fmt: skip
    s = score_trace(t, {"answers": ["yes"], "label": "yes", "task": "yesno"})
    assert s["accuracy"] == 0.0 and s["accuracy_content"] == 1.0


def test_long_form_answers_are_scored_on_their_content() -> None:
    t = Trace(question="q", method="searchain", answer="x",
              final_content="Rain falls when droplets grow heavy [1].")  # fmt: skip
    s = score_trace(t, {"answers": ["Rain falls when droplets grow heavy."], "task": "longform"})
    assert set(s) == {"rouge_l"} and s["rouge_l"] > 0.9


def test_citation_marks_never_match_a_gold_answer() -> None:
    text = "The band formed in Los Angeles [1]. It released four albums [3]."
    for gold in ("1", "3"):  # before: "[1]" normalised to "1" and matched
        assert cover_em(text, gold) == 0.0
        assert token_f1(text, gold) == 0.0
    assert exact_match("Four [2]", "four") == 1.0
    assert cover_em("It released 4 albums [2].", "4") == 1.0  # the number itself still counts
    assert cover_em("Eleven [1, 2].", "2") == 0.0 and cover_em("x [1][2]", "1 2") == 0.0
    assert label_accuracy("So the answer is no [1].", "no") == 1.0
    assert citations.strip_marks("A [1]. B [2, 3].") == "A. B."


def test_f1_follows_hotpotqa_on_yes_no_and_noanswer() -> None:
    # hotpot_evaluate_v1.py: a differing side that is yes/no/noanswer scores 0, no partial
    # credit (SQuAD's F1 gives "yes it is" 0.5 against "yes").
    assert token_f1("yes it is", "yes") == 0.0
    assert token_f1("yes", "yes it is") == 0.0
    assert token_f1("no answer", "noanswer") == 0.0
    assert token_f1("Yes.", "yes") == 1.0 and token_f1("no", "No") == 1.0
    assert token_f1("no", "yes") == 0.0
    assert round(token_f1("the Eiffel tower", "Eiffel tower in Paris"), 3) == 0.667  # SQuAD
    assert token_f1("yes it is", ["yes", "yes it is"]) == 1.0  # the best gold


def test_skc_counts_knowledge_items_not_sentences() -> None:
    refs = [Passage("a", "x"), Passage("b", "y")]
    text = "Drew was born in Toronto [1][2]. He plays hockey [1]. Unsupported [7]."
    cites, _ = citations.resolve(text, refs)
    # Two sentences carry a resolved mark; three (sentence, mark) pairs are knowledge items.
    assert supported_sentence_count(text, cites) == 2
    assert supported_knowledge_count(text, cites) == 3
    repeated = [*cites, Citation(1, "a", "He plays hockey [1].")]
    assert supported_knowledge_count(text, repeated) == 3  # distinct pairs
    trace = Trace(question="q", method="searchain", final_content=text, citations=cites)
    assert skc(trace) == 3 and skc(trace, unit="sentences") == 2


def test_fever_is_supports_refutes_by_default(data_dir: Path) -> None:
    paper = load_dataset("fever")
    every = load_dataset("fever-nei")
    assert {e.label for e in paper} == {"SUPPORTS", "REFUTES"}
    assert "NOT ENOUGH INFO" in {e.label for e in every}
    assert len(paper) == sum(e.label != "NOT ENOUGH INFO" for e in every) < len(every)
    by_id = {e.id: e for e in every}
    assert all(by_id[e.id].question == e.question for e in paper)  # same ids as the file's
    assert all(e.label != "NOT ENOUGH INFO" for e in load_dataset("fever", limit=50, seed=3))
    # Another item set, another fingerprint: a run of the old `fever` is not resumed with it.
    fp, fp_nei = dataset_fingerprint("fever"), dataset_fingerprint("fever-nei")
    assert fp["sha256"] != fp_nei["sha256"] == fp["file_sha256"]
    assert fp["labels"] == ["SUPPORTS", "REFUTES"] and "labels" not in fp_nei


def test_efficiency_says_its_units_are_tokens(tmp_path: Path) -> None:
    from searchain.eval import report as rep

    prepare_run_dir(tmp_path, {"units": 1})
    run([Item("1", "q", {"answers": ["a"]})],
        {"m": lambda q: Trace(question=q, method="m", answer="a")}, tmp_path)  # fmt: skip
    md = rep.analyses([tmp_path])
    assert "| input tokens | output tokens |" in md
    assert "not words: the paper's Table 5 counts words" in md


def _hotpot_run(path: Path, answer: str) -> str:
    """A one-method run over the first HotpotQA question, recorded with the old scoring."""
    ex = load_dataset("hotpotqa", limit=1, seed=None)[0]
    sha = dataset_fingerprint("hotpotqa")["sha256"]
    prepare_run_dir(path, {"dataset": "hotpotqa", "dataset_sha256": sha, "limit": 1, "seed": None})

    def method(q: str) -> Trace:
        return Trace(question=q, method="self-ask", answer=answer)

    def old_score(item: Item, trace: Trace) -> dict[str, float]:
        return {"cover_em": cover_em(trace.final_content, item.gold["answers"]), "em": 0.0,
                "doc_recall@1": 0.5}  # fmt: skip

    run([Item(ex.id, ex.question, {"answers": ex.answers})], {"self-ask": method}, path,
        score=old_score)  # fmt: skip
    return ex.answers[0]


def test_rescore_recomputes_answer_metrics_and_keeps_the_others(
    tmp_path: Path, data_dir: Path
) -> None:
    gold = _hotpot_run(tmp_path / "r", "wrong")
    # Re-record the run with the gold in the content only: the old scoring said right.
    records = [json.loads(ln) for ln in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    records[0]["trace"]["final_content"] = f"A chain naming {gold} [1]. So: wrong"
    records[0]["metrics"]["cover_em"] = 1.0
    (tmp_path / "r" / "results.jsonl").write_text(json.dumps(records[0]) + "\n")
    got = rescore(tmp_path / "r").records[0]["metrics"]
    assert got["cover_em"] == 0.0 and got["cover_em_content"] == 1.0
    assert got["doc_recall@1"] == 0.5  # not an answer metric: kept as recorded
    failed = {"id": "x", "method": "m", "status": "error", "metrics": {}}
    assert rescore_records([failed], {}) == [failed]
    result = CliRunner().invoke(app, ["report", "--rescore", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "cover_em_content" in result.stdout
    assert "| r | self-ask | 1 | 0 | 0.0 [0.0, 0.0] |" in result.stdout  # cover_em, first


def test_rescore_refuses_a_run_of_other_data(tmp_path: Path, data_dir: Path) -> None:
    prepare_run_dir(tmp_path, {"dataset": "hotpotqa", "dataset_sha256": "0" * 64})
    result = CliRunner().invoke(app, ["report", "--rescore", str(tmp_path)])
    assert result.exit_code == 1 and "not the content the run recorded" in result.output
