#!/bin/bash
# Issue 51's refit: the shipped calibrators of the defaults' configuration (SearChain: question
# last, final_step=evidence with path+question; retrieve-read), from the calibration run of the
# pool (bench/model_runs/calibration_pool.sh), never an item of a reported run or the frozen 160 (the
# pool holds none; the reported runs are excluded again by name). `searchain calibrate` splits
# the items by the committed rule: penalty and fit on the fit items, the threshold certified on
# the others. The run recorded MaxProb on every answer: `--without maxprob` fits the plain
# calibrator `ask` uses; without it, the `+maxprob` variant (answers made with -O maxprob=true).
# No model call.
set -eu
cd "$(dirname "$0")/../.."  # the repository root
CAL=results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration-default
Q=results/quality/qwen2.5-coder-1.5b
EXCL=(--exclude-items-of "$Q/hotpotqa-100" --exclude-items-of "$Q/musique-100")
DATA=src/searchain/data
for m in searchain retrieve-read; do
  .venv/bin/searchain calibrate "$CAL" --method "$m" --without maxprob "${EXCL[@]}" \
    --out "$DATA/calibrator-$m--qwen2.5-coder-1.5b.json"
  .venv/bin/searchain calibrate "$CAL" --method "$m" "${EXCL[@]}" \
    --out "$DATA/calibrator-$m+maxprob--qwen2.5-coder-1.5b.json"
done
# docs/confidence.md's table of the shipped calibrators, from the files just written
.venv/bin/python -m bench.calibrator_table
