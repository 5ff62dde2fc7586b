"""Fit a method's confidence calibrator from evaluation runs (``searchain calibrate``).

The items of the runs given are the calibration items: never the items a report is made on.
Each finished record gives the trace's signals (``scoring/confidence.signals``) and whether
its answer was right (cover-EM, or the label's accuracy for yes/no and claim data sets); a
logistic regression maps the first to the second (``scoring/calibration.fit_logistic``, its
penalty chosen by cross-validated log-loss, ``choose_l2``). The
calibrator file keeps its provenance (runs, data set, model, items, when) and out-of-fold
probabilities of its calibration items, from which ``--max-risk`` picks a threshold.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searchain.eval.rescore import run_model
from searchain.eval.runner import MANIFEST, read_results
from searchain.scoring.calibration import choose_l2, fit_logistic
from searchain.scoring.confidence import (
    CHECK_SIGNALS,
    apply_calibrator,
    calibrator_variant,
    model_key,
    signals,
)
from searchain.types import Trace

# The signals each calibrator reads (SearChain has its Tree-of-Reasoning's as well).
FEATURES = {
    "searchain": (
        "has_answer",
        "answer_in_references",
        "answer_in_cited",
        "answer_from_confirmed_node",
        "path_confirmed_share",
        "ir_changed_a_node",
        "rounds",
        "reader_logprob_mean",
        # Chosen on the calibration items by cross-validation (AUROC 0.41 -> 0.61 there).
        "answer_is_yes_no",
    ),
}
DEFAULT_FEATURES = ("has_answer", "answer_in_references", "answer_in_cited", "citations")
FOLDS = 5


def item_ids(run_dirs: Sequence[str | Path]) -> set[str]:
    """Every item id the runs hold (of any method)."""
    return {r["id"] for run in run_dirs for r in read_results(Path(run))}


def calibration_rows(
    run_dirs: Sequence[str | Path],
    method: str,
    exclude: set[str] = frozenset(),  # type: ignore[assignment]
) -> tuple[list[dict[str, float]], list[bool]]:
    """The signals of every finished answer of ``method`` in the runs, and whether it was
    right (the last attempt per item, as reports read them); an item twice (in two runs) is
    taken once, and the items of ``exclude`` (those a report is made on) never."""
    rows, right = [], []
    seen = set(exclude)
    for run in run_dirs:
        for r in read_results(Path(run)):
            if r.get("method") != method or r.get("status") != "ok" or not r.get("trace"):
                continue
            if r["id"] in seen:
                continue
            seen.add(r["id"])
            metrics = r.get("metrics") or {}
            score = metrics.get("cover_em", metrics.get("accuracy"))
            if score is None:
                continue
            rows.append(signals(Trace.from_dict(r["trace"])))
            right.append(score >= 1.0)
    return rows, right


def out_of_fold(
    rows: list[dict[str, float]], right: list[bool], features: Sequence[str], l2: float = 1.0
) -> list[float]:
    """Each item's probability from a calibrator fit without it (5 folds, in item order):
    the scores a risk threshold is certified on."""
    n = len(rows)
    folds = np.arange(n) % FOLDS
    out = [0.0] * n
    for k in range(FOLDS):
        train = [i for i in range(n) if folds[i] != k]
        if not train or all(right[i] for i in train) or not any(right[i] for i in train):
            continue  # a fold with one class cannot be fit: its items keep 0
        fitted = fit_logistic([rows[i] for i in train], [right[i] for i in train], features, l2=l2)
        for i in range(n):
            if folds[i] == k:
                out[i] = apply_calibrator(fitted, rows[i])
    return out


def fit_calibrator(
    run_dirs: Sequence[str | Path],
    method: str,
    exclude_runs: Sequence[str | Path] = (),
) -> dict[str, Any]:
    """A calibrator for ``method`` from the runs, with its provenance; no item of
    ``exclude_runs`` (the runs reported on) is used."""
    rows, right = calibration_rows(run_dirs, method, item_ids(exclude_runs))
    if len(rows) < 20 or all(right) or not any(right):
        runs = ", ".join(map(str, run_dirs))
        raise ValueError(
            f"{method}: {len(rows)} finished answers, {sum(right)} right, in {runs}: "
            "a calibrator needs at least 20, with right and wrong ones"
        )
    # A costly check's signal is used when every calibration answer has it (runs made with
    # --confidence-check): the calibrator is then that variant's ("searchain+nli").
    checked = [s for s in CHECK_SIGNALS if all(s in r for r in rows)]
    features = (*FEATURES.get(method, DEFAULT_FEATURES), *checked)
    variant = calibrator_variant(method, tuple(sorted({CHECK_SIGNALS[s] for s in checked})))
    l2, losses = choose_l2(rows, right, features)
    calibrator = fit_logistic(rows, right, features, l2=l2)
    model = model_key(run_model(run_dirs[0]))
    oof = out_of_fold(rows, right, features, l2)
    calibrator.update(
        name=f"{variant}--{model}",
        method=variant,
        model=model,
        fit_on={
            "runs": [str(r) for r in run_dirs],
            "datasets": sorted({_dataset(r) for r in run_dirs}),
            "items": len(rows),
            "right": int(sum(right)),
            "excluded_items_of": [str(r) for r in exclude_runs],
            "fitted": datetime.date.today().isoformat(),
        },
        # how the penalty was chosen, and what the alternatives scored
        l2_chosen_by={
            "cv_log_loss": {f"{k:g}": round(v, 4) for k, v in losses.items()},
            "base_rate_log_loss": round(_base_rate_log_loss(right), 4),
        },
        calibration=[[round(p, 6), int(ok)] for p, ok in zip(oof, right, strict=True)],
    )
    return calibrator


def _base_rate_log_loss(right: Sequence[bool]) -> float:
    """The log-loss of predicting the share right for every item: the bar a calibrator's
    cross-validated log-loss must clear to add anything."""
    share = min(max(sum(right) / len(right), 1e-6), 1 - 1e-6)
    return -(share * math.log(share) + (1 - share) * math.log(1 - share))


def _dataset(run: str | Path) -> str:
    """The run's data set, a file under this folder named relative to it (no machine path
    in a calibrator that ships)."""
    try:
        name = str(json.loads((Path(run) / MANIFEST).read_text())["config"]["dataset"])
    except (OSError, ValueError, KeyError):
        return "unknown"
    path = Path(name)
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        return str(path.relative_to(Path.cwd()))
    return name
