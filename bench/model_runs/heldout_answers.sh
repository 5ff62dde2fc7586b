#!/bin/bash
# Issue 51's one look: SearChain and retrieve-read (the defaults, MaxProb recorded) answer the
# 160 frozen HotpotQA items once, after the refit has shipped (bench/heldout_run.py refuses
# before), one item at a time, one llama.cpp thread. Resumable: run it again. Scored once, by
# the commands in results/heldout/README.md, after the run is complete.
#   nohup bench/model_runs/heldout_answers.sh > /tmp/issue51-heldout.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1
.venv/bin/python -m bench.heldout_run check
.venv/bin/python -m bench.heldout_run split
.venv/bin/searchain eval --dataset results/heldout/splits/hotpotqa-heldout-160.jsonl \
  --methods searchain,retrieve-read --model qwen2.5-coder-1.5b --concurrency 1 \
  -O searchain.maxprob=true -O retrieve-read.maxprob=true \
  --out results/heldout/qwen2.5-coder-1.5b/hotpotqa-heldout-160
