"""Score a recorded run again from its traces with the current scoring, without running any
model: the golds come from the dataset its manifest names (checked against the recorded
dataset hash), the answer metrics (:data:`searchain.scoring.ANSWER_METRICS`) are recomputed
by :func:`searchain.scoring.score_trace`, and every other recorded metric (retrieval recall,
ALCE citation scores, which need the run's NLI judge) is kept as recorded.

``searchain report --rescore`` uses it; so does the test that recomputes the README table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from searchain.eval.datasets import Example, dataset_fingerprint, load_dataset
from searchain.eval.run_records import RunRecords
from searchain.eval.runner import MANIFEST, read_results
from searchain.scoring import ANSWER_METRICS, score_trace
from searchain.scoring.alce import alce_gold
from searchain.scoring.confidence import assess
from searchain.types import Trace


def gold_of(example: Example) -> dict:
    """The gold ``searchain eval`` gives the scorer for one example."""
    return {
        "answers": example.answers,
        "label": example.label,
        "task": example.task,
        **alce_gold(example),
    }


def run_golds(run_dir: str | Path) -> dict[str, dict]:
    """The golds of a run's items, by id, from the dataset, limit and seed of its manifest.

    Raises ``ValueError`` when the dataset's content is not the one the run recorded (a
    run made before a named dataset's label filter is read without the filter)."""
    path = Path(run_dir) / MANIFEST
    try:
        config = json.loads(path.read_text(encoding="utf-8"))["config"]
    except (OSError, ValueError, KeyError) as e:
        raise ValueError(f"{path}: no readable run manifest ({e})") from None
    dataset, recorded = config["dataset"], config.get("dataset_sha256")
    fp = dataset_fingerprint(dataset)
    if recorded == fp["sha256"]:
        label_filter = True
    elif recorded is not None and recorded == fp.get("file_sha256"):
        label_filter = False  # made before the label filter: the file's every example
    else:
        raise ValueError(
            f"{run_dir}: dataset {dataset!r} is not the content the run recorded "
            f"(sha256 {fp['sha256'][:12]}…, recorded {str(recorded)[:12]}…); cannot rescore"
        )
    examples = load_dataset(
        dataset, limit=config.get("limit"), seed=config.get("seed"), label_filter=label_filter
    )
    return {e.id: gold_of(e) for e in examples}


def rescore_records(
    records: Iterable[dict], golds: dict[str, dict], model: str | None = None
) -> list[dict]:
    """Copies of ``records`` whose answer metrics are recomputed from their traces. Failed
    records (no trace) keep their metrics (none: they count as 0 in a report). A trace
    recorded before answers carried a confidence gets one from its signals (``model``: the
    run's, which picks the calibrator)."""
    out = []
    for r in records:
        r = dict(r)
        if r.get("status") == "ok" and r.get("trace"):
            if r["id"] not in golds:
                raise ValueError(f"item {r['id']!r} is not in the run's dataset")
            kept = {k: v for k, v in (r.get("metrics") or {}).items() if k not in ANSWER_METRICS}
            trace = Trace.from_dict(r["trace"])
            r["metrics"] = {**kept, **score_trace(trace, golds[r["id"]])}
            if trace.confidence is None:
                r["trace"] = {**r["trace"], "confidence": assess(trace, model).to_dict()}
        out.append(r)
    return out


def run_model(run_dir: str | Path) -> str | None:
    """The model a run answered with, as its manifest recorded it."""
    try:
        manifest = json.loads((Path(run_dir) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    model = (manifest.get("environment") or {}).get("model") or {}
    return model.get("name") or manifest.get("config", {}).get("model")


def rescore(run_dir: str | Path) -> RunRecords:
    """A run directory's records (the last attempt per item, as reports read them), rescored
    with the current scoring."""
    run_dir = Path(run_dir)
    records = rescore_records(read_results(run_dir), run_golds(run_dir), run_model(run_dir))
    return RunRecords(run_dir.name, records, run_dir)
