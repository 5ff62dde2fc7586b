"""The Platt-scaled naive baseline: the naive confidence mapped to a probability on
calibration items.

The naive confidence is the answer's mean token log-probability as the model's reply to the
question alone (``trace.confidence.naive``, written by ``bench/confidence.py`` or by the
``likelihood`` check). Read as exp(log-probability) it is no probability, so its ECE, Brier
score and log-loss partly measure its scale, not what it knows. Platt scaling gives the
baseline the same chance SearChain's confidence gets: a 1-D logistic regression of "the
answer is right" (cover-EM) on the log-probability, fit by the calibrator's own code
(``scoring/confidence/calibration.fit_logistic``, its penalty chosen by ``choose_l2``) on the
*fit* items of calibration runs only (``scoring/confidence/certification.split_of``, the split
``searchain calibrate`` uses), never on the items a report is made on. It is a monotone map of the
naive score (increasing when higher log-probabilities are right more often), so its ranking
— the risk–coverage curve and AURC — is the naive one; what it changes is the calibration
statistics (ECE, Brier, log-loss). :func:`fit_platt` is the same fit for any one-number
baseline a record carries (the MaxProb baseline's: :mod:`.maxprob_baseline`), and
:func:`platt_baselines` fits one map per reported method, by either fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searchain.eval.rescore import run_model
from searchain.eval.run_records import RunRecords
from searchain.eval.runner import read_results
from searchain.scoring.confidence.calibration import choose_l2, fit_logistic
from searchain.scoring.confidence.calibrator import Calibrator
from searchain.scoring.confidence.certification import SPLIT_RULE, split_of

FEATURE = "naive_logprob"  # the one signal: the answer's mean token log-probability
MIN_FIT_ITEMS = 10
Reader = Callable[[dict], Any]  # a record's baseline value (None without one)
# A Platt fit of one method on calibration runs, leaving out the given (reported) items.
Fit = Callable[[Sequence[Path], str, Sequence[str]], dict[str, Any]]


def _naive(record: dict) -> float | None:
    conf = (record.get("trace") or {}).get("confidence")
    return conf.get("naive") if isinstance(conf, dict) else None


def _value_and_right(record: dict, read: Reader) -> tuple[float, bool] | None:
    """A finished record's baseline value (``read``) and cover-EM, when it has both."""
    if record.get("status") != "ok":
        return None
    value = read(record)
    cover = (record.get("metrics") or {}).get("cover_em")
    numbers = [v for v in (value, cover) if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) < 2 or not all(math.isfinite(v) for v in numbers):
        return None
    return float(value), cover >= 1.0  # type: ignore[arg-type,operator]


def scored_items(
    run_dirs: Sequence[str | Path], method: str, exclude: Iterable[str] = (), read: Reader = _naive
) -> tuple[list[str], list[float], list[bool]]:
    """The ids, baseline values (``read`` of a record: the naive log-probability by
    default) and cover-EM (right or not) of ``method``'s finished answers in the runs that
    carry a value; an item twice is taken once, and the items of ``exclude`` (those a
    report is made on) never."""
    ids: list[str] = []
    values: list[float] = []
    right: list[bool] = []
    seen = set(exclude)
    for run in run_dirs:
        for r in read_results(Path(run)):
            if r.get("method") != method or r.get("id") in seen:
                continue
            if found := _value_and_right(r, read):
                seen.add(r["id"])
                ids.append(str(r["id"]))
                values.append(found[0])
                right.append(found[1])
    return ids, values, right


def naive_items(
    run_dirs: Sequence[str | Path], method: str, exclude: Iterable[str] = ()
) -> tuple[list[str], list[float], list[bool]]:
    """:func:`scored_items` of the naive log-probability."""
    return scored_items(run_dirs, method, exclude, _naive)


def fit_platt(
    run_dirs: Sequence[str | Path],
    method: str,
    exclude: Iterable[str],
    read: Reader,
    feature: str,
    maps: str,
) -> dict[str, Any]:
    """The Platt map of the baseline ``read`` gives (named ``feature``, described as
    ``maps``), fit on the *fit* items of the calibration runs (no item of ``exclude``), with
    where it was fit; a ``ValueError`` when those items cannot fit one (too few, or all
    right or all wrong) or the runs' models differ (a log-probability is on its model's
    scale)."""
    ids, values, right = scored_items(run_dirs, method, exclude, read)
    fit = [i for i, item in enumerate(ids) if split_of(item) == "fit"]
    y = [right[i] for i in fit]
    runs = ", ".join(map(str, run_dirs))
    if len(fit) < MIN_FIT_ITEMS or all(y) or not any(y):
        raise ValueError(
            f"{method}: {len(fit)} fit items with a {maps} value in {runs} ({sum(y)} right): "
            f"a Platt map needs at least {MIN_FIT_ITEMS}, right and wrong ones among them"
        )
    models = sorted({run_model(run) or "unknown" for run in run_dirs})
    if len(models) > 1:
        raise ValueError(f"{method}: the calibration runs mix models ({', '.join(models)})")
    rows = [{feature: values[i]} for i in fit]
    l2, _ = choose_l2(rows, y, (feature,))
    calibrator = fit_logistic(rows, y, (feature,), l2=l2)
    calibrator.update(
        name=f"{feature}-platt--{method}",
        method=method,
        model=models[0],
        maps=maps,
        fit_on={
            "runs": [str(r) for r in run_dirs],
            "items": len(fit),
            "right": int(sum(y)),
            "split": f"{SPLIT_RULE}: fit items only",
        },
    )
    return calibrator


def fit_naive_platt(
    run_dirs: Sequence[str | Path], method: str, exclude: Iterable[str] = ()
) -> dict[str, Any]:
    """The Platt map of ``method``'s naive confidence (:func:`fit_platt`)."""
    platt = fit_platt(run_dirs, method, exclude, _naive, FEATURE, "naive")
    platt.update(name=f"naive-platt--{method}", maps="naive log-prob")
    return platt


def platt_baselines(
    methods: Sequence[str], runs: Sequence[RunRecords], calibration: Sequence[Path], fit: Fit
) -> dict[str, dict[str, Any] | str]:
    """Per method, its Platt map by ``fit`` (:func:`fit_naive_platt` or
    ``maxprob_baseline.fit_maxprob_platt``) on the ``calibration`` runs (never on an item of
    the reported ``runs``), or why none could be fit."""
    reported = [str(r.get("id")) for run in runs for r in run.records]
    out: dict[str, dict[str, Any] | str] = {}
    for method in sorted(set(methods)):
        try:
            out[method] = fit(calibration, method, reported)
        except ValueError as e:
            out[method] = str(e)
    return out


def platt_probability(calibrator: dict[str, Any], values: Iterable[float]) -> np.ndarray:
    """The Platt map's probability of each baseline value (a naive log-probability)."""
    platt = Calibrator.from_dict(calibrator)
    feature = platt.features[0]
    return np.array([platt.probability({feature: float(v)}) for v in values])


def describe(calibrator: dict[str, Any]) -> str:
    """Where the map was fit, in a few words (for a report)."""
    fit, maps = calibrator["fit_on"], calibrator.get("maps", "naive log-prob")
    return (
        f"{maps} mapped by a 1-D logistic fit (Platt scaling) on {fit['items']} fit "
        f"items ({fit['right']} right) of {', '.join(fit['runs'])}, model {calibrator['model']}"
    )
