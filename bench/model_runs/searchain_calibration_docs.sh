#!/bin/bash
# Issue 61's documentation calibration questions (bench/data/real_docs_calibration_questions.jsonl,
# 80 questions over all nine Debian documents; never reported) answered with SearChain's defaults
# (`searchain-plan`: read first, chain when the rule fires, the default retriever
# bm25+parts+bridge), Qwen2.5-Coder-1.5B-Instruct, one llama.cpp thread, from a worktree pinned
# at a commit whose SearChain defaults are those the reported 53 were answered with (df99143)
# and whose bench keeps each answer's whole trace (its signals and configuration: the
# calibrator reads them), so the calibrator is fit on the configuration it is judged in.
# Half first, spread over the documents; resumable.
#   git worktree add --detach /work/cal-docs <commit>
#   cd /work/cal-docs && nohup bench/model_runs/searchain_calibration_docs.sh > /tmp/cal.log 2>&1 &
# Records: results/real-docs/calibration/qwen2.5-coder-1.5b/searchain-plan.jsonl
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"  # the pinned checkout's own code
docs() { .venv/bin/python -m bench.real_docs_answers "$@"; }
docs setup --set calibration --no-peer
docs run --set calibration --arms searchain-plan --limit 40
docs run --set calibration --arms searchain-plan
