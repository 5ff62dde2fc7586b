#!/bin/bash
# Issue 51's calibration run: the configuration `ask`, `serve` and the Python API run (SearChain's
# defaults since issue 50: question last, final_step=evidence with path+question; retrieve-read's
# defaults), on the calibration pool (bench/calibration_split.py: the 240 HotpotQA items outside
# HotpotQA-100 and the frozen held-out 160, the items answered before first), one item at a
# time, one llama.cpp thread. MaxProb is recorded (-O maxprob=true: the writing call's own
# log-probabilities; the answers are the defaults' word for word, greedy decoding), so it can be
# a signal and a baseline. Stop it anywhere; run it again to resume.
#   nohup bench/model_runs/calibration_pool.sh > /tmp/issue51-calibration.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1
.venv/bin/python -m bench.calibration_split
.venv/bin/searchain eval --dataset results/calibration/splits/hotpotqa-calibration-pool.jsonl \
  --methods searchain,retrieve-read --model qwen2.5-coder-1.5b --concurrency 1 \
  -O searchain.maxprob=true -O retrieve-read.maxprob=true \
  --out results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration-default
