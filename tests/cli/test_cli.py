"""The ``searchain`` command line, end to end (real index, real embedded model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from searchain.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cli-cache"))


def write_corpus(path: Path, bad_line: int | None = None) -> Path:
    topics = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
    lines = [
        json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": f"This document is about {t}."})
        for i, t in enumerate(topics, 1)
    ]
    if bad_line:
        lines[bad_line - 1] = '{"id": "broken", "title": "x", "text": '
    path.write_text("\n".join(lines) + "\n")
    return path


def test_help_teaches_the_commands() -> None:
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "searchain"), "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    for command in ("ask", "index", "search"):
        assert command in proc.stdout
    ask_help = runner.invoke(app, ["ask", "--help"]).output
    assert "--llm" in ask_help and "--json" in ask_help and "--base-url" in ask_help


@pytest.mark.parametrize("columns", [80, 140])
def test_help_cuts_no_word_at_any_width(columns: int) -> None:
    # In 80 columns rich's option table squeezed the help into a sliver and cut long words
    # with an ellipsis; below 100 columns the plain layout is used, markup rendered.
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "searchain"), "ask", "--help"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "with [n] citations" in text  # a literal bracket is not taken for markup
    assert "…" not in text and "[bold]" not in text and "[/]" not in text
    assert max(len(line) for line in text.splitlines()) <= columns
    # the longest example is there whole, however it was wrapped
    assert "llm-url:base=http://127.0.0.1:8765,m=5,shots=0" in "".join(text.split())


def test_malformed_corpus_names_file_and_line_and_writes_nothing(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "bad.jsonl", bad_line=7)
    out = tmp_path / "idx"
    result = runner.invoke(app, ["index", str(corpus), "--out", str(out)])
    assert result.exit_code == 1
    assert "bad.jsonl:7" in " ".join(result.output.split())
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.jsonl"]  # no temp dirs left behind


def test_index_then_search_json(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "good.jsonl")
    out = tmp_path / "idx"
    built = runner.invoke(app, ["index", str(corpus), "--out", str(out), "--json"])
    assert built.exit_code == 0, built.output
    assert json.loads(built.stdout) == {"index": str(out), "kind": "bm25", "passages": 10}
    found = runner.invoke(
        app, ["search", "golf document", "--index", str(out), "-k", "3", "--json"]
    )
    hits = json.loads(found.stdout)
    assert len(hits) == 3 and hits[0]["id"] == "d7"
    assert hits[0]["score"] >= hits[1]["score"] >= hits[2]["score"]


def test_dense_and_hybrid_index_then_search(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "good.jsonl")
    bm25, dense = tmp_path / "bm25", tmp_path / "dense"
    assert runner.invoke(app, ["index", str(corpus), "-o", str(bm25)]).exit_code == 0
    built = runner.invoke(
        app, ["index", str(corpus), "-o", str(dense), "--kind", "dense", "--json"]
    )
    assert built.exit_code == 0, built.output
    assert json.loads(built.stdout) == {"index": str(dense), "kind": "dense", "passages": 10}
    for retriever in ("dense", "hybrid"):
        found = runner.invoke(
            app,
            ["search", "a document on golf", "--retriever", retriever, "--index", str(bm25),
             "--dense-index", str(dense), "-k", "3", "--json"],
        )  # fmt: skip
        assert found.exit_code == 0, found.output
        assert json.loads(found.stdout)[0]["id"] == "d7"
    bad = runner.invoke(app, ["index", str(corpus), "-o", str(tmp_path / "x"), "--kind", "tfidf"])
    assert bad.exit_code != 0 and "--kind" in bad.output


def test_search_on_a_missing_index_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["search", "x", "--index", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert "not a searchain BM25 index" in " ".join(result.output.split())


@pytest.mark.slow
@pytest.mark.parametrize("method", ["searchain", "retrieve-read"])
def test_ask_offline_json_trace(method: str) -> None:
    q = "Who was known by his stage name Aladin?"
    result = runner.invoke(app, ["ask", q, "--method", method, "--json"])
    assert result.exit_code == 0, result.output
    trace = json.loads(result.stdout)
    assert trace["question"] == q and trace["method"] == method
    assert trace["final_content"] and trace["references"]
    refs = [r["id"] for r in trace["references"]]
    assert trace["citations"]
    for c in trace["citations"]:
        assert c["passage_id"] == refs[c["mark"] - 1]
    assert trace["usage"]["llm_calls"] + trace["usage"]["cached_calls"] >= 1
    if method == "searchain":
        assert trace["nodes"][0]["source"] == "question" and len(trace["nodes"]) >= 2
        assert 1 <= trace["rounds"] <= 5


@pytest.mark.slow
def test_ask_ablation_without_ir_uses_no_retrieval() -> None:
    result = runner.invoke(app, ["ask", "Who wrote Hamlet?", "--no-ir", "--json"])
    assert result.exit_code == 0, result.output
    trace = json.loads(result.stdout)
    assert trace["method"] == "searchain-no-ir" and trace["references"] == []
    assert all(not n["passages"] for n in trace["nodes"])


@pytest.mark.slow
def test_ask_human_output_shows_citations_and_references() -> None:
    result = runner.invoke(app, ["ask", "--show-tree"])  # the demo question, demo corpus
    assert result.exit_code == 0, result.output
    assert "References" in result.output and "[1]" in result.output
    assert "Big Stone Gap" in result.output and "Tree-of-Reasoning" in result.output
    # SearChain reads first by default: the route it took, and why, is said under the answer
    assert "Route: answered in one read" in result.output or (
        "Route: read first, then planned a chain of queries because" in result.output
    ), result.output


def test_missing_template_file_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ask", "q", "--template", str(tmp_path / "none.txt")])
    assert result.exit_code == 1
    assert "no prompt template" in result.output


def test_serve_index_and_search_through_it(tmp_path: Path) -> None:
    import os
    import time
    import urllib.request

    from servers import free_port

    port = free_port()
    env = {**os.environ, "SEARCHAIN_CACHE_DIR": str(tmp_path / "cache")}
    exe = str(Path(sys.executable).parent / "searchain")
    server = subprocess.Popen(
        [exe, "serve-index", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.2)
        args = ["search", "Corliss Archer Kiss and Tell", "-k", "3", "--json"]
        local = runner.invoke(app, [*args, "--retriever", "bm25"])  # what serve-index serves
        remote = runner.invoke(app, [*args, "--retriever", f"remote:http://127.0.0.1:{port}"])
        assert remote.exit_code == 0, remote.output
        assert json.loads(remote.stdout) == json.loads(local.stdout)
    finally:
        server.terminate()
        server.wait(10)


def test_serve_index_refuses_a_public_address() -> None:
    result = runner.invoke(app, ["serve-index", "--host", "0.0.0.0"])
    assert result.exit_code == 1
    assert "allow" in result.output.lower()


def test_method_options_parse_and_route() -> None:
    from searchain.methods.options import parse_method_options

    got = parse_method_options(
        ["thinkcite.n_children=2", "seed=7", "family=eli5", "searchain.theta=-1.0", "x=null"],
        ["thinkcite", "searchain"],
    )
    assert got["thinkcite"] == {"n_children": 2, "seed": 7, "family": "eli5", "x": None}
    assert got["searchain"] == {"seed": 7, "family": "eli5", "theta": -1.0, "x": None}
    # A method-specific value wins over a plain one, whatever the order.
    assert parse_method_options(["rebel.k=2", "k=5"], ["rebel"])["rebel"] == {"k": 2}
    for bad, why in (("n_children", "KEY=VALUE"), ("Bad Key=1", "KEY=VALUE"),
                     ("react.k=1", "not run here"), ("k=[1,2]", "scalars")):  # fmt: skip
        with pytest.raises(ValueError, match=why):
            parse_method_options([bad], ["thinkcite"])


def test_unknown_method_option_is_a_clear_error() -> None:
    result = runner.invoke(app, ["ask", "q", "--method", "thinkcite", "-O", "n_chidlren=2"])
    assert result.exit_code != 0 and "thinkcite has no setting n_chidlren" in result.output


@pytest.mark.slow
def test_ask_thinkcite_with_options_on_the_real_model() -> None:
    q = "Who was known by his stage name Aladin?"
    opts = ["n_children=2", "max_reflections=1", "n_demos=1", "seed=3"]
    args = ["ask", q, "--method", "thinkcite", "--json", "--iterations", "1"]
    args += [x for o in opts for x in ("-O", o)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    trace = json.loads(result.stdout)
    mcts = trace["meta"]["config"]["mcts"]
    assert (mcts["n_children"], mcts["max_iterations"], mcts["seed"]) == (2, 1, 3)
    assert trace["meta"]["config"]["agent"]["max_reflections"] == 1
    assert trace["meta"]["iterations"] == 1 and 2 <= len(trace["nodes"]) <= 3
    assert trace["meta"]["child_errors"] == [] and trace["meta"]["resampled_children"] >= 0
    # One expansion of the root: its children differ (a duplicate would have been re-sampled).
    children = [(n["meta"]["action"], n["answer"]) for n in trace["nodes"] if n["parent"] == "0"]
    assert len(set(children)) == len(children)
    refs = [r["id"] for r in trace["references"]]
    assert trace["final_content"] and all(
        c["passage_id"] == refs[c["mark"] - 1] for c in trace["citations"]
    )


def test_a_passage_two_steps_found_is_listed_once_with_both_marks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SearChain's mark k is step k's passage; when steps 1 and 3 found the same passage the
    references show it once as [1][3] (cited if either mark is), not twice."""
    from searchain.cli.ask import reference_groups, show_trace
    from searchain.types import Citation, Passage, Trace

    gap = Passage(
        id="Big Stone Gap (film)#0", title="Big Stone Gap (film)",
        text="Big Stone Gap is a 2014 romantic comedy film directed by Adriana Trigiani.",
    )  # fmt: skip
    trigiani = Passage(
        id="Adriana Trigiani#0", title="Adriana Trigiani",
        text="Adriana Trigiani is a best-selling author based in Greenwich Village.",
    )  # fmt: skip
    nothing = Passage(id="", text="")  # a step whose retrieval found nothing: never merged
    first, second = "Adriana Trigiani directed it [3].", "She is based in Greenwich Village [2]."
    trace = Trace(
        question="Where is the director of Big Stone Gap based?", method="searchain",
        answer="Greenwich Village", final_content=f"{first} {second}",
        references=[gap, trigiani, gap, nothing, nothing],
        citations=[Citation(mark=3, passage_id=gap.id, sentence=first),
                   Citation(mark=2, passage_id=trigiani.id, sentence=second)],
    )  # fmt: skip
    assert [(marks, p.id) for marks, p in reference_groups(trace)] == [
        ([1, 3], gap.id),
        ([2], trigiani.id),
        ([4], ""),
        ([5], ""),
    ]
    show_trace(trace)
    out = capsys.readouterr().out
    assert out.count("Big Stone Gap (film)#0") == 1
    line = next(ln for ln in out.splitlines() if "Big Stone Gap (film)#0" in ln)
    assert "[1][3]" in line and "not cited" not in line  # cited through mark 3


def test_references_say_why_the_evidence_step_read_them(capsys: pytest.CaptureFixture) -> None:
    """SearChain's evidence step reads passages the question's words and the chain's nodes
    found; each reference says which (issue 50)."""
    from searchain.cli.ask import show_trace
    from searchain.types import Citation, Passage, Trace

    gap = Passage(id="Big Stone Gap (film)#0", title="Big Stone Gap (film)", text="A film.")
    other = Passage(id="Nola (film)#0", title="Nola (film)", text="Another film.")
    trace = Trace(
        question="Who directed Big Stone Gap?", method="searchain", answer="Adriana Trigiani",
        final_content="Adriana Trigiani [1].", references=[gap, other],
        citations=[Citation(mark=1, passage_id=gap.id, sentence="Adriana Trigiani [1].")],
    )  # fmt: skip
    trace.meta["evidence"] = {
        "passages": [
            {"id": gap.id, "roles": ["question rank 1", "corrects r1.1"]},
            {"id": other.id, "roles": ["question rank 2"]},
        ]
    }
    show_trace(trace)
    out = " ".join(capsys.readouterr().out.split())  # however the terminal wraps it
    assert "#0 · read as: question rank 1, corrects r1.1 A film." in out
    assert "#0 (not cited) · read as: question rank 2 Another film." in out


def test_ask_says_how_a_short_answer_the_reply_did_not_name_was_had(
    capsys: pytest.CaptureFixture,
) -> None:
    from searchain.cli.ask import show_trace
    from searchain.types import Trace

    reply = "The director of Big Stone Gap is based in Greenwich Village, New York City [1]."
    trace = Trace(question="Where?", method="searchain", answer="Greenwich Village",
                  final_content=reply)  # fmt: skip
    show_trace(trace)
    assert "named no short answer" not in capsys.readouterr().out  # the parser found it
    trace.meta["short_answer_read"] = {"stated": reply, "span": "Greenwich Village", "used": True}
    show_trace(trace)
    out = " ".join(capsys.readouterr().out.split())
    assert "Answer: Greenwich Village (the reply named no short answer; it was read out of" in out
