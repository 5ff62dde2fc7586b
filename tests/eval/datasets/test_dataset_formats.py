"""Dataset loaders on the public formats (HotpotQA, MuSiQue, NQ, FEVER, ... as their projects
publish them), read from small hand-made files: detection, fields, and what is refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from searchain.eval.datasets import (
    DatasetError,
    detect_dataset_format,
    load_dataset,
)


def _write(path: Path, records: list[dict], *, jsonl: bool) -> Path:
    if jsonl:
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        path.write_text(json.dumps(records, indent=2))
    return path


HOTPOT = {
    "_id": "5a7a06935542990198eaf050",
    "answer": "Arthur's Magazine",
    "question": "Which magazine was started first Arthur's Magazine or First for Women?",
    "supporting_facts": [["Arthur's Magazine", 0], ["First for Women", 0]],
    "context": [
        ["Radio City (Indian radio station)",
         ["Radio City is India's first radio station.", " It started in 2001."]],
        ["Arthur's Magazine",
         ["Arthur's Magazine (1844–1846) was an American literary periodical.",
          " It was published in Philadelphia."]],
        ["First for Women",
         ["First for Women is a woman's magazine published by Bauer Media Group.",
          " It was started in 1989."]],
    ],
    "type": "comparison",
    "level": "medium",
}  # fmt: skip


def test_hotpotqa_original_distractor(tmp_path: Path) -> None:
    path = _write(tmp_path / "hotpot_dev_distractor_v1.json", [HOTPOT], jsonl=False)
    assert detect_dataset_format(path) == "hotpotqa"
    [e] = load_dataset(path)
    assert e.id == HOTPOT["_id"] and e.answers == ["Arthur's Magazine"] and e.task == "multihop"
    assert [g["id"] for g in e.gold_passages] == ["Arthur's Magazine", "First for Women"]
    assert e.gold_passages[0]["text"].endswith("It was published in Philadelphia.")
    assert e.gold_passages[0]["sentence_ids"] == [0]
    assert [c["is_supporting"] for c in e.meta["contexts"]] == [False, True, True]
    assert e.meta["type"] == "comparison" and e.meta["level"] == "medium"


def test_2wikimultihopqa(tmp_path: Path) -> None:
    record = {
        "_id": "8813f87c0bdd11eba7f7acde48001122",
        "type": "compositional",
        "question": "Who is the mother of the director of film Polish-Russian War (Film)?",
        "context": [
            ["Polish-Russian War (film)",
             ["Polish-Russian War is a 2009 Polish film directed by Xawery Żuławski."]],
            ["Xawery Żuławski",
             ["Xawery Żuławski is a Polish film director.", " His mother is Małgorzata Braunek."]],
        ],
        "supporting_facts": [["Polish-Russian War (film)", 0], ["Xawery Żuławski", 1]],
        "evidences": [["Polish-Russian War", "director", "Xawery Żuławski"],
                      ["Xawery Żuławski", "mother", "Małgorzata Braunek"]],
        "answer": "Małgorzata Braunek",
    }  # fmt: skip
    path = _write(tmp_path / "dev.json", [record], jsonl=False)
    assert detect_dataset_format(path) == "2wikimultihopqa"
    [e] = load_dataset(path)
    assert e.answers == ["Małgorzata Braunek"]
    assert e.meta["evidences"][1][1] == "mother"
    assert [g["title"] for g in e.gold_passages] == ["Polish-Russian War (film)", "Xawery Żuławski"]


def test_musique_jsonl(tmp_path: Path, data_dir: Path) -> None:
    records = json.loads((data_dir / "musique/musique_train.json").read_text())[:3]
    path = _write(tmp_path / "musique_ans_v1.0_dev.jsonl", records, jsonl=True)
    assert detect_dataset_format(path) == "musique"
    loaded, named = load_dataset(path), list(load_dataset("musique"))[:3]
    for a, b in zip(loaded, named, strict=True):
        assert (a.id, a.question, a.answers, a.gold_passages) == (
            b.id,
            b.question,
            b.answers,
            b.gold_passages,
        )
        assert "dataset" not in a.meta and a.meta["format"] == "musique"


def test_strategyqa_and_fever_user_files(tmp_path: Path) -> None:
    sqa = _write(
        tmp_path / "sqa.json",
        [{"qid": "abc", "term": "Pear", "description": "fruit",
          "question": "Would a pear sink in water?", "answer": False,
          "facts": ["The density of a pear is about 0.6 g/cm^3."], "decomposition": ["…"]}],
        jsonl=False,
    )  # fmt: skip
    [e] = load_dataset(sqa)
    assert (e.id, e.label, e.answers, e.task) == ("abc", "no", ["no"], "yesno")
    fever = _write(
        tmp_path / "fever.jsonl",
        [{"id": 1, "claim": "Telemundo is an English-language television network.",
          "label": "REFUTES", "verifiable": "VERIFIABLE",
          "evidence": [[[1, 2, "Telemundo", 0]], [[1, 3, "Telemundo", 0], [1, 4, "Spanish", 2]]]}],
        jsonl=True,
    )  # fmt: skip
    [f] = load_dataset(fever)
    assert (f.id, f.label, f.task) == ("1", "REFUTES", "factcheck")
    assert [g["id"] for g in f.gold_passages] == ["Telemundo#0", "Spanish#2"]
    assert f.meta["evidence_sets"] == [[["Telemundo", 0]], [["Telemundo", 0], ["Spanish", 2]]]


def test_webquestions_original(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "webquestions.examples.test.json",
        [{"url": "http://www.freebase.com/view/en/jamaica",
          "targetValue":
              '(list (description "Jamaican Creole English Language") (description Jamaican))',
          "utterance": "what does jamaican people speak?"}],
        jsonl=False,
    )  # fmt: skip
    assert detect_dataset_format(path) == "webquestions"
    [e] = load_dataset(path)
    assert e.answers == ["Jamaican Creole English Language", "Jamaican"]
    assert e.question == "what does jamaican people speak?"


def test_triviaqa_original_and_jsonl(tmp_path: Path) -> None:
    record = {
        "Question": "Which Lloyd Webber musical premiered in the US on 10th December 1993?",
        "QuestionId": "tc_33",
        "Answer": {"Value": "Sunset Boulevard", "Aliases": ["Sunset Blvd", "Sunset Boulevard"],
                   "NormalizedAliases": ["sunset blvd", "sunset boulevard"]},
    }  # fmt: skip
    original = tmp_path / "wikipedia-dev.json"
    original.write_text(
        json.dumps({"Data": [record], "Domain": "Wikipedia", "Version": 1.0}, indent=1)
    )
    assert detect_dataset_format(original) == "qa"
    [e] = load_dataset(original)
    assert (e.id, e.answers) == ("tc_33", ["Sunset Boulevard", "Sunset Blvd"])
    assert e.meta["normalized_aliases"] == ["sunset blvd", "sunset boulevard"]
    hf = _write(
        tmp_path / "triviaqa.jsonl",
        [{"question": record["Question"], "question_id": "tc_33",
          "answer": {"value": "Sunset Boulevard", "aliases": ["Sunset Blvd"]}},
         {"question": "Who wrote Hamlet?", "answers": ["Shakespeare", "William Shakespeare"]}],
        jsonl=True,
    )  # fmt: skip
    a, b = load_dataset(hf)
    assert (a.id, a.answers) == ("tc_33", ["Sunset Boulevard", "Sunset Blvd"])
    assert b.answers == ["Shakespeare", "William Shakespeare"]


def test_alce_asqa(tmp_path: Path) -> None:
    record = {
        "sample_id": "-6681997980074150658",
        "question": "Who played bonnie in gone with the wind?",
        "qa_pairs": [
            {"question": "Who played Bonnie in the 1939 film?", "short_answers": ["Cammie King"]},
            {"question": "Who played Bonnie in the musical?",
             "short_answers": ["Leilah de Meza", "Leilah"]},
        ],
        "annotations": [{"long_answer": "Cammie King played Bonnie.", "knowledge": []},
                        {"long_answer": "Bonnie was played by Cammie King.", "knowledge": []}],
        "answer": "Cammie King played Bonnie.",
        "docs": [{"title": "Cammie King", "text": "Cammie King played Bonnie Blue Butler."}],
    }  # fmt: skip
    path = _write(tmp_path / "asqa_eval_gtr_top100.json", [record], jsonl=False)
    assert detect_dataset_format(path) == "alce"
    [e] = load_dataset(path)
    assert e.id == "-6681997980074150658" and e.task == "longform"
    assert e.meta["alce"] == "asqa"
    assert e.meta["answer_groups"] == [["Cammie King"], ["Leilah de Meza", "Leilah"]]
    assert e.meta["long_answers"] == [
        "Cammie King played Bonnie.",
        "Bonnie was played by Cammie King.",
    ]
    assert e.meta["docs"][0]["title"] == "Cammie King"


def test_compositional_celebrities_jsonl_and_plain_qa(tmp_path: Path) -> None:
    cc = _write(
        tmp_path / "cc.jsonl",
        [{"Q1": "In what year was X born?", "A1": ["1934"], "Q2": "Who won in 1934?",
          "A2": ["Y"], "Question": "Who won in the year X was born?", "Answer": ["Y"],
          "category": "birthyear_masterchamp"}],
        jsonl=True,
    )  # fmt: skip
    [c] = load_dataset(cc)
    assert c.meta["category"] == "birthyear_masterchamp" and c.answers == ["Y"]
    plain = _write(
        tmp_path / "mine.jsonl",
        [{"id": "a", "question": "Is the sky blue?", "answers": ["yes"], "label": "yes"},
         {"id": "b", "question": "Capital of France?", "answers": ["Paris"]},
         {"id": "c", "question": "Claim?", "label": "supports"}],
        jsonl=True,
    )  # fmt: skip
    a, b, c2 = load_dataset(plain)
    assert (a.task, a.label) == ("yesno", "yes")
    assert (b.task, b.answers, b.label) == ("open", ["Paris"], None)
    assert (c2.task, c2.label, c2.answers) == ("factcheck", "SUPPORTS", ["SUPPORTS"])


def test_dpr_qas_and_gzip(tmp_path: Path) -> None:
    path = tmp_path / "nq-test.qa.csv"
    path.write_text("who got the first nobel prize in physics\t['Wilhelm Conrad Röntgen']\n"
                    'when is the next deadpool movie\t["May 18, 2018", "2018"]\n')  # fmt: skip
    assert detect_dataset_format(path) == "dpr-qas"
    a, b = load_dataset(path)
    assert a.answers == ["Wilhelm Conrad Röntgen"] and b.answers == ["May 18, 2018", "2018"]
    gz = tmp_path / "nq.jsonl.gz"
    with gzip.open(gz, "wt") as f:
        f.write('{"question": "q1", "answer": ["a1"]}\n{"question": "q2", "answer": ["a2"]}\n')
    assert [e.answers for e in load_dataset(gz)] == [["a1"], ["a2"]]


def test_unknown_format(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.jsonl", [{"foo": 1}], jsonl=True)
    with pytest.raises(DatasetError, match="cannot detect"):
        load_dataset(path)
    with pytest.raises(ValueError, match="unknown dataset format"):
        load_dataset(path, fmt="nope")
