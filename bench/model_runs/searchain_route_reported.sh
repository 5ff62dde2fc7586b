#!/bin/bash
# Issue 62's reported runs on the 53 real-documentation questions: SearChain's defaults
# (read first, chain when the chosen rule fires) beside retrieve-read and the question-only
# ablation, all on the default retriever (bm25+parts+bridge), question by question in turn
# (--interleave: fair seconds on a shared machine). Half first, spread over the documents,
# then the rest. Qwen2.5-Coder-1.5B-Instruct, one llama.cpp thread, one model run at a time,
# from a worktree pinned at the commit that chose the defaults. Resumable: run it again.
#   git worktree add --detach /work/route-reported <commit>
#   cd /work/route-reported && nohup bench/model_runs/searchain_route_reported.sh > /tmp/rr.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
# the checkout's own code, not what the venv was installed from (a pinned worktree)
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"
docs() { .venv/bin/python -m bench.real_docs_answers "$@"; }
ARMS=searchain-plan,retrieve-read-plan,searchain-evidence-question-plan
docs setup --set reported --no-peer
docs run --set reported --arms $ARMS --interleave --limit 27
docs run --set reported --arms $ARMS --interleave
