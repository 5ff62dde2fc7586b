#!/bin/bash
# Issue 51's model runs in their order, with no idle time between them: the calibration run
# (resumed where it stopped) to the whole pool, the refit (no model call; writes the shipped
# calibrators), then the frozen 160 answered once (bench/model_runs/heldout_answers.sh refuses until the
# refit holds for the defaults). The held-out answers do not depend on the calibrators (the
# scoring script computes every confidence afresh), so nothing is chosen between the steps.
# Each step resumes; run it again after an interruption. Scoring stays a separate, single
# step (bench/model_runs/heldout_score.sh), after the docs are updated from the refit.
#   nohup bench/model_runs/calibration_then_heldout.sh > /tmp/issue51-chain.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
CAL=results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration-default
bench/model_runs/calibration_pool.sh
n=$(wc -l < "$CAL/results.jsonl")
[ "$n" -ge 480 ] || { echo "the calibration run holds $n of 480 records: not refitting"; exit 1; }
[ -f src/searchain/data/calibrator-searchain+maxprob--qwen2.5-coder-1.5b.json ] || bench/model_runs/calibrator_refit.sh
bench/model_runs/heldout_answers.sh
