#!/bin/bash
# SearChain reading first (route="read-first"): the tune runs its route rule is chosen on.
# One arm reads first and then always chains, recording the first read, every trigger's
# signal and the chained answer, so any rule's answers can be computed offline
# (bench/searchain_route.py); retrieve-read on the same retriever is the bar. Tune items only:
# the 24 real-documentation tune questions and 20 of HotpotQA's tune split, on the default
# retriever (bm25+parts+bridge), Qwen2.5-Coder-1.5B-Instruct, one llama.cpp thread, one model
# run at a time. Resumable: run it again.
#   nohup bench/model_runs/searchain_route_tune.sh > /tmp/route-tune.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
# the checkout's own code, not what the venv was installed from (a pinned worktree)
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"
docs() { .venv/bin/python -m bench.real_docs_answers "$@"; }
docs setup --set tune --no-peer
docs run --set tune --arms searchain-route-always,retrieve-read-plan
PLAN=bm25+parts+bridge
.venv/bin/python -m bench.tune run --set hotpotqa --name route-always --limit 20 \
  --retriever $PLAN -O searchain.route=read-first -O searchain.chain_when=always
.venv/bin/python -m bench.tune run --set hotpotqa --name rr-plan --limit 20 \
  --retriever $PLAN --methods retrieve-read
