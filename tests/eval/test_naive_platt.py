"""The Platt-scaled naive baseline (issue 51): a 1-D logistic map of the naive log-probability,
fit only on the fit items of calibration runs, and its column in the report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from selective_kit import write_run
from typer.testing import CliRunner

from searchain.cli import app
from searchain.eval import selective as sel
from searchain.eval.selective import naive_platt
from searchain.scoring.confidence.calibration import choose_l2, fit_logistic
from searchain.scoring.confidence.certification import split_of


def _calibration_run(path: Path, items: int = 80, method: str = "calibrated") -> Path:
    """A calibration run written by hand: the higher the naive log-probability, the more
    often the answer is right (fixed seed), on ids no reported run holds."""
    rng = np.random.default_rng(3)
    records = []
    for i in range(items):
        logprob = float(np.log(rng.uniform(0.05, 1)))
        right = bool(rng.random() < np.exp(logprob))
        conf = {"value": 0.5, "calibrated": False, "naive": logprob}
        trace = {"question": f"c{i}", "method": method, "answer": "x", "confidence": conf}
        metrics = {"cover_em": float(right)}
        records.append(
            {"id": f"cal-{i}", "method": method, "status": "ok", "metrics": metrics, "trace": trace}
        )
    records.append({"id": "cal-x", "method": method, "status": "error", "error": "boom"})
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (path / "manifest.json").write_text(json.dumps({"config": {"model": "qwen-test"}}))
    return path


def test_fit_only_on_the_fit_items_with_the_calibrators_code(tmp_path: Path) -> None:
    run = _calibration_run(tmp_path / "cal")
    ids, logprobs, right = naive_platt.naive_items([run], "calibrated")
    assert len(ids) == 80 and "cal-x" not in ids  # the failed item has no naive value
    fit = [i for i, item in enumerate(ids) if split_of(item) == "fit"]
    assert 0 < len(fit) < 80  # the other items certify: never fit on
    platt = naive_platt.fit_naive_platt([run], "calibrated")
    assert platt["fit_on"]["items"] == len(fit)
    assert platt["fit_on"]["right"] == sum(right[i] for i in fit)
    assert platt["model"] == "qwen-test" and "fit items only" in platt["fit_on"]["split"]
    # The same fit as the calibrator code gives on those items (no second logistic fit).
    rows = [{naive_platt.FEATURE: logprobs[i]} for i in fit]
    y = [right[i] for i in fit]
    l2, _ = choose_l2(rows, y, (naive_platt.FEATURE,))
    direct = fit_logistic(rows, y, (naive_platt.FEATURE,), l2=l2)
    assert platt["weights"] == direct["weights"] and platt["bias"] == direct["bias"]


def test_the_map_is_a_monotone_probability_of_the_naive_score(tmp_path: Path) -> None:
    platt = naive_platt.fit_naive_platt([_calibration_run(tmp_path / "cal")], "calibrated")
    grid = np.linspace(-5, 0, 51)
    p = naive_platt.platt_probability(platt, grid)
    assert ((p > 0) & (p < 1)).all()
    assert platt["weights"][0] > 0 and (np.diff(p) > 0).all()  # higher log-prob: more likely
    # A monotone map ranks as the naive score does: the same risk–coverage curve and AURC.
    rng = np.random.default_rng(5)
    logprob, right = np.log(rng.uniform(0.05, 1, 60)), rng.random(60) < 0.5
    mapped = naive_platt.platt_probability(platt, logprob)
    assert sel.aurc(mapped, right) == pytest.approx(sel.aurc(logprob, right))


def test_reported_items_and_certify_items_never_fit(tmp_path: Path) -> None:
    run = _calibration_run(tmp_path / "cal")
    ids, _, _ = naive_platt.naive_items([run], "calibrated")
    fit = [item for item in ids if split_of(item) == "fit"]
    excluded = naive_platt.fit_naive_platt([run], "calibrated", exclude=fit[:5])
    assert excluded["fit_on"]["items"] == len(fit) - 5
    # Flipping a certification item's label changes nothing: it is not fit on.
    certify = next(i for i in ids if split_of(i) == "certify")
    lines = (run / "results.jsonl").read_text().splitlines()
    flipped = []
    for line in lines:
        r = json.loads(line)
        if r["id"] == certify:
            r["metrics"]["cover_em"] = 1.0 - r["metrics"]["cover_em"]
        flipped.append(json.dumps(r))
    before = naive_platt.fit_naive_platt([run], "calibrated")
    (run / "results.jsonl").write_text("\n".join(flipped) + "\n")
    after = naive_platt.fit_naive_platt([run], "calibrated")
    assert before["weights"] == after["weights"] and before["bias"] == after["bias"]


def test_too_few_or_one_class_is_a_clear_error(tmp_path: Path) -> None:
    run = _calibration_run(tmp_path / "cal", items=8)
    with pytest.raises(ValueError, match="a Platt map needs at least 10"):
        naive_platt.fit_naive_platt([run], "calibrated")
    with pytest.raises(ValueError, match="0 fit items"):
        naive_platt.fit_naive_platt([run], "another-method")


def test_report_shows_the_platt_column_beside_the_naive_one(tmp_path: Path) -> None:
    reported = write_run(tmp_path / "conf-run")
    cal = _calibration_run(tmp_path / "cal")
    result = CliRunner().invoke(app, ["report", str(reported), "--naive-platt", str(cal)])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "| naive, Platt-scaled | Δ confidence − Platt (paired) |" in text
    platt = naive_platt.fit_naive_platt([cal], "calibrated")
    assert f"Platt-scaled naive baseline: {naive_platt.describe(platt)}." in text
    assert "| ECE (10 bins) |" in text
    # The numbers are the module's: confidence against the Platt map on the same items.
    from searchain.eval import report as rep
    from searchain.eval.selective.method_confidence import collect

    m = collect(rep.load([reported]))[0][0]
    has = m.with_naive
    mapped = naive_platt.platt_probability(platt, np.asarray(m.naive)[has])
    cmp = sel.compare(np.asarray(m.confidence)[has], mapped, np.asarray(m.correct)[has])
    brier = next(line for line in text.splitlines() if line.startswith("| Brier score"))
    cells = f"| {cmp.b['brier'].decimal()} | {cmp.difference['brier'].decimal('+')} |"
    assert cells in brier
    aurc = next(line for line in text.splitlines() if line.startswith("| AURC"))
    assert f"| {cmp.b['aurc']} | {cmp.difference['aurc'].signed()} |" in aurc


def test_report_says_why_no_platt_baseline(tmp_path: Path) -> None:
    reported = write_run(tmp_path / "conf-run")
    cal = _calibration_run(tmp_path / "cal", method="retrieve-read")
    result = CliRunner().invoke(app, ["report", str(reported), "--naive-platt", str(cal)])
    assert result.exit_code == 0, result.output
    assert "No Platt-scaled naive baseline: calibrated: 0 fit items" in result.stdout
    assert "naive, Platt-scaled" not in result.stdout
    # A calibration run that is the reported run fits on nothing: its items are reported.
    result = CliRunner().invoke(app, ["report", str(reported), "--naive-platt", str(reported)])
    assert "No Platt-scaled naive baseline: calibrated: 0 fit items" in result.stdout
