"""Dataset loaders: every named dataset on the real files in ../shared/data, deterministic
subsampling and error reporting (the public formats on hand-made files:
test_dataset_formats.py)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from searchain.eval.datasets import (
    DATASETS,
    DatasetError,
    Example,
    dataset_fingerprint,
    load_dataset,
    subsample,
)
from searchain.eval.datasets import data_dir as default_data_dir
from searchain.retrieval import CorpusError, read_corpus, read_documents

COUNTS = {
    "hotpotqa": 500,
    "musique": 100,
    "strategyqa": 229,
    "fever": 6_666,  # SUPPORTS/REFUTES only, the SearChain paper's setting
    "fever-nei": 9_999,
    "nq": 3_610,
    "nq-efficientqa": 1_769,
    "webq": 2_032,
    "webq-train": 3_478,
    "compositional-celebrities": 8_693,
    "eli5": 1_000,
    "qampari": 1_000,
    "bamboogle": 125,
}
TASK = {
    "hotpotqa": "multihop",
    "musique": "multihop",
    "strategyqa": "yesno",
    "fever": "factcheck",
    "fever-nei": "factcheck",
    "nq": "open",
    "nq-efficientqa": "open",
    "webq": "open",
    "webq-train": "open",
    "compositional-celebrities": "multihop",
    "eli5": "longform",
    "qampari": "list",
    "bamboogle": "multihop",
}


@functools.cache
def _full(name: str) -> tuple[Example, ...]:
    return tuple(load_dataset(name))


def test_every_data_file_has_a_name() -> None:
    assert set(COUNTS) == set(DATASETS)


def test_default_data_dir_is_shared_data(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.delenv("SEARCHAIN_DATA")
    assert default_data_dir().resolve() == data_dir.resolve()


@pytest.mark.parametrize("name", list(COUNTS))
def test_named_dataset_loads_completely(name: str) -> None:
    examples = _full(name)
    assert len(examples) == COUNTS[name]
    assert len({e.id for e in examples}) == len(examples)
    for e in examples:
        assert e.id and e.question and e.question == e.question.strip()
        assert all(isinstance(a, str) and a for a in e.answers)
        assert e.task == TASK[name]
        assert e.meta["dataset"] == name
        assert Example.from_dict(json.loads(json.dumps(e.to_dict()))) == e
    # The only items without a gold answer: 5 currency symbols the source data leaves empty.
    unanswered = [e for e in examples if not e.answers]
    assert len(unanswered) == (5 if name == "compositional-celebrities" else 0)
    assert all(e.meta["category"] == "birthplace_currency_symbol" for e in unanswered)


def test_hotpotqa_gold_passages_are_pooled_corpus_ids(data_dir: Path) -> None:
    examples = _full("hotpotqa")
    first = examples[0]
    assert first.id == "5a8c7595554299585d9e36b6"
    assert first.answers == ["Chief of Protocol"]
    assert [p["title"] for p in first.gold_passages] == [
        "Shirley Temple",
        "Kiss and Tell (1945 film)",
    ]
    assert len(first.meta["contexts"]) == 10
    assert all(len(e.gold_passages) == 2 for e in examples)
    ids = {p.id for p in read_corpus(data_dir / "hotpotqa/dev_subsampled.jsonl")}
    assert all(p["id"] in ids for e in examples for p in e.gold_passages)


def test_musique_answers_aliases_and_gold_ids(data_dir: Path) -> None:
    examples = _full("musique")
    first = examples[0]
    assert first.id == "2hop__150763_14904"
    assert first.answers == ["G. Stanley Hall", "Stanley Hall"]  # answer + alias
    assert len(first.meta["decomposition"]) == 2
    assert len(first.meta["contexts"]) == 20
    corpus = {p.id for p in read_documents(data_dir / "musique/musique_train_corpus.json")}
    gold = [p["id"] for e in examples for p in e.gold_passages]
    assert len(gold) >= 2 * len(examples)
    assert all(g in corpus for g in gold)


def test_strategyqa_bool_answer_becomes_yes_no_label() -> None:
    examples = _full("strategyqa")
    assert examples[0].label == "no" and examples[0].answers == ["no"]
    labels = [e.label for e in examples]
    assert labels.count("yes") == 107 and labels.count("no") == 122
    assert examples[0].meta["facts"] and examples[0].meta["decomposition"]


def test_fever_labels_and_evidence() -> None:
    examples = _full("fever-nei")
    labels = [e.label for e in examples]
    for label in ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"):
        assert labels.count(label) == 3333
    paper = [e.label for e in _full("fever")]  # the paper's setting: no NOT ENOUGH INFO
    assert paper.count("SUPPORTS") == paper.count("REFUTES") == 3333 == len(paper) / 2
    supported = next(e for e in examples if e.id == "137334")
    assert supported.question == "Fox 2000 Pictures released the film Soul Food."
    assert supported.answers == ["SUPPORTS"]
    assert supported.gold_passages[0]["id"] == "Soul_Food_-LRB-film-RRB-#0"
    # the title as Wikipedia (and every corpus here) writes it, so the taxonomy can match it
    assert supported.gold_passages[0]["title"] == "Soul Food (film)"
    nei = examples[0]
    assert nei.label == "NOT ENOUGH INFO" and nei.gold_passages == []


def test_open_qa_files() -> None:
    nq = _full("nq")[0]
    assert nq.answers == ["14 December 1972 UTC", "December 1972"]
    assert nq.id.startswith("q") and len(nq.id) == 17
    eqa = _full("nq-efficientqa")[0]
    assert eqa.meta["def_correct_predictions"] == ["six geese a-laying"]
    webq = _full("webq")[0]
    assert (webq.id, webq.answers) == (
        "0",
        ["Jamaican Creole English Language", "Jamaican English"],
    )


def test_compositional_celebrities_keeps_category_and_sub_answers() -> None:
    examples = _full("compositional-celebrities")
    first = examples[0]
    assert first.question == "What is the capital of the birthplace of Rumi?"
    assert first.answers == ["Kabul"]
    assert first.meta["category"] == "birthplace_capital"
    assert first.meta["sub_questions"] == [
        {"question": "What is the birthplace (country only) of Rumi?", "answers": ["Afghanistan"]},
        {"question": "What is the capital of Afghanistan?", "answers": ["Kabul"]},
    ]
    assert len({e.meta["category"] for e in examples}) == 17
    lat = next(e for e in examples if e.meta["category"] == "birthplace_rounded_lat")
    assert lat.answers == ["33"]  # numeric answers become text


def test_alce_eli5_and_qampari() -> None:
    eli5 = _full("eli5")
    assert all(len(e.claims) == 3 for e in eli5)
    assert eli5[0].meta["long_answers"] == eli5[0].answers
    qampari = _full("qampari")[0]
    assert qampari.id == "799__wikidata_simple__dev"
    assert qampari.meta["answer_groups"][:2] == [["Heat"], ["Mai, the Psychic Girl"]]
    assert qampari.answers[0] == "Heat"


def test_bamboogle_csv() -> None:
    first = _full("bamboogle")[0]
    assert first.question.startswith("Who was president of the United States in the year")
    assert first.answers == ["james madison"]


# -- subsampling ---------------------------------------------------------------------------


def test_subsample_is_deterministic_seed_dependent_and_in_file_order() -> None:
    full = _full("hotpotqa")
    position = {e.id: i for i, e in enumerate(full)}
    a = [e.id for e in load_dataset("hotpotqa", limit=20, seed=0)]
    b = [e.id for e in load_dataset("hotpotqa", limit=20, seed=0)]
    c = [e.id for e in load_dataset("hotpotqa", limit=20, seed=1)]
    assert a == b and len(a) == 20
    assert a != c
    assert [position[i] for i in a] == sorted(position[i] for i in a)
    assert a != [e.id for e in full[:20]]  # a real sample, not the head of the file
    bigger = {e.id for e in load_dataset("hotpotqa", limit=50, seed=0)}
    assert set(a) <= bigger  # growing the limit keeps the items already picked


def test_subsample_edge_cases() -> None:
    full = list(_full("bamboogle"))
    head = load_dataset("bamboogle", limit=7, seed=None)
    assert [e.id for e in head] == [e.id for e in full[:7]]
    assert len(load_dataset("bamboogle", limit=1000)) == 125
    assert load_dataset("bamboogle", limit=0) == []
    with pytest.raises(ValueError):
        subsample(full, -1, 0)


def test_subsample_known_picks() -> None:
    # Pinned: the hash-keyed shuffle must pick the same items on every platform and version.
    items = [Example(id=str(i), question=f"q{i}", answers=["a"]) for i in range(10)]
    assert [e.id for e in subsample(items, 3, 0)] == ["1", "4", "8"]
    assert [e.id for e in subsample(items, 3, 7)] == ["0", "3", "7"]


# -- fingerprints, names and errors --------------------------------------------------------


def test_fingerprint_of_name_and_path(data_dir: Path) -> None:
    by_name = dataset_fingerprint("bamboogle")
    by_path = dataset_fingerprint(data_dir / "bamboogle/test.csv")
    assert by_name["sha256"] == by_path["sha256"] and len(by_name["sha256"]) == 64
    assert by_name["name"] == "bamboogle" and "name" not in by_path
    assert by_name["size"] == (data_dir / "bamboogle/test.csv").stat().st_size


def test_unknown_name_and_missing_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FileNotFoundError, match="named datasets"):
        load_dataset("no-such-dataset")
    monkeypatch.setenv("SEARCHAIN_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="SEARCHAIN_DATA"):
        load_dataset("nq")


def test_data_dir_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "nq").mkdir()
    (tmp_path / "nq/NQ-open.dev.jsonl").write_text('{"question": "who?", "answer": ["me"]}\n')
    monkeypatch.setenv("SEARCHAIN_DATA", str(tmp_path))
    [only] = load_dataset("nq")
    assert (only.question, only.answers) == ("who?", ["me"])


def _head(path: Path, n: int) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [next(f) for _ in range(n)]


def test_malformed_jsonl_line_names_file_and_line(tmp_path: Path, data_dir: Path) -> None:
    for name, rel in (
        ("hotpotqa", "hotpotqa/dev_subsampled.jsonl"),
        ("fever", "fever/paper_dev.jsonl"),
    ):
        bad = tmp_path / f"{name}.jsonl"
        bad.write_text("".join(_head(data_dir / rel, 3)) + '{"claim": "oops"\n')
        with pytest.raises(CorpusError, match=rf"^{bad}:4: invalid JSON"):
            load_dataset(bad)


def test_missing_field_names_file_and_line(tmp_path: Path, data_dir: Path) -> None:
    lines = _head(data_dir / "fever/paper_dev.jsonl", 3)
    record = json.loads(lines[1])
    del record["claim"]
    bad = tmp_path / "fever.jsonl"
    bad.write_text(lines[0] + json.dumps(record) + "\n" + lines[2])
    with pytest.raises(DatasetError, match=rf'^{bad}:2: missing field "claim"'):
        load_dataset(bad, fmt="fever")
    lines[1] = lines[1].replace('"NOT ENOUGH INFO"', '"MAYBE"')
    bad.write_text("".join(lines))
    with pytest.raises(DatasetError, match=rf"^{bad}:2: field \"label\" must be one of"):
        load_dataset(bad)


def test_malformed_json_array_element_names_its_line(tmp_path: Path, data_dir: Path) -> None:
    records = json.loads((data_dir / "strategyqa/strategyqa_dev.json").read_text())[:2]
    records[1]["answer"] = "perhaps"
    bad = tmp_path / "strategyqa.json"
    bad.write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    with pytest.raises(DatasetError, match=rf'^{bad}:3: field "answer" must be a boolean'):
        load_dataset(bad)
    bad.write_text("[\n" + json.dumps(records[0]) + ",\n{oops}\n]\n")
    with pytest.raises(CorpusError, match=rf"^{bad}:3: invalid JSON"):
        load_dataset(bad)


def test_malformed_csv_row(tmp_path: Path) -> None:
    bad = tmp_path / "b.csv"
    bad.write_text("Question,Answer\nWho?,me\nWhat?,x,y\n")
    with pytest.raises(DatasetError, match=rf"^{bad}:3: expected 2 columns"):
        load_dataset(bad)


def test_repeated_questions_get_unique_ids(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text('{"question": "q", "answers": ["a"]}\n' * 3)
    ids = [e.id for e in load_dataset(path)]
    assert ids[1:] == [f"{ids[0]}~2", f"{ids[0]}~3"]
