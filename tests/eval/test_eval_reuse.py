"""``searchain eval --reuse-from``: a new run takes the finished records of the methods whose
settings did not change, and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from searchain.eval.reuse import ReuseRefused, reuse_records
from searchain.eval.runner import prepare_run_dir, read_results

ENV = {"model": {"name": "qwen2.5-coder-1.5b", "bytes": 1}, "index": {"docs": 3}, "packages": {}}


def _config(**searchain: object) -> dict:
    return {
        "dataset": "hotpotqa", "dataset_sha256": "abc", "limit": 50, "seed": 0,
        "model": "qwen2.5-coder-1.5b", "api": "chat", "retriever": "bm25",
        "methods": ["retrieve-read", "searchain"],
        "method_config": {"retrieve-read": {"k": 5},
                          "searchain": {"theta": None, **searchain}},
    }  # fmt: skip


def _old_run(path: Path, config: dict, env: dict = ENV) -> Path:
    prepare_run_dir(path, config, env)
    rows = [{"method": m, "id": i, "status": "ok", "trace": {"answer": f"{m}-{i}"}}
            for i in ("a", "b") for m in config["methods"]]  # fmt: skip
    rows.append({"method": "searchain", "id": "c", "status": "failed", "error": "boom"})
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_only_the_unchanged_methods_are_copied(tmp_path: Path) -> None:
    old = _old_run(tmp_path / "old", _config())
    new_config = _config(theta=-0.4)
    new = prepare_run_dir(tmp_path / "new", new_config, ENV)
    assert reuse_records(old, new, new_config, ENV) == {"retrieve-read": 2}
    copied = read_results(new)
    assert {(r["method"], r["id"]) for r in copied} == {("retrieve-read", "a"),
                                                        ("retrieve-read", "b")}  # fmt: skip
    assert all(r["reused_from"] == str(old) for r in copied)


def test_every_method_is_copied_when_nothing_changed(tmp_path: Path) -> None:
    old = _old_run(tmp_path / "old", _config())
    new = prepare_run_dir(tmp_path / "new", _config(), ENV)
    # failed attempts too: the new run retries them exactly as the old one would
    assert reuse_records(old, new, _config(), ENV) == {"retrieve-read": 2, "searchain": 3}


@pytest.mark.parametrize(
    ("change", "said"),
    [({"model": "gemma-3-270m"}, "model"), ({"seed": 1}, "seed"), ({"limit": 20}, "limit")],
)
def test_another_model_or_item_set_lends_nothing(tmp_path: Path, change: dict, said: str) -> None:
    old = _old_run(tmp_path / "old", _config())
    config = {**_config(), **change}
    new = prepare_run_dir(tmp_path / "new", config, ENV)
    with pytest.raises(ReuseRefused, match=said):
        reuse_records(old, new, config, ENV)
    assert not read_results(new)


def test_a_larger_limit_with_the_same_seed_reuses_the_smaller_run(tmp_path: Path) -> None:
    """Growing 50 seed-0 items to 100 keeps the 50 (the seeded subsample is nested), so their
    records are taken; with no seed (the first N) or a smaller limit nothing is."""
    from searchain.eval.datasets.named import subsample

    assert set(subsample(list(range(500)), 50, 0)) <= set(subsample(list(range(500)), 100, 0))
    old = _old_run(tmp_path / "old", _config())
    grown = {**_config(), "limit": 100}
    new = prepare_run_dir(tmp_path / "new", grown, ENV)
    assert reuse_records(old, new, grown, ENV) == {"retrieve-read": 2, "searchain": 3}
    unseeded_old = _old_run(tmp_path / "old-unseeded", {**_config(), "seed": None})
    unseeded = {**_config(), "seed": None, "limit": 100}
    new2 = prepare_run_dir(tmp_path / "new2", unseeded, ENV)
    with pytest.raises(ReuseRefused, match="limit"):
        reuse_records(unseeded_old, new2, unseeded, ENV)


def test_another_model_file_or_a_started_run_is_refused(tmp_path: Path) -> None:
    old = _old_run(tmp_path / "old", _config())
    other = {**ENV, "model": {"name": "qwen2.5-coder-1.5b", "bytes": 2}}
    new = prepare_run_dir(tmp_path / "new", _config(), other)
    with pytest.raises(ReuseRefused, match="the model differs"):
        reuse_records(old, new, _config(), other)
    started = _old_run(tmp_path / "started", _config())
    with pytest.raises(ReuseRefused, match="already holds results"):
        reuse_records(old, started, _config(), ENV)
    with pytest.raises(ReuseRefused, match="not a run directory"):
        reuse_records(tmp_path / "nowhere", new, _config(), ENV)


def test_another_package_version_or_code_still_lends_and_says_what_it_crossed(
    tmp_path: Path,
) -> None:
    """Neither changes a method's resolved settings, so reuse lends; but both are said."""
    from searchain.eval.reuse import crossed_differences

    code_a = {"git_commit": "a" * 40, "code_tree": "1" * 40}
    started = {**ENV, "packages": {"bm25s": "0.3.16"}, "source": code_a}
    old = _old_run(tmp_path / "old", _config(), started)
    code_b = {"git_commit": "b" * 40, "code_tree": "2" * 40}
    now = {**ENV, "packages": {"bm25s": "0.3.17"}, "source": code_b}
    new = prepare_run_dir(tmp_path / "new", _config(), now)
    assert reuse_records(old, new, _config(), now) == {"retrieve-read": 2, "searchain": 3}
    assert crossed_differences(old, now) == [
        "bm25s 0.3.17 (the run started with 0.3.16)",
        f"the code is at commit {'b' * 12} (the run started at commit {'a' * 12})",
    ]
    assert crossed_differences(old, started) == []


def test_a_run_of_another_label_rule_lends_only_what_has_no_node_labels(tmp_path: Path) -> None:
    """SearChain's records depend on the node-label rule; retrieve-read's do not."""
    old = _old_run(tmp_path / "old", _config())
    manifest = old / "manifest.json"
    data = json.loads(manifest.read_text())
    data["label_rule"] = 1  # a run made before the rule was versioned
    manifest.write_text(json.dumps(data))
    new = prepare_run_dir(tmp_path / "new", _config(), ENV)
    assert reuse_records(old, new, _config(), ENV) == {"retrieve-read": 2}


@pytest.mark.slow
def test_eval_reuses_the_unchanged_method_with_the_real_model(tmp_path: Path) -> None:
    """The embedded Gemma answers one item with two methods; a second run that changes
    CoT's token limit answers CoT again and takes direct prompting's record."""
    base = [sys.executable, "-m", "searchain.cli", "eval", "--dataset", "hotpotqa",
            "--methods", "direct-prompting,cot", "--limit", "1", "--concurrency", "1"]  # fmt: skip
    first = subprocess.run([*base, "--out", str(tmp_path / "a")], capture_output=True,
                           text=True, timeout=600)  # fmt: skip
    assert first.returncode == 0, first.stderr[-2000:]
    cmd = [*base, "--out", str(tmp_path / "b"), "--reuse-from", str(tmp_path / "a"),
           "-O", "cot.max_tokens=64"]  # fmt: skip
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "'direct-prompting': 1" in second.stderr and "cot" not in second.stderr.split(
        "reused from")[1].split("\n")[0]  # fmt: skip
    assert json.loads(second.stdout)["skipped"] == 1 and json.loads(second.stdout)["done"] == 1
    records = {r["method"]: r for r in read_results(tmp_path / "b")}
    assert records["direct-prompting"]["reused_from"] == str(tmp_path / "a")
    assert "reused_from" not in records["cot"]
