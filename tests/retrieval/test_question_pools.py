"""Issue 29 T2: a data set that ships each question's own retrieved passages (ALCE's
``docs``) is searched per question, as ALCE and Think&Cite do, not through a global index.
The items are real ALCE ELI5 demos with their real docs (../shared/data/alce/prompts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from searchain.cli import app
from searchain.eval.datasets import load_dataset
from searchain.eval.runner import read_results
from searchain.retrieval.pools import QuestionPools, pool_passages
from searchain.retrieval.remote import RetrievalError


@pytest.fixture(scope="module")
def alce_file(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    demos = json.loads((data_dir / "alce" / "prompts" / "eli5_default.json").read_text())["demos"]
    rows = [{"question": d["question"], "answer": d["answer"], "claims": [], "docs": d["docs"]}
            for d in demos[:2]]  # fmt: skip
    path = tmp_path_factory.mktemp("alce") / "eli5_with_docs.json"
    path.write_text(json.dumps(rows))
    return path


def test_each_question_searches_only_its_own_pool(alce_file: Path) -> None:
    rows = json.loads(alce_file.read_text())
    pools = QuestionPools({r["question"]: pool_passages(f"q{i}", r["docs"])
                           for i, r in enumerate(rows)})  # fmt: skip
    for i, r in enumerate(rows):
        with pools.answering(r["question"]):
            hits = pools.search(r["question"], k=3)
        assert hits and all(h.id.startswith(f"q{i}#") for h in hits)
        assert {h.text for h in hits} <= {d["text"] for d in r["docs"]}
    with pytest.raises(RetrievalError, match="outside any question"):
        pools.search("anything")
    with pools.answering("a question with no pool"), pytest.raises(RetrievalError, match="no"):
        pools.search("anything")


def test_eval_searches_the_items_docs_and_can_be_told_not_to(
    alce_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real run (Gemma 270M, retrieve-read): with the docs, every reference is one of the
    item's own passages and the manifest says so; --no-question-docs searches the demo
    index; asking for docs on a data set without them is an error."""
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    rows = json.loads(alce_file.read_text())
    base = ["eval", "--dataset", str(alce_file), "--methods", "direct-retrieval", "--limit", "2",
            "--concurrency", "1", "--nli", "none", "-k", "3"]  # fmt: skip
    res = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "pools")])
    assert res.exit_code == 0, res.output
    assert "searching each item's own passages" in res.stderr
    by_question = {r["question"]: {d["text"] for d in r["docs"]} for r in rows}
    for row in read_results(tmp_path / "pools"):
        assert row["status"] == "ok", row.get("error")
        refs = row["trace"]["references"]
        assert refs and {p["text"] for p in refs} <= by_question[row["trace"]["question"]]
    manifest = json.loads((tmp_path / "pools" / "manifest.json").read_text())
    assert manifest["config"]["question_docs"] is True

    res = CliRunner().invoke(app, [*base, "--no-question-docs", "--out", str(tmp_path / "idx")])
    assert res.exit_code == 0, res.output
    ids = {e.id for e in load_dataset(str(alce_file))}
    for row in read_results(tmp_path / "idx"):
        refs = row["trace"]["references"]
        assert refs and not any(p["id"].split("#")[0] in ids for p in refs)  # the demo index
    assert (
        "question_docs"
        not in json.loads((tmp_path / "idx" / "manifest.json").read_text())["config"]
    )
    res = CliRunner().invoke(app, ["eval", "--dataset", "hotpotqa", "--limit", "1",
                                   "--question-docs", "--out", str(tmp_path / "no")])  # fmt: skip
    assert res.exit_code != 0 and "carry no docs of their own" in res.output
