#!/bin/bash
# The runs tied to SearChain's default route rule of the second tune round
# (chain_when=reader-disagrees, results/searchain-route/tune-round2.md), in the order that
# unblocks most: issue 62's reported 53 (SearChain's defaults beside retrieve-read's defaults,
# the short-answer ending, question by question in turn: --interleave, fair seconds; half
# first, spread over the documents), then issue 61's documentation calibration answers (the 80
# calibration questions, then the 24 tune questions, whole traces kept: the calibrator reads
# their signals). The question-only ablation and the one-sentence retrieve-read on the 53 are
# not re-run: their settings did not change (the bench refuses a resume whose settings did).
# Qwen2.5-Coder-1.5B-Instruct, one llama.cpp thread, one model run at a time, from a worktree
# pinned at the commit that made the rule the default. Resumable: run it again.
#   git worktree add --detach /work/route-rd <commit>
#   cd /work/route-rd && nohup bench/model_runs/searchain_reader_disagrees.sh > /tmp/rd.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"  # the pinned checkout's own code
docs() { .venv/bin/python -m bench.real_docs_answers "$@"; }
docs setup --set reported --no-peer
docs run --set reported --arms searchain-plan,retrieve-read-answer-plan --interleave --limit 27
docs run --set reported --arms searchain-plan,retrieve-read-answer-plan --interleave
docs setup --set calibration --no-peer
docs run --set calibration --arms searchain-plan --limit 40
docs run --set calibration --arms searchain-plan
docs setup --set tune --no-peer
docs run --set tune --arms searchain-plan
