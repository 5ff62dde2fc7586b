"""REBEL built from a tools file (the registry and the command line) naming a real local HTTP
tool server: its secret kept out of traces and logs, and the errors a bad tools file gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rebel_kit import (
    DESCRIPTION,
    KEY,
    KEY_FORMS,
    NOBEL,
    RECORDED_SPLIT,
    run,
)
from recordings import recorded_llm
from searchain.methods.catalog import build_method, make_embedder
from searchain.methods.rebel import Rebel, RebelConfig
from tool_server import FactServer


def write_tools_file(path: Path, server: FactServer) -> Path:
    path.write_text(
        f"tools:\n  - name: facts\n    description: {json.dumps(DESCRIPTION)}\n"
        "    parameters: {q: what to search for}\n"
        f"    http:\n      url: {server.url}/search\n"
        "      static_params: {api_key: '${FACTS_KEY}'}\n"
        f"      allow_private: ['127.0.0.1:{server.port}']\n"
    )
    return path


def test_cli_bad_tools_file_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from searchain.cli import app

    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    bad = tmp_path / "tools.yaml"
    bad.write_text("tools:\n  - builtin: shell\n")
    result = CliRunner().invoke(app, ["ask", "Q?", "--method", "rebel", "--tools", str(bad)])
    assert result.exit_code == 1
    assert "unknown builtin 'shell'" in " ".join(result.output.split())


@pytest.mark.slow
def test_cli_ask_rebel_with_a_tools_file(tmp_path: Path, server, monkeypatch) -> None:
    from typer.testing import CliRunner

    from searchain.cli import app

    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FACTS_KEY", KEY)
    tools = write_tools_file(tmp_path / "tools.yaml", server)
    before = len(server.requests)
    args = ["ask", NOBEL, "--method", "rebel", "--tools", str(tools), "--max-depth", "1",
            "--max-llm-calls", "8", "--memory-check", "never", "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    trace = json.loads(result.output)
    assert trace["method"] == "rebel" and trace["answer"]
    assert trace["meta"]["tool_calls"] == len(server.requests) - before >= 1
    assert all(n["meta"]["memory_check"]["decision"] == "tool" for n in trace["nodes"]
               if "memory_check" in n["meta"])  # fmt: skip
    for form in KEY_FORMS:
        assert form not in result.output
    shown = CliRunner().invoke(app, [*args[:-1], "--show-tree"])  # cached calls: fast
    assert shown.exit_code == 0 and "REBEL" in shown.output and "facts" in shown.output


@pytest.mark.slow
@pytest.mark.timeout(2400)  # REBEL makes up to 40 real model calls an item
def test_cli_eval_compositional_celebrities_rebel_and_baselines(
    tmp_path: Path, server, monkeypatch
) -> None:
    """``searchain eval`` over two Compositional Celebrities items with REBEL (its tools file
    pointing at the real local tool server) and two baselines, with the real model. (Seed 1
    draws two items on which the model's memory check says "no", so the tool is called; on
    seed 0's it answers both from memory.)"""
    from typer.testing import CliRunner

    from searchain.cli import app
    from searchain.eval.datasets import load_dataset
    from searchain.eval.runner import read_results

    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FACTS_KEY", KEY)
    tools = write_tools_file(tmp_path / "tools.yaml", server)
    out = tmp_path / "run"
    methods = ["rebel", "self-ask", "direct-prompting"]
    before = len(server.requests)
    args = ["eval", "--dataset", "compositional-celebrities", "--methods", ",".join(methods),
            "--limit", "2", "--seed", "1", "--concurrency", "1", "--tools", str(tools),
            "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    items = load_dataset("compositional-celebrities", limit=2, seed=1)
    rows = read_results(out)
    assert sorted((r["method"], r["id"]) for r in rows) == sorted(
        (m, e.id) for m in methods for e in items
    )
    gold = {e.id: e for e in items}
    for r in rows:
        assert r["status"] == "ok", r.get("error")
        assert r["question"] == gold[r["id"]].question and r["trace"]["answer"]
        assert r["metrics"]["cover_em"] in (0.0, 1.0) and "em" in r["metrics"]
    rebel = [r["trace"] for r in rows if r["method"] == "rebel"]
    assert all(t["method"] == "rebel" and t["meta"]["tools"][0]["name"] == "facts" for t in rebel)
    assert len(server.requests) - before == sum(t["meta"]["tool_calls"] for t in rebel) >= 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["tools"]["sha256"] and manifest["config"]["methods"] == methods
    written = (out / "results.jsonl").read_text() + json.dumps(manifest) + result.output
    for form in KEY_FORMS:
        assert form not in written


def test_the_run_manifest_records_rebels_settings() -> None:
    """A REBEL run's manifest holds its settings (budgets, the split prompt) and its tools, so
    a run directory made with other settings is not resumed as if it were the same run."""
    from searchain.eval.methods import describe

    default = describe(Rebel(recorded_llm("rebel"), []))
    assert default["split_prompt"] == "self" and default["max_depth"] == 3
    assert "tool_list" in default  # what its tools are, as before
    other = describe(Rebel(recorded_llm("rebel"), [], RebelConfig(max_depth=1)))
    assert other["max_depth"] == 1 and other != default


def test_registry_builds_rebel_from_a_tools_file(tmp_path: Path, server, monkeypatch) -> None:
    monkeypatch.setenv("FACTS_KEY", KEY)
    path = write_tools_file(tmp_path / "tools.yaml", server)
    method = build_method("rebel", recorded_llm("rebel"), None, tools=str(path), max_depth=2,
                          max_llm_calls=20, max_tool_calls=6, dedup="embedding",
                          split_prompt=RECORDED_SPLIT)  # fmt: skip
    assert [t.name for t in method.tools] == ["facts"]  # type: ignore[attr-defined]
    trace = method.run(NOBEL)
    assert trace.answer == run(server, make_embedder("embedding")).answer
