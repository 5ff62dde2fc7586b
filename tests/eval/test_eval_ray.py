"""``--executor ray``: a small evaluation on a local Ray cluster gives the local executor's
results item by item, resumes like it, and records items whose worker failed. One cluster for
the module (Ray takes seconds to start)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import ray

from searchain.eval.datasets import load_dataset
from searchain.eval.methods import MethodsSpec
from searchain.eval.ray_executor import run_ray
from searchain.eval.runner import RESULTS, Item, read_results, run
from searchain.methods.assembly import Spec
from searchain.scoring import score_item
from searchain.types import Trace


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def score(item: Item, trace: Trace) -> dict[str, float]:
    return score_item(trace.final_content or trace.answer, item.gold, "open")


def comparable(record: dict) -> dict:
    trace = record.get("trace") or {}
    return {
        "status": record["status"],
        "metrics": record.get("metrics"),
        **{k: trace.get(k) for k in ("answer", "final_content", "citations", "nodes", "errors")},
        "references": [p["id"] for p in trace.get("references", [])],
    }


@pytest.mark.slow
def test_ray_matches_the_local_executor_and_resumes(cluster, data_dir, tmp_path: Path) -> None:
    items = [Item(e.id, e.question, {"answers": e.answers})
             for e in load_dataset("hotpotqa", limit=5, seed=1)]  # fmt: skip
    spec = MethodsSpec(("direct-prompting", "retrieve-read"), Spec(cache=False))
    local = tmp_path / "local"
    local.mkdir()
    summary = run(items, spec.build(), local, concurrency=2, score=score)
    assert (summary.done, summary.failed) == (10, 0)

    # The Ray run starts from a run directory that already holds two finished items.
    remote = tmp_path / "ray"
    remote.mkdir()
    first = [r for r in read_results(local) if r["method"] == "direct-prompting"][:2]
    (remote / RESULTS).write_text("".join(json.dumps(r) + "\n" for r in first))
    summary = run_ray(items, spec, remote, concurrency=2, score=score)
    assert (summary.skipped, summary.done, summary.failed) == (2, 8, 0)

    by_key = {(r["method"], r["id"]): r for r in read_results(local)}
    got = read_results(remote)
    assert got[:2] == first  # finished items were neither redone nor lost
    assert sorted((r["method"], r["id"]) for r in got) == sorted(by_key)  # each exactly once
    for r in got:
        assert comparable(r) == comparable(by_key[(r["method"], r["id"])]), r["id"]
    # A second run finds nothing left to do.
    assert run_ray(items, spec, remote, concurrency=2, score=score).skipped == 10


def test_an_item_whose_worker_fails_is_recorded_and_the_run_goes_on(cluster, tmp_path) -> None:
    # The openai backend without a model name cannot be built: every worker task fails.
    spec = MethodsSpec(("direct-prompting",), Spec(model="openai:", cache=False))
    items = [Item("a", "Who wrote Hamlet?"), Item("b", "Where is the Eiffel Tower?")]
    summary = run_ray(items, spec, tmp_path, concurrency=2)
    assert (summary.done, summary.failed) == (0, 2)
    records = read_results(tmp_path)
    assert sorted(r["id"] for r in records) == ["a", "b"]
    assert all(r["status"] == "error" and "model name" in r["error"] for r in records)
