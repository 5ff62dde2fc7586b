"""The paper's SearChain is a named preset, ``searchain-paper`` (issue 50): it resolves to the
paper's settings whatever the defaults are, it is on every surface a method name reaches, a run
with it and ``searchain`` keeps both apart, and the Table reproductions' recorded runs resume
with the preset's settings pinned (``python -m bench.quality``, its recipes
``searchain.eval.recipes``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # recordings.py

from recordings import recorded_llm

ROOT = Path(__file__).resolve().parents[3]
QUALITY = ROOT / "results" / "quality" / "qwen2.5-coder-1.5b"
# What the paper does (Xu et al., WWW 2024; ../shared/spec/searchain.md,
# docs/searchain-fidelity.md), written out here rather than read from the preset.
PAPER = {
    "r_max": 5,
    "alpha": 0.35,
    "k": 1,
    "reader_passages": 1,
    "final_step": "tracing",
    "question_position": "instruction",
    "answer_after_feedback": "llm",
    "both_tags": "unsolved",
    "answer_in_query": "accept",
    "echo_retry": "none",
    "yesno_check": "span",
    "tracing_context": "dialogue",
    "label_in_tracing": True,
    "route": "chain",  # a Chain-of-Query for every question
}


def _built(name: str, **options: Any) -> Any:
    from searchain.methods.catalog import build_method
    from searchain.retrieval import default_index

    return build_method(name, recorded_llm("searchain"), default_index(), dedup="exact", **options)


def test_the_preset_is_the_papers_searchain_whatever_the_defaults() -> None:
    from searchain.methods.catalog import resolve
    from searchain.methods.searchain.config import SearChainConfig

    record, fixed = resolve("searchain-paper")
    assert (record.name, fixed) == ("searchain", PAPER)
    method = _built("searchain-paper")
    assert {k: getattr(method.config, k) for k in PAPER} == PAPER
    assert method.name == "searchain-paper"  # its traces say which SearChain answered
    # Not the defaults: the default prompt states the question last, the paper's inline.
    assert SearChainConfig().question_position != PAPER["question_position"]
    assert _built("searchain").name == "searchain"


def test_a_setting_the_preset_fixes_is_refused_not_dropped() -> None:
    with pytest.raises(ValueError, match=r"searchain-paper fixes k=1 \(given 5\); use searchain"):
        _built("searchain-paper", k=5)
    assert _built("searchain-paper", k=1, theta=0.5).config.theta == 0.5  # the rest is free


def test_the_preset_is_listed_where_methods_are() -> None:
    from searchain.cli import build_app
    from searchain.methods.catalog import description, method_names

    assert "searchain-paper" in method_names()
    app, runner = build_app(), CliRunner()
    helped = runner.invoke(app, ["ask", "--help"], env={"COLUMNS": "400"})
    assert "searchain-paper" in helped.output
    listed = runner.invoke(app, ["settings", "searchain-paper", "--json"])
    assert listed.exit_code == 0, listed.output
    assert "question_position" in [s["name"] for s in json.loads(listed.stdout)["searchain-paper"]]
    assert description("searchain-paper").startswith("searchain with r_max=5, alpha=0.35, k=1")


@pytest.mark.parametrize("run", ["hotpotqa", "hotpotqa-100", "musique-100", "strategyqa", "fever"])
def test_a_recorded_table_run_resumes_with_the_preset_pinned(run: str, tmp_path: Path) -> None:
    """What the quality bench's eval of that set records of each method (the data set's task,
    the preset's pins) is what the recorded run's manifest holds, and the pins alone do not
    make it another configuration; without the pins (today's defaults) it would be refused."""
    from searchain.eval.methods import describe
    from searchain.eval.recipes import RECIPES, paper_pins
    from searchain.eval.runner import RunConfigMismatch, prepare_run_dir
    from searchain.methods.catalog import task_options
    from searchain.methods.options import parse_method_options

    manifest = json.loads((QUALITY / run / "manifest.json").read_text())
    old = manifest["config"]
    recipe = RECIPES[run]
    methods = ",".join(recipe.methods)
    pins = paper_pins(methods)
    given = parse_method_options(pins[1::2], list(recipe.methods))
    # The query memory's threshold was 0.97 while MiniLM was the embedder; the packaged GGUF's
    # is 0.99. A manifest does not name the embedder, so the recorded runs resume only with
    # the threshold they were made with, pinned here.
    for name, described in old["method_config"].items():
        if "dedup_threshold" in described and name in given:
            given[name] = {**given[name], "dedup_threshold": described["dedup_threshold"]}
    task = {"hotpotqa": "multihop", "strategyqa": "yesno", "fever": "factcheck"}
    kind = task.get(recipe.dataset, "multihop")
    for with_pins in (True, False):
        config = {**old, "options": given} if with_pins else dict(old)
        config["method_config"] = dict(old["method_config"])
        for name in recipe.methods:
            if "searchain" in name:
                options = {**task_options(name, kind), **(given[name] if with_pins else {})}
                config["method_config"][name] = describe(_built(name, **options))
        out = tmp_path / f"pins-{with_pins}"
        out.mkdir()
        (out / "manifest.json").write_text(json.dumps(manifest))
        if with_pins:
            assert config["method_config"] == old["method_config"]
            prepare_run_dir(out, config)  # resumes: the same run
            assert json.loads((out / "manifest.json").read_text()) == manifest  # untouched
        else:
            with pytest.raises(RunConfigMismatch, match="method_config"):
                prepare_run_dir(out, config)


def test_the_preset_keeps_the_calibrators_fit_on_its_settings() -> None:
    """The calibrators fit before issue 50 were fit on answers made with exactly the preset's
    settings (bench/paper_calibrators.py checks each run); shipped under the preset's name,
    they map its answers, and only answers of its configuration."""
    from searchain.eval.calibrate import run_config, stamped
    from searchain.scoring.confidence import assess
    from searchain.scoring.confidence.calibrator import shipped_calibrator
    from searchain.types import Trace

    run = ROOT / "results" / "calibration" / "qwen2.5-coder-1.5b" / "hotpotqa-calibration"
    record = next(
        json.loads(line)
        for line in (run / "results.jsonl").read_text().splitlines()
        if '"method": "searchain"' in line and '"status": "ok"' in line
    )
    as_preset = {**record["trace"], "method": "searchain-paper"}
    trace = stamped(Trace.from_dict(as_preset), run_config(run))
    trace.meta["label_rule"] = 2  # as the preset labels nodes today (the calibrators' rule)
    calibrator = shipped_calibrator("searchain-paper", "qwen2.5-coder-1.5b")
    assert calibrator is not None and calibrator.extra["relabelled"]
    assert (calibrator.fit_configuration or {})["method"] == "searchain-paper"
    conf = assess(trace, "qwen2.5-coder-1.5b")
    assert conf.calibrated and conf.calibrator["method"] == "searchain-paper", conf.note
    trace.meta["final_step"], trace.meta["evidence_sources"] = "evidence", "path+question"
    other = assess(trace, "qwen2.5-coder-1.5b")
    assert not other.calibrated and "final step evidence:path+question" in other.note


def test_the_services_options_for_searchain_leave_the_preset_its_settings() -> None:
    """`serve -O searchain.k=3` sets SearChain's k; the preset still answers with the
    paper's k=1 (it used to refuse every request), and options named for the preset itself are
    refused as a client's are."""
    from searchain.retrieval import default_index
    from searchain.server.engine import Engine

    llm = recorded_llm("searchain")
    operator = {"searchain": {"k": 3, "final_step": "evidence", "r_max": 2}}
    engine = Engine(llm, default_index(), method_options=operator)
    paper = engine.runner("searchain-paper").method
    assert (paper.config.k, paper.config.final_step, paper.config.r_max) == (1, "tracing", 5)
    assert engine.runner("searchain").method.config.k == 3
    own = Engine(llm, default_index(), method_options={"searchain-paper": {"k": 3}})
    with pytest.raises(ValueError, match="fixes k=1"):
        own.runner("searchain-paper")
