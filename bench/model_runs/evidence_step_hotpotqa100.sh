#!/bin/bash
# Issue 50's reported HotpotQA-100 run of SearChain's default (final_step=evidence,
# evidence_sources=path+question, question last), Qwen2.5-Coder-1.5B-Instruct, one llama.cpp
# thread, one item at a time; retrieve-read's records come from the recorded HotpotQA-100 run
# (same items, same settings: --reuse-from), so the two are paired on the same items.
# Then the ablation (the evidence step reads the question's own top-k alone), whose chain
# calls come from the call cache. Resumable: run it again.
#   nohup bench/model_runs/evidence_step_hotpotqa100.sh > /tmp/issue50-hotpotqa.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1
RUNS=results/quality/qwen2.5-coder-1.5b
eval_100() {
  .venv/bin/searchain eval --dataset hotpotqa --limit 100 --seed 0 --model qwen2.5-coder-1.5b \
    --concurrency 1 "$@"
}
OUT="$RUNS/hotpotqa-100-evidence"
# --reuse-from only starts a run; once the run holds records, it resumes as it is.
REUSE=(--reuse-from "$RUNS/hotpotqa-100")
[ -s "$OUT/results.jsonl" ] && REUSE=()
eval_100 --methods searchain,retrieve-read "${REUSE[@]}" --out "$OUT"
eval_100 --methods searchain -O searchain.evidence_sources=question \
  --out "$RUNS/hotpotqa-100-evidence-question"
