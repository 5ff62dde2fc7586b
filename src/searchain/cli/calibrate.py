"""``searchain calibrate``: fit a method's confidence calibrator from evaluation runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from searchain.cli.common import err, fail

if TYPE_CHECKING:
    from searchain.scoring.confidence.calibrator import Calibrator

RunsArg = Annotated[
    list[Path],
    typer.Argument(
        help="Run directories of `searchain eval` on calibration items (never the items you "
        "report).",
        exists=True,
        file_okay=False,
    ),
]
CalibratedMethodOpt = Annotated[str, typer.Option(help="The method whose answers to calibrate.")]
CalibratorOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Where to write the calibrator (default: the user's calibrators, which ask, eval "
        "and serve use for this method and model).",
    ),
]


ExcludeOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--exclude-items-of",
        help="Run directories whose items must not be used (those you report on); repeatable.",
        show_default=False,
    ),
]


CertifyDeltaOpt = Annotated[
    float,
    typer.Option(
        "--risk-delta",
        min=0.001,
        max=0.5,
        help="δ of the lowest certified risk the calibrator file records (--max-risk takes "
        "its own).",
    ),
]


WithoutOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--without",
        help="A check the runs recorded whose signal the calibrator must not read (maxprob, "
        "likelihood, consistency, nli): fits the calibrator for answers made without it; "
        "repeatable.",
        show_default=False,
    ),
]


def calibrate(
    runs: RunsArg,
    method: CalibratedMethodOpt = "searchain",
    out: CalibratorOutOpt = None,
    exclude_items_of: ExcludeOpt = None,
    risk_delta: CertifyDeltaOpt = 0.1,
    without: WithoutOpt = None,
) -> None:
    """Fit a calibrator that maps an answer's signals (what the trace says about it) to the
    probability it is right, from runs made with your model: then every answer of that
    method and model carries a calibrated confidence, and --max-risk can pick a threshold.

    Example: searchain eval --dataset my-calibration.jsonl --methods searchain --out runs/cal
    && searchain calibrate runs/cal --method searchain

    Runs made with a check (-O searchain.maxprob=true, --confidence-check likelihood) give
    that check's calibrator (searchain+maxprob); --without maxprob fits the plain one from
    the same runs."""
    from searchain.eval.calibrate import fit_calibrator
    from searchain.scoring.confidence.calibrator import (
        calibrator_name,
        forget_calibrators,
        user_calibrators,
    )

    try:
        calibrator = fit_calibrator(
            runs, method, exclude_items_of or (), risk_delta, without=without or ()
        )
    except (ValueError, FileNotFoundError) as e:
        fail(str(e))
    # A run made with costly checks gives a calibrator of its own ("searchain+nli").
    method, model = str(calibrator.method), str(calibrator.model)
    name = calibrator_name(method, model)
    if out is not None and out.name.startswith("calibrator-") and out.name != name:
        fail(  # a file named for another calibrator would be found for the wrong answers
            f"these runs give the calibrator {name}, not {out.name}: name the file after it "
            "(or use --without CHECK for the calibrator without a check)"
        )
    path = out or user_calibrators() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(calibrator.to_dict(), indent=1) + "\n", encoding="utf-8")
    forget_calibrators()  # --out may replace a packaged file: answers from now on use it
    say_fit(calibrator, path)


def say_fit(calibrator: Calibrator, path: Path) -> None:
    """What was fit, on how many items, how well, and what it certifies, in words."""
    fit = calibrator.fit_on or {}
    err.print(
        f"calibrator for {calibrator.method} on {calibrator.model}: {fit['items']} items "
        f"({fit['right']} right) -> {path}"
    )
    chosen = calibrator.l2_chosen_by or {}
    loss = chosen["cv_log_loss"][f"{calibrator.l2:g}"]
    bar = chosen["base_rate_log_loss"]
    err.print(
        f"fit on {fit['fit_items']} of them ({fit['fit_right']} right; the split rule keeps "
        f"the other {fit['items'] - fit['fit_items']} to certify): penalty "
        f"{calibrator.l2:g} by cross-validation, log-loss {loss:.3f} on items it was not "
        f"fit on; the base rate alone scores {bar:.3f}"
    )
    said = signals_said(calibrator.signal_auroc or {}, set(calibrator.features))
    if said:
        err.print(f"each signal alone on the fit items, AUROC (0.5 says nothing): {said}")
    if not calibrator.beats_base_rate:
        err.print(
            "[yellow]warning:[/] on these items the signals predict no better than the share "
            "right: its values are shown as an uncalibrated score, never as a probability, "
            "and --max-risk refuses it. More items, or a method whose traces say more, may help."
        )
    cert = calibrator.certification or {}
    n = len(calibrator.certification_items)
    at = calibrator.lowest_certificate
    if at is None:
        err.print(f"certified: nothing at δ {cert['delta']:g} on {n} items ({cert['reason']})")
    else:
        err.print(
            f"certified: risk {at.max_risk:g} at δ {cert['delta']:g} on {n} "
            f"certification items (threshold {at.threshold:.2f}, {at.answered} answered, "
            f"{at.errors} wrong); --max-risk below it withholds every answer"
        )


def signals_said(aurocs: dict[str, float | None], read: set[str], most: int = 6) -> str:
    """The signals that say most (AUROC farthest from 0.5), in words: "rounds 0.38, …"; one
    the calibrator does not read (left out by --without, or not a feature) says so."""
    known = [(name, value) for name, value in aurocs.items() if value is not None]
    known.sort(key=lambda item: -abs(item[1] - 0.5))
    shown = ", ".join(
        f"{name} {value:.2f}" + ("" if name in read else " (not read)")
        for name, value in known[:most]
    )
    return shown + (f" (and {len(known) - most} more in the file)" if len(known) > most else "")
