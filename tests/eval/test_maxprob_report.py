"""The report's MaxProb baseline (issue 51): beside the naive one, raw and Platt-scaled on the
fit items of calibration runs, with the reasons items lack a value. Run records are written
as ``searchain eval`` writes them (the trace's ``meta.maxprob`` as the methods record it)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from searchain.cli import app
from searchain.eval import selective as sel
from searchain.eval.selective import maxprob_baseline as mb
from searchain.eval.selective import naive_platt
from searchain.scoring.confidence import maxprob
from searchain.scoring.confidence.certification import split_of

NO_LOGPROBS = "the backend returned no token log-probabilities for the retrieve-read call"


def _meta(value: float | None, reason: str = "") -> dict:
    found = {"value": value, "call": "retrieve-read", "computed": maxprob.COMPUTED}
    return {"maxprob": found if value is not None else {**found, "reason": reason}}


def _run(path: Path, items: int = 40, prefix: str = "r", seed: int = 11) -> Path:
    """``retrieve-read`` with a confidence and MaxProb (none for 3 items: no log-probs; for 2:
    no answer), ``searchain`` with a confidence and no MaxProb (not run with it)."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(items):
        p, mp = float(rng.uniform(0.05, 0.95)), float(rng.uniform(0.05, 1))
        right = bool(rng.random() < mp)
        meta = _meta(mp)
        if i < 3:
            meta = _meta(None, NO_LOGPROBS)
        elif i < 5:
            meta = _meta(None, maxprob.NO_ANSWER)
        for method, m in (("retrieve-read", meta), ("searchain", {})):
            conf = {"value": p, "calibrated": False, "naive": None}
            trace = {"question": f"q{i}", "method": method, "answer": "x", "confidence": conf}
            records.append(
                {
                    "id": f"{prefix}-{i}",
                    "method": method,
                    "status": "ok",
                    "metrics": {"cover_em": float(right)},
                    "trace": {**trace, "meta": m},
                }
            )
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (path / "manifest.json").write_text(json.dumps({"config": {"model": "gemma-test"}}))
    return path


def _line(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(start))


def _report(*args: str) -> str:
    result = CliRunner().invoke(app, ["report", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_report_compares_the_confidence_with_maxprob_on_its_items(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    text = _report(str(run))
    assert (
        "MaxProb baseline: 35 of 40 items have a MaxProb value (without one: "
        f"3 × {NO_LOGPROBS}; 2 × no answer)." in text
    )
    assert text.count("MaxProb baseline:") == 1  # searchain was not run with maxprob
    assert "| metric | confidence | MaxProb | Δ confidence − MaxProb (paired) |" in text
    # The figures are selective.compare's on the 35 items with a value.
    records = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    rr = [
        r
        for r in records
        if r["method"] == "retrieve-read" and r["trace"]["meta"]["maxprob"]["value"]
    ]
    conf = [r["trace"]["confidence"]["value"] for r in rr]
    values = [r["trace"]["meta"]["maxprob"]["value"] for r in rr]
    right = [r["metrics"]["cover_em"] for r in rr]
    cmp = sel.compare(conf, values, right)
    mp_table = text[text.index("MaxProb baseline:") :]
    aurc = _line(mp_table, "| AURC")
    assert f"| {cmp.b['aurc']} | {cmp.difference['aurc'].signed()} |" in aurc
    ece = _line(mp_table, "| ECE (10 bins)")
    assert f"| {cmp.b['ece']} (uncalibrated score) |" in ece
    brier = _line(mp_table, "| Brier score")
    assert f"| {cmp.b['brier'].decimal()} (uncalibrated score) |" in brier
    loss = _line(mp_table, "| log-loss")
    assert f"| {cmp.b['log_loss'].decimal()} (uncalibrated score) |" in loss


def test_platt_scaled_on_the_calibration_fit_items_only(tmp_path: Path) -> None:
    reported, cal = _run(tmp_path / "run"), _run(tmp_path / "cal", 120, "cal", seed=3)
    platt = mb.fit_maxprob_platt([cal], "retrieve-read")
    ids, logs, _right = naive_platt.scored_items([cal], "retrieve-read", (), mb.log_maxprob)
    fit = [i for i, item in enumerate(ids) if split_of(item) == "fit"]
    assert len(ids) == 115 and platt["fit_on"]["items"] == len(fit) < 115
    assert platt["features"] == [mb.FEATURE] and platt["weights"][0] > 0
    first = json.loads((cal / "results.jsonl").read_text().splitlines()[10])  # cal-5
    assert ids[0] == "cal-5"
    assert logs[0] == pytest.approx(math.log(first["trace"]["meta"]["maxprob"]["value"]))
    text = _report(str(reported), "--maxprob-platt", str(cal))
    assert f"Platt-scaled MaxProb baseline: {naive_platt.describe(platt)}." in text
    assert "ln MaxProb mapped by a 1-D logistic fit" in text
    head = (
        "| metric | confidence | MaxProb | Δ confidence − MaxProb (paired) | MaxProb, Platt-scaled"
    )
    assert head in text
    records = [json.loads(x) for x in (reported / "results.jsonl").read_text().splitlines()]
    rr = [r for r in records if r["method"] == "retrieve-read"]
    rr = [r for r in rr if r["trace"]["meta"]["maxprob"]["value"]]
    values = np.array([r["trace"]["meta"]["maxprob"]["value"] for r in rr])
    mapped = naive_platt.platt_probability(platt, np.log(values))
    cmp = sel.compare(
        [r["trace"]["confidence"]["value"] for r in rr],
        mapped,
        [r["metrics"]["cover_em"] for r in rr],
    )
    brier = _line(text[text.index("MaxProb baseline:") :], "| Brier score")
    assert brier.endswith(
        f"| {cmp.b['brier'].decimal()} | {cmp.difference['brier'].decimal('+')} |"
    )
    # A certification item's label changes nothing: never fit on.
    certify = next(i for i in ids if split_of(i) == "certify")
    lines = []
    for line in (cal / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["id"] == certify:
            r["metrics"]["cover_em"] = 1.0 - r["metrics"]["cover_em"]
        lines.append(json.dumps(r))
    (cal / "results.jsonl").write_text("\n".join(lines) + "\n")
    again = mb.fit_maxprob_platt([cal], "retrieve-read")
    assert again["weights"] == platt["weights"] and again["bias"] == platt["bias"]


def test_the_report_says_why_no_platt_scaled_maxprob(tmp_path: Path) -> None:
    reported = _run(tmp_path / "run")
    # The reported run as its own calibration run: its items are reported, so none fits.
    text = _report(str(reported), "--maxprob-platt", str(reported))
    assert "No Platt-scaled MaxProb baseline: retrieve-read: 0 fit items with a ln MaxProb" in text
    assert "MaxProb, Platt-scaled" not in text


def test_report_out_writes_the_selective_statistics_as_csv(tmp_path: Path) -> None:
    """`report --out` writes selective.csv: the figures the tables show, one row each."""
    import csv

    run = _run(tmp_path / "run")
    _report(str(run), "--out", str(tmp_path / "rep"))
    rows = list(csv.DictReader((tmp_path / "rep" / "selective.csv").open()))
    got = {(r["method"], r["score"], r["metric"]): r for r in rows}
    records = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    rr = [r for r in records if r["method"] == "retrieve-read"]
    has = [r for r in rr if r["trace"]["meta"]["maxprob"]["value"]]
    cmp = sel.compare(
        [r["trace"]["confidence"]["value"] for r in has],
        [r["trace"]["meta"]["maxprob"]["value"] for r in has],
        [r["metrics"]["cover_em"] for r in has],
    )
    aurc = got[("retrieve-read", "MaxProb", "aurc")]
    assert aurc["items"] == "35" and float(aurc["value"]) == pytest.approx(cmp.b["aurc"].value)
    d = got[("retrieve-read", "confidence - MaxProb", "aurc")]
    assert (float(d["lo"]), float(d["hi"])) == pytest.approx(
        (cmp.difference["aurc"].lo, cmp.difference["aurc"].hi), abs=1e-6
    )
    assert ("retrieve-read", "confidence - MaxProb", "accuracy@1") not in got  # no difference
    assert got[("searchain", "confidence", "ece")]["items"] == "40"
    assert ("searchain", "MaxProb", "aurc") not in got  # not run with maxprob
