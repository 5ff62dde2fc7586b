"""``searchain calibrate``: fit a method's confidence calibrator from evaluation runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from searchain.cli.common import err, fail

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


def calibrate(
    runs: RunsArg,
    method: CalibratedMethodOpt = "searchain",
    out: CalibratorOutOpt = None,
    exclude_items_of: ExcludeOpt = None,
) -> None:
    """Fit a calibrator that maps an answer's signals (what the trace says about it) to the
    probability it is right, from runs made with your model: then every answer of that
    method and model carries a calibrated confidence, and --max-risk can pick a threshold.

    Example: searchain eval --dataset my-calibration.jsonl --methods searchain --out runs/cal
    && searchain calibrate runs/cal --method searchain"""
    from searchain.eval.calibrate import fit_calibrator
    from searchain.scoring.confidence import calibrator_name, user_calibrators

    try:
        calibrator = fit_calibrator(runs, method, exclude_items_of or ())
    except (ValueError, FileNotFoundError) as e:
        fail(str(e))
    # A run made with costly checks gives a calibrator of its own ("searchain+nli").
    method = calibrator["method"]
    path = out or user_calibrators() / calibrator_name(method, calibrator["model"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(calibrator, indent=1) + "\n", encoding="utf-8")
    fit = calibrator["fit_on"]
    err.print(
        f"calibrator for {method} on {calibrator['model']}: {fit['items']} items "
        f"({fit['right']} right) -> {path}"
    )
    chosen = calibrator["l2_chosen_by"]
    loss = chosen["cv_log_loss"][f"{calibrator['l2']:g}"]
    bar = chosen["base_rate_log_loss"]
    err.print(
        f"penalty {calibrator['l2']:g} by cross-validation: log-loss {loss:.3f} on items it "
        f"was not fit on; the base rate alone scores {bar:.3f}"
    )
    if loss >= bar:
        err.print(
            "[yellow]warning:[/] on these items the signals predict no better than the share "
            "right: its probabilities stay near that share. More items, or a method whose "
            "traces say more, may help."
        )
