"""Selective answering (issue 41, part 4): risk–coverage, AURC, selective accuracy, ECE and
their bootstrap intervals on hand-made sets, and the report's section over a run directory
written by hand."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from selective_kit import write_run
from typer.testing import CliRunner

from searchain.cli import app
from searchain.eval import selective as sel
from searchain.eval.bootstrap import resample_indices

PNG = b"\x89PNG\r\n\x1a\n"


def test_aurc_of_a_perfect_and_a_reversed_ranking() -> None:
    conf = [0.9, 0.8, 0.7, 0.6]
    # Perfect: the two right answers first; risks 0, 0, 1/3, 1/2.
    assert sel.aurc(conf, [1, 1, 0, 0]) == pytest.approx((0 + 0 + 1 / 3 + 1 / 2) / 4)
    # Reversed: the two wrong answers first; risks 1, 1, 2/3, 1/2.
    assert sel.aurc(conf, [0, 0, 1, 1]) == pytest.approx((1 + 1 + 2 / 3 + 1 / 2) / 4)
    coverage, risk = sel.risk_coverage(conf, [0, 0, 1, 1])
    assert coverage.tolist() == [0.25, 0.5, 0.75, 1.0]
    assert risk == pytest.approx([1, 1, 2 / 3, 1 / 2])
    assert sel.aurc(conf, [1, 1, 1, 1]) == 0.0 and sel.aurc(conf, [0, 0, 0, 0]) == 1.0
    # The input order does not matter, only the confidences.
    assert sel.aurc(conf[::-1], [0, 0, 1, 1]) == pytest.approx(5 / 24)


def test_selective_accuracy_at_a_coverage() -> None:
    conf = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    right = [1, 0, 1, 1, 0, 0]
    assert sel.selective_accuracy(conf, right, 0.5) == pytest.approx(2 / 3)  # top 3
    assert sel.selective_accuracy(conf, right, 0.8) == pytest.approx(3 / 5)  # ⌈4.8⌉ = 5
    assert sel.selective_accuracy(conf, right, 1.0) == pytest.approx(0.5)
    assert sel.selective_accuracy(conf, right, 0.01) == 1.0  # at least one item
    ten = np.linspace(1, 0.1, 10)
    # 0.7·10 is 7.000000000000001 in floating point: still the top 7, not 8.
    assert sel.selective_accuracy(ten, [1] * 7 + [0] * 3, 0.7) == 1.0
    with pytest.raises(ValueError):
        sel.selective_accuracy(conf, right, 0)


def test_ties_are_one_block_whatever_the_order() -> None:
    # A constant confidence ranks nothing: the flat curve at the error rate.
    for right in itertools.permutations([1, 1, 0, 0]):
        assert sel.risk_coverage([0.5] * 4, right)[1] == pytest.approx([0.5] * 4)
        assert sel.selective_accuracy([0.5] * 4, right, 0.5) == pytest.approx(0.5)
    # A tie in the middle: its one error is spread over its two places (0.5 each).
    for right in ([1, 1, 0, 0], [1, 0, 1, 0]):
        assert sel.risk_coverage([0.9, 0.5, 0.5, 0.1], right)[1] == pytest.approx(
            [0, 0.25, 1 / 3, 0.5]
        )
        assert sel.aurc([0.9, 0.5, 0.5, 0.1], right) == pytest.approx(13 / 48)


def test_ece_and_reliability_bins() -> None:
    # Perfectly calibrated: 1 of 4 right at 0.25, 3 of 4 right at 0.75.
    conf = [0.25] * 4 + [0.75] * 4
    right = [1, 0, 0, 0, 1, 1, 1, 0]
    assert sel.ece(conf, right) == 0.0
    # Over-confident: 0.9 everywhere, half right -> 0.4.
    assert sel.ece([0.9] * 4, [1, 1, 0, 0]) == pytest.approx(0.4)
    # Two bins of two: |0 - 0.95| and |0.5 - 0.15|, weighted by half each -> 0.65.
    assert sel.ece([0.95, 0.95, 0.15, 0.15], [0, 0, 1, 0]) == pytest.approx(0.65)
    bins = sel.reliability_bins([0.0, 0.05, 1.0, 0.95], [0, 1, 1, 1], bins=10)
    assert len(bins) == 10 and [b.count for b in bins] == [2, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    assert (bins[0].confidence, bins[0].accuracy) == (pytest.approx(0.025), 0.5)
    assert bins[9].lo == 0.9 and bins[9].hi == 1.0 and bins[9].accuracy == 1.0
    assert math.isnan(bins[1].accuracy)
    assert sel.ece([0.5, 1.0], [1, 1], bins=1) == pytest.approx(0.25)
    assert math.isnan(sel.ece([-0.4, -1.2], [1, 0]))  # a log-probability is no probability
    with pytest.raises(ValueError):
        sel.reliability_bins([1.5], [1])


def test_brier_and_log_loss_by_hand() -> None:
    conf, right = [0.9, 0.2, 0.6, 0.5], [1, 0, 0, 1]
    # (0.1² + 0.2² + 0.6² + 0.5²) / 4
    assert sel.brier(conf, right) == pytest.approx(0.66 / 4)
    # −(ln 0.9 + ln 0.8 + ln 0.4 + ln 0.5) / 4
    by_hand = -(math.log(0.9) + math.log(0.8) + math.log(0.4) + math.log(0.5)) / 4
    assert sel.log_loss(conf, right) == pytest.approx(by_hand) == pytest.approx(0.4844855)
    assert sel.base_rate_brier(right) == pytest.approx(0.25)  # half right: 0.5 · 0.5
    assert sel.base_rate_brier([1, 1, 1, 0]) == pytest.approx(0.75 * 0.25)
    # A confident wrong 0 or 1 is clipped to 1e-6: ln(10⁶) each, not infinity.
    assert sel.log_loss([1.0, 0.0], [0, 1]) == pytest.approx(-math.log(1e-6))
    assert sel.brier([1.0, 0.0], [0, 1]) == 1.0
    assert sel.log_loss([1.0, 0.0], [1, 0]) == pytest.approx(-math.log(1 - 1e-6))
    # Not on the scale of a probability: nothing to score, as for ECE.
    assert math.isnan(sel.brier([1.5, 0.2], [1, 0])) and math.isnan(sel.log_loss([-1, 0], [1, 0]))
    stats = sel.statistics(conf, right)
    assert stats["brier"] == pytest.approx(0.165) and stats["log_loss"] == pytest.approx(by_hand)
    assert stats["brier_base_rate"] == pytest.approx(0.25)
    # The constant share right scores exactly the base rate's Brier score.
    assert sel.brier([0.5] * 4, right) == pytest.approx(sel.base_rate_brier(right))


def test_inputs_are_checked() -> None:
    with pytest.raises(ValueError):
        sel.aurc([], [])
    with pytest.raises(ValueError):
        sel.aurc([0.5, 0.4], [1])
    with pytest.raises(ValueError):
        sel.aurc([0.5, math.nan], [1, 0])
    with pytest.raises(ValueError):
        sel.aurc([0.5, 0.4], [1, 0.5])


def _noisy(size: int = 120, seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    conf = rng.random(size)
    right = (rng.random(size) < conf).astype(float)  # calibrated by construction
    naive = np.log(np.clip(conf + rng.normal(0, 0.4, size), 0.01, 1))  # a worse ranking
    return conf, right, naive


def test_bootstrap_intervals_contain_the_point_estimates() -> None:
    conf, right, _ = _noisy()
    points = sel.statistics(conf, right)
    estimates = sel.bootstrap(conf, right, n=300)
    assert (
        set(estimates)
        == set(points)
        == {
            "aurc",
            "ece",
            "brier",
            "brier_base_rate",
            "log_loss",
            *(f"accuracy@{c:g}" for c in (0.5, 0.8, 1)),
            "lift@0.5",
        }
    )
    for name, e in estimates.items():
        assert e.value == pytest.approx(points[name])
        assert e.lo <= e.value <= e.hi, name
    assert estimates["accuracy@1"].value == pytest.approx(right.mean())
    lift = points["accuracy@0.5"] / points["accuracy@1"]
    assert points["lift@0.5"] == pytest.approx(lift) and lift > 1  # a ranking confidence
    assert sel.bootstrap(conf, right, n=300) == estimates  # deterministic for a seed
    # no lift without both of its coverages; none right at all: no lift (not a division error)
    assert "lift@0.5" not in sel.statistics(conf, right, coverages=(0.5, 0.8))
    assert math.isnan(sel.statistics([0.9, 0.2], [0, 0])["lift@0.5"])


def test_paired_difference_on_the_same_resamples() -> None:
    conf, right, naive = _noisy()
    cmp = sel.compare(conf, sel.naive_probability(naive), right, n=400)
    assert cmp.items == 120
    d = cmp.difference["aurc"]
    assert d.value == pytest.approx(cmp.a["aurc"].value - cmp.b["aurc"].value)
    assert d.lo <= d.value <= d.hi
    assert d.value < 0  # the calibrated confidence ranks better than the noisy naive one
    # Full coverage answers the same items either way: the paired difference is exactly 0.
    assert cmp.difference["accuracy@1"] == sel.Estimate(0.0, 0.0, 0.0)
    # The naive probability ranks as the log-probability does.
    assert sel.aurc(sel.naive_probability(naive), right) == pytest.approx(sel.aurc(naive, right))
    # Paired: the same resamples, so a confidence against itself differs by nothing.
    same = sel.compare(conf, conf, right, n=100)
    assert all(e == sel.Estimate(0.0, 0.0, 0.0) for e in same.difference.values())


def test_resamples_are_reproducible() -> None:
    a = np.concatenate(list(resample_indices(7, n=20, seed=1)))
    b = np.concatenate(list(resample_indices(7, n=20, seed=1)))
    assert a.shape == (20, 7) and (a == b).all() and a.min() >= 0 and a.max() < 7


# --- the report ---------------------------------------------------------------------------


def test_report_prints_the_section_and_writes_both_pngs(tmp_path: Path) -> None:
    run = write_run(tmp_path / "conf-run")
    out = tmp_path / "rep"
    result = CliRunner().invoke(app, ["report", str(run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "### conf-run: selective answering" in text
    assert "calibrated probability (calibrator platt 1, fit on hotpotqa-dev)" in text
    assert "40 of its 41 items have a confidence and a cover-EM; 36 of them a naive value" in text
    assert "| AURC (lower is better) |" in text
    assert "confidence, all 40 items |" in text  # naive only on 36: both columns shown
    assert "cover-EM at 50 % coverage" in text and "cover-EM at 80 % coverage" in text
    assert "cover-EM at 100 % coverage" in text
    assert "| ECE (10 bins) |" in text and "over 10 equal-width bins" in text
    assert "| Brier score (lower is better) |" in text
    assert "| Brier of always predicting the share right |" in text
    assert "| log-loss (nats, p clipped to [1e-06, 1 − 1e-06]) |" in text
    assert "an uncalibrated score in [0, 1], not a probability" in text
    assert "(uncalibrated score)" in text
    assert "No item has a naive value" in text  # the score method
    assert "No confidence recorded by plain: no selective table." in text
    assert "selective answering" in (out / "report.md").read_text()
    for name in ("risk_coverage.png", "reliability.png"):
        png = (out / name).read_bytes()
        assert png[:8] == PNG and len(png) > 5000, name


def test_report_section_numbers_match_the_module(tmp_path: Path) -> None:
    from searchain.eval import report as rep
    from searchain.eval.selective.method_confidence import collect

    run = write_run(tmp_path / "r")
    found, without = collect(rep.load([run]))
    assert [m.method for m in found] == ["calibrated", "score"] and without == {"r": ["plain"]}
    m = found[0]
    has = m.with_naive
    cmp = sel.compare(
        np.asarray(m.confidence)[has],
        sel.naive_probability(np.asarray(m.naive)[has]),
        np.asarray(m.correct)[has],
    )
    row = next(line for line in rep.analyses([run]).splitlines() if "| AURC" in line)
    assert f"| {cmp.a['aurc']} | {cmp.b['aurc']} | {cmp.difference['aurc'].signed()} |" in row
    lines = rep.analyses([run]).splitlines()
    brier = next(line for line in lines if line.startswith("| Brier score"))
    naive_brier = f"{cmp.b['brier'].decimal()} (uncalibrated score)"
    assert f"| {cmp.a['brier'].decimal()} | {naive_brier} | " in brier
    assert f"| {cmp.difference['brier'].decimal('+')} |" in brier
    loss = next(line for line in lines if line.startswith("| log-loss"))
    assert f"| {cmp.a['log_loss'].decimal()} |" in loss
    base = next(line for line in lines if line.startswith("| Brier of always"))
    assert f"| {cmp.a['brier_base_rate'].decimal()} |" in base
    assert cmp.a["brier_base_rate"] == cmp.b["brier_base_rate"]  # the same items


def test_report_says_how_ece_moves_with_the_bin_count(tmp_path: Path) -> None:
    """Beside the table's 10-bin ECE, one line with 5, 10, 15 and 20 bins on all the items:
    the 10-bin value is the module's, and the others are not copies of it."""
    from searchain.eval import report as rep
    from searchain.eval.selective.method_confidence import collect

    run = write_run(tmp_path / "r")
    m = collect(rep.load([run]))[0][0]
    line = next(x for x in rep.analyses([run]).splitlines() if x.startswith("ECE by bin count"))
    values = [100 * sel.ece(m.confidence, m.correct, b) for b in (5, 10, 15, 20)]
    shown = ", ".join(f"{v:.1f}" for v in values)
    assert line == f"ECE by bin count (5, 10, 15, 20 equal-width bins, all 40 items): {shown} %."
    assert len({round(v, 1) for v in values}) > 1
    score = [x for x in rep.analyses([run]).splitlines() if x.startswith("ECE by bin count")][1]
    assert score.endswith(" % (uncalibrated score).")  # the score method's: no probability


def test_a_run_without_confidences_prints_no_section(tmp_path: Path) -> None:
    run = write_run(tmp_path / "old-run", with_confidence=False)
    out = tmp_path / "rep"
    result = CliRunner().invoke(app, ["report", str(run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "selective answering" not in result.stdout
    assert "*old-run: no method recorded a confidence: no selective tables.*" in result.stdout
    assert not (out / "risk_coverage.png").exists() and not (out / "reliability.png").exists()
    assert (out / "report.png").exists()


def test_an_interval_leaves_undefined_resamples_out() -> None:
    """A ratio's resample whose denominator is 0 is NaN: the interval is read from the others,
    and none defined gives no interval (NaN), without a warning."""
    import warnings

    from searchain.eval.bootstrap import percentile_interval

    with_gaps = np.array([1.0, np.nan, 2.0, 3.0, np.nan])
    assert percentile_interval(with_gaps, 0.5) == percentile_interval(np.array([1.0, 2, 3]), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert all(math.isnan(v) for v in percentile_interval(np.array([np.nan, np.nan])))
