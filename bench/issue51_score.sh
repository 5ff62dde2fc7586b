#!/bin/bash
# Issue 51's one scoring of the frozen 160, written before they are answered: after
# bench/issue51_heldout.sh is complete (160 items, both methods). The naive confidence (one
# scoring call per answer, bench/confidence.py) is added to the held-out answers and to the
# calibration run's (for its Platt-scaled baseline, fit on the calibration fit items only);
# MaxProb was recorded when they were answered. Then `searchain report` prints, per method,
# AURC, ECE (10 bins), Brier (beside the base rate's), log-loss and cover-EM at 50/80/100 %
# coverage against the naive, Platt-scaled naive, MaxProb and Platt-scaled MaxProb baselines,
# with paired bootstrap intervals, into results/heldout/report (report.md, selective.csv).
set -eu
cd "$(dirname "$0")/.."
export SEARCHAIN_THREADS=1
HELD=results/heldout/qwen2.5-coder-1.5b/hotpotqa-heldout-160
CAL=results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration-default
CONF=results/heldout/confidence
n=$(grep -c '"status": "ok"' "$HELD/results.jsonl" || true)
[ "$n" -ge 320 ] || { echo "the held-out run is not complete ($n of 320 records ok)"; exit 1; }
.venv/bin/python bench/confidence.py "$CAL" --methods searchain,retrieve-read \
  --model qwen2.5-coder-1.5b --out "$CONF/calibration"
.venv/bin/python bench/confidence.py "$HELD" --methods searchain,retrieve-read \
  --model qwen2.5-coder-1.5b --out "$CONF"
.venv/bin/searchain report "$CONF/hotpotqa-heldout-160" \
  --naive-platt "$CONF/calibration/hotpotqa-calibration-default" --maxprob-platt "$CAL" \
  --out results/heldout/report
# MuSiQue-100 as a transfer figure (issue 51): SearChain's default answers of issue 50's run
# (results/quality/…/musique-100-evidence), scored with the HotpotQA calibrator applied
# across the corpus (`--transfer`: an uncalibrated score that says so), same tables.
MUS=results/quality/qwen2.5-coder-1.5b/musique-100-evidence
.venv/bin/python bench/confidence.py "$MUS" --methods searchain,retrieve-read \
  --model qwen2.5-coder-1.5b --transfer --out "$CONF/transfer"
.venv/bin/searchain report "$CONF/transfer/musique-100-evidence" --out results/heldout/transfer-report
