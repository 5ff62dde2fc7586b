#!/bin/bash
# Issue 50's tune measurement: SearChain with final_step=tracing (the paper's) against
# final_step=evidence on the first 20 items (seed-0 subsample) of the HotpotQA tune split,
# Qwen2.5-Coder-1.5B-Instruct, one llama.cpp thread, one configuration after the other (the
# second reuses the first's round calls from the call cache). Resumable: run it again.
#   nohup bench/issue50_tune.sh > /tmp/issue50-tune.log 2>&1 &
set -u
cd "$(dirname "$0")/.."
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"
for step in tracing evidence; do
  .venv/bin/python bench/tune.py run --set hotpotqa --name "fresh-$step" --limit 20 \
    -O "searchain.final_step=$step"
done
.venv/bin/python bench/tune.py compare --set hotpotqa fresh-tracing fresh-evidence \
  --out results/quality/qwen2.5-coder-1.5b/tune/issue50-tracing-vs-evidence.md
