"""Fit a method's confidence calibrator from evaluation runs (``searchain calibrate``).

The items of the runs given are the calibration items: never the items a report is made on.
Each finished record gives the trace's signals (``scoring/confidence.signals``) and whether
its answer was right (cover-EM, or the label's accuracy for yes/no and claim data sets); a
logistic regression maps the first to the second
(``scoring/confidence/calibration.fit_logistic``, its penalty chosen by cross-validated
log-loss, ``choose_l2``) on the *fit* items of the committed split
(``scoring/confidence/certification.split_of``); the *certification* items, which neither fit
nor chose it, certify its ``--max-risk`` thresholds. The calibrator file keeps
its provenance (runs, data set, model, items, when), the configuration its items were
answered with (a calibrator maps only answers of that configuration), whether it beats the
base rate (else it is no probability), and its certification.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from searchain.eval.rescore import run_model
from searchain.eval.run_stamps import run_config, stamped
from searchain.eval.runner import MANIFEST, read_results
from searchain.methods.catalog import resolve
from searchain.methods.component import MethodComponent
from searchain.scoring.confidence import checks_of, model_key, signals
from searchain.scoring.confidence.calibration import (
    auroc,
    choose_l2,
    fit_logistic,
    share_right_log_loss,
)
from searchain.scoring.confidence.calibrator import CHECK_SIGNALS, Calibrator, calibrator_variant
from searchain.scoring.confidence.certification import (
    DEFAULT_DELTA,
    certification_record,
    item_hash,
    split_of,
)
from searchain.scoring.confidence.configuration import (
    UnnamedConfiguration,
    configuration,
    differences,
    pooled,
)
from searchain.scoring.confidence.evidence_signals import SIGNALS as EVIDENCE_SIGNALS
from searchain.scoring.confidence.feature_choice import choose_monotone
from searchain.types import Trace

FOLDS = 5


def calibration_signals(method: str) -> tuple[str, ...]:
    """The signals ``method``'s component says a calibrator of its answers reads (a variant's
    are its method's: the paper preset's shipped calibrators read SearChain's); a method not
    registered here (a peer's run) gets the signals every trace has."""
    try:
        return resolve(method)[0].calibration_signals
    except ValueError:
        return MethodComponent.calibration_signals


def item_ids(run_dirs: Sequence[str | Path]) -> set[str]:
    """Every item id the runs hold (of any method)."""
    return {r["id"] for run in run_dirs for r in read_results(Path(run))}


@dataclass
class CalibrationItems:
    """Every finished answer of a method in the runs: its item's id, signals, whether it
    was right, and the configuration it was made with."""

    ids: list[str] = field(default_factory=list)
    rows: list[dict[str, float]] = field(default_factory=list)
    right: list[bool] = field(default_factory=list)
    configurations: list[dict[str, Any]] = field(default_factory=list)
    checks: list[tuple[str, ...]] = field(default_factory=list)  # asked for on each answer

    def part(self, split: str) -> CalibrationItems:
        """The items the split rule puts in ``split`` ("fit" or "certify")."""
        out = CalibrationItems()
        for i, item in enumerate(self.ids):
            if split_of(item) == split:
                out.ids.append(item)
                out.rows.append(self.rows[i])
                out.right.append(self.right[i])
                out.configurations.append(self.configurations[i])
                out.checks.append(self.checks[i] if i < len(self.checks) else ())
        return out


def calibration_rows(
    run_dirs: Sequence[str | Path],
    method: str,
    exclude: set[str] = frozenset(),  # type: ignore[assignment]
) -> CalibrationItems:
    """The signals of every finished answer of ``method`` in the runs, whether it was right
    (the last attempt per item, as reports read them) and its configuration; an item twice
    (in two runs) is taken once, and the items of ``exclude`` (those a report is made on)
    never."""
    items = CalibrationItems()
    seen = set(exclude)
    for run in run_dirs:
        model, config = model_key(run_model(run)), run_config(run)
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
            trace = stamped(Trace.from_dict(r["trace"]), config)
            try:
                identity = configuration(trace, model)
            except UnnamedConfiguration as e:  # which run and item, not a bare field name
                raise UnnamedConfiguration(f"{run}: item {r['id']}: {e}") from None
            items.ids.append(str(r["id"]))
            items.rows.append(signals(trace))
            items.right.append(score >= 1.0)
            items.configurations.append(identity)
            items.checks.append(checks_of(trace))
    return items


def out_of_fold(
    rows: list[dict[str, float]], right: list[bool], features: Sequence[str], l2: float = 1.0
) -> list[float]:
    """Each item's probability from a calibrator fit without it (5 folds, in item order)."""
    n = len(rows)
    folds = np.arange(n) % FOLDS
    out = [0.0] * n
    for k in range(FOLDS):
        train = [i for i in range(n) if folds[i] != k]
        if not train or all(right[i] for i in train) or not any(right[i] for i in train):
            continue  # a fold with one class cannot be fit: its items keep 0
        fitted = fit_logistic([rows[i] for i in train], [right[i] for i in train], features, l2=l2)
        mapped = Calibrator.from_dict(fitted)
        for i in range(n):
            if folds[i] == k:
                out[i] = mapped.probability(rows[i])
    return out


def one_configuration(
    items: CalibrationItems, method: str, pool_corpora: bool = False
) -> dict[str, Any]:
    """The one configuration every item was answered with (a ``ValueError`` naming the
    difference when the runs mix two: a calibrator fit on both is right for neither).
    ``pool_corpora``: items over several corpora, alike in everything else, are one
    configuration whose corpus is the list of theirs (documentation questions over several
    manuals' indexes: the calibrator maps answers over those, and only as a transfer others)."""
    if pool_corpora:
        first, said = pooled(items.configurations)
    else:
        first = items.configurations[0]
        said = next(filter(None, (differences(first, o) for o in items.configurations)), [])
    if said:
        raise ValueError(
            f"{method}: the runs mix configurations ({'; '.join(said)}); calibrate each "
            "configuration on its own runs"
        )
    return first


def fit_calibrator(
    run_dirs: Sequence[str | Path],
    method: str,
    exclude_runs: Sequence[str | Path] = (),
    delta: float = DEFAULT_DELTA,
    without: Sequence[str] = (),
) -> Calibrator:
    """A calibrator for ``method`` from the runs, with its provenance; no item of
    ``exclude_runs`` (the runs reported on) is used. The split rule (``split_of``) sends
    each item to fit (the penalty chosen and the model fit on them) or to certify (scored
    by the fitted model, certifying its threshold: ``scoring/confidence/certification.py``).
    ``without``: checks the runs recorded whose signals this calibrator must not read (the
    plain calibrator for answers made without them, from runs that recorded MaxProb)."""
    items = calibration_rows(run_dirs, method, item_ids(exclude_runs))
    source = {
        "runs": [str(r) for r in run_dirs],
        "datasets": sorted({_dataset(r) for r in run_dirs}),
        "excluded_items_of": [str(r) for r in exclude_runs],
    }
    return calibrator_of(items, method, source, delta, without)


def items_of(answers: Iterable[tuple[str, Trace, bool]], model: str) -> CalibrationItems:
    """Calibration items from answers made elsewhere than ``searchain eval`` (a benchmark's
    own records: each item's id, its whole trace, whether it was right by that benchmark's
    rule), answered with ``model``; an item twice is taken once (the first)."""
    items, seen = CalibrationItems(), set()
    for item, trace, right in answers:
        if item in seen:
            continue
        seen.add(item)
        items.ids.append(item)
        items.rows.append(signals(trace))
        items.right.append(bool(right))
        items.configurations.append(configuration(trace, model_key(model)))
        items.checks.append(checks_of(trace))
    return items


def calibrator_of(
    items: CalibrationItems,
    method: str,
    source: dict[str, Any],
    delta: float = DEFAULT_DELTA,
    without: Sequence[str] = (),
    features: Sequence[str] | None = None,
    pool_corpora: bool = False,
    monotone: int | None = None,
) -> Calibrator:
    """A calibrator for ``method``'s answers fit and certified on ``items``, split by the
    committed rule (``split_of``); ``source`` (runs, datasets, excluded items) goes into its
    provenance. ``without``: as for :func:`fit_calibrator`. ``features``: the signals it
    reads (default: the method's own, the evidence step's where they help on the fit items).
    ``pool_corpora``: as for :func:`one_configuration`. ``monotone`` N: at most N signals,
    each in its declared direction, chosen on the fit items (``feature_choice``)."""
    unknown = sorted(set(without) - set(CHECK_SIGNALS.values()))
    if unknown:
        raise ValueError(
            f"no check named {', '.join(unknown)} (checks: {', '.join(CHECK_SIGNALS.values())})"
        )
    fit, held = items.part("fit"), items.part("certify")
    if len(items.rows) < 20 or all(fit.right) or not any(fit.right) or not held.rows:
        runs = ", ".join(map(str, source.get("runs", ())))
        raise ValueError(
            f"{method}: {len(items.rows)} finished answers, {sum(items.right)} right, in "
            f"{runs}: a calibrator needs at least 20, with right and wrong ones among the "
            f"{len(fit.rows)} it is fit on, and some to certify on ({len(held.rows)})"
        )
    config = one_configuration(items, method, pool_corpora)
    aurocs = signal_aurocs(fit)  # before a missing check's value is imputed
    checked = checked_signals(items, without)
    imputed = impute_at_mean(fit.rows, checked)
    variant = calibrator_variant(method, tuple(sorted({CHECK_SIGNALS[s] for s in checked})))
    features, chosen_by = features_of(fit, method, checked, features, monotone)
    l2, losses = choose_l2(fit.rows, fit.right, features)
    calibrator = fit_logistic(fit.rows, fit.right, features, l2=l2)
    mapped = Calibrator.from_dict(calibrator)
    oof = out_of_fold(fit.rows, fit.right, features, l2)
    base_loss = share_right_log_loss(fit.right)
    certify_items = [
        (item_hash(i), mapped.probability(r), ok)
        for i, r, ok in zip(held.ids, held.rows, held.right, strict=True)
    ]
    calibrator.update(
        name=f"{variant}--{config['model']}",
        method=variant,
        model=config["model"],
        # shown as a probability only if, on the fit items, it beats the share right
        probability=losses[l2] < base_loss,
        fit_on={
            "runs": list(source.get("runs", ())),
            "datasets": list(source.get("datasets", ())),
            "items": len(items.rows),
            "right": int(sum(items.right)),
            "fit_items": len(fit.rows),
            "fit_right": int(sum(fit.right)),
            "excluded_items_of": list(source.get("excluded_items_of", ())),
            "fitted": datetime.date.today().isoformat(),
        },
        # fit answers a check could not measure, taken at the fit items' mean (per signal)
        **({"imputed_at_mean": imputed} if imputed else {}),
        # whether the evidence step's signals were read: chosen on the fit items alone
        **({"features_chosen_by": chosen_by} if chosen_by else {}),
        # how the penalty was chosen (on the fit items), and what the alternatives scored
        l2_chosen_by={
            "cv_log_loss": {f"{k:g}": round(v, 4) for k, v in losses.items()},
            "base_rate_log_loss": round(base_loss, 4),
        },
        # what each signal alone says on the fit items (the answers that have it): AUROC
        signal_auroc=aurocs,
        # the fit items' out-of-fold probabilities (they start the certification's sequence)
        calibration=[[round(p, 6), int(ok)] for p, ok in zip(oof, fit.right, strict=True)],
        fit_items=[item_hash(i) for i in fit.ids],
        certification=certification_record(
            certify_items, list(zip(oof, fit.right, strict=True)), config, delta
        ),
    )
    return Calibrator.from_dict(calibrator)


def features_of(
    fit: CalibrationItems,
    method: str,
    checked: Sequence[str],
    features: Sequence[str] | None,
    monotone: int | None,
) -> tuple[tuple[str, ...], dict[str, Any] | None]:
    """The signals a calibrator reads and how they were chosen (on the fit items alone):
    named by the caller; at most ``monotone`` in their declared directions; or the method's
    own, with the evidence step's where they help."""
    if features is not None:  # named by the caller (chosen before the items were read)
        return tuple(features), None
    if not monotone:
        return with_evidence_signals(fit, (*calibration_signals(method), *checked))
    if checked:  # their signals have no declared direction, and the name would say them
        raise ValueError(
            f"{method}: a monotone choice of signals reads no costly check's "
            f"({', '.join(checked)}): fit without them (``without``)"
        )
    chosen, record = choose_monotone(fit.rows, fit.right, most=monotone)
    if not chosen:
        raise ValueError(
            f"{method}: no signal every fit answer has predicts in its declared direction "
            "on the fit items (scoring/confidence/feature_choice): no calibrator"
        )
    return chosen, record


def signal_aurocs(items: CalibrationItems) -> dict[str, float | None]:
    """Each signal's AUROC on ``items``, over the answers whose trace has it (a signal that
    ranks right answers above wrong ones no better than chance reads 0.5); None where those
    answers are all right or all wrong."""
    found: dict[str, float | None] = {}
    for name in sorted({name for row in items.rows for name in row}):
        labelled = zip(items.rows, items.right, strict=True)
        have = [(row[name], ok) for row, ok in labelled if name in row]
        value = auroc([v for v, _ in have], [ok for _, ok in have])
        found[name] = None if math.isnan(value) else round(value, 3)
    return found


def checked_signals(items: CalibrationItems, without: Sequence[str]) -> list[str]:
    """The costly checks' signals a calibrator reads: a check's when every calibration answer
    asked for it (runs made with --confidence-check, -O maxprob=true), less those ``without``;
    the calibrator is then that variant's ("searchain+nli"). An answer the check could not
    measure is taken at the fit items' mean (:func:`impute_at_mean`)."""
    return [
        s
        for s, check in CHECK_SIGNALS.items()
        if check not in without
        and all(check in c or s in r for c, r in zip(items.checks, items.rows, strict=True))
    ]


def impute_at_mean(rows: list[dict[str, float]], signals_: Sequence[str]) -> dict[str, int]:
    """Put each signal a row lacks at the mean of the rows that have it (as a calibrator
    takes an unmeasured signal when it maps an answer); how many rows, per signal."""
    out = {}
    for name in signals_:
        have = [r[name] for r in rows if name in r]
        missing = [r for r in rows if name not in r]
        if missing and not have:
            raise ValueError(f"no fit answer has {name}: it cannot be a feature")
        for r in missing:
            r[name] = sum(have) / len(have)
        if missing:
            out[name] = len(missing)
    return out


def with_evidence_signals(
    fit: CalibrationItems, features: tuple[str, ...]
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """``features`` and, where every fit answer has them (SearChain's evidence step), the
    evidence step's signals — kept only if they lower the cross-validated log-loss on the fit
    items (each set at its own best penalty; the rule was fixed before any calibration run of
    the evidence step). The choice and both losses, to record ({} where there is none)."""
    extra = tuple(s for s in EVIDENCE_SIGNALS if all(s in r for r in fit.rows))
    if not extra:
        return features, {}
    without = min(choose_l2(fit.rows, fit.right, features)[1].values())
    with_them = min(choose_l2(fit.rows, fit.right, (*features, *extra))[1].values())
    kept = with_them < without
    return (*features, *extra) if kept else features, {
        "evidence_signals": list(extra),
        "kept": kept,
        "cv_log_loss_without": round(without, 4),
        "cv_log_loss_with": round(with_them, 4),
    }


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
