#!/bin/bash
# Issue 62's HotpotQA-100 and MuSiQue-100 with the final defaults: SearChain (read first,
# chain when the reader disagrees; the evidence step; the default retriever bm25+parts+bridge)
# and retrieve-read's defaults (its short-answer ending, the same retriever) — both re-answered,
# since the retriever and retrieve-read's template changed since the recorded runs. HotpotQA-100
# first (target ≥ 50); MuSiQue-100 once, at the end (target ≥ 18), only with MUSIQUE=1.
# Qwen2.5-Coder-1.5B-Instruct, one llama.cpp thread, one item at a time, from a worktree
# pinned at the commit whose defaults are final. Resumable: run it again.
#   git worktree add --detach /work/route-hq <commit>
#   cd /work/route-hq && nohup bench/model_runs/route_hotpotqa_musique.sh > /tmp/hq.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"
RUNS=results/quality/qwen2.5-coder-1.5b
eval_100() {
  .venv/bin/searchain eval --limit 100 --seed 0 --model qwen2.5-coder-1.5b --concurrency 1 \
    --retriever bm25+parts+bridge --methods searchain,retrieve-read "$@"
}
eval_100 --dataset hotpotqa --out "$RUNS/hotpotqa-100-route"
if [ "${MUSIQUE:-0}" = 1 ]; then
  INDEX="$PWD/results/quality/indexes/musique_train_corpus"
  [ -d "$INDEX" ] && [ -n "$(ls -A "$INDEX")" ] ||
    .venv/bin/searchain index ../shared/data/musique/musique_train_corpus.json --out "$INDEX"
  eval_100 --dataset musique --index "$INDEX" --out "$RUNS/musique-100-route"
fi
