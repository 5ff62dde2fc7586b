"""`searchain eval` hands the data set's task to every task-aware method (the baselines get
the label instruction SearChain's prompts have), and a locked run folder is a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from searchain.cli import app
from searchain.eval.rundir import RunLock


@pytest.mark.slow
def test_strategyqa_baselines_get_the_yes_no_task_and_a_locked_run_is_refused(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    methods = "direct-prompting,searchain-no-ir"
    args = ["eval", "--dataset", "strategyqa", "--limit", "1", "--methods", methods,
            "--concurrency", "1", "--out", str(out)]  # fmt: skip
    got = CliRunner().invoke(app, args)
    assert got.exit_code == 0, got.output
    config = json.loads((out / "manifest.json").read_text())["config"]["method_config"]
    assert config["direct-prompting"]["task"] == "yesno"
    assert config["searchain-no-ir"]["task"] == "yesno"
    records = [json.loads(ln) for ln in (out / "results.jsonl").read_text().splitlines()]
    direct = next(r for r in records if r["method"] == "direct-prompting")
    assert direct["trace"]["meta"]["task"] == "yesno"  # what the method ran with
    assert "accuracy" in direct["metrics"]  # scored as a yes/no label
    lock = RunLock(out).acquire()
    try:
        again = CliRunner().invoke(app, args)
    finally:
        lock.release()
    assert again.exit_code == 1 and "being written by another process" in again.output
