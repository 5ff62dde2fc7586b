#!/bin/bash
# Issue 50's MuSiQue-100 figure, run once at the end: SearChain's default (final_step=evidence,
# evidence_sources=path+question, question last), Qwen2.5-Coder-1.5B-Instruct, one llama.cpp
# thread, one item at a time, over the same BM25 index of MuSiQue's corpus as the recorded
# Table run (results/quality/…/musique-100: SearChain 18.0 cover-EM); retrieve-read's records
# are lent by that run (--reuse-from: same items, settings, model and index), so the two are
# paired on the same items. Resumable: run it again.
#   nohup bench/model_runs/evidence_step_musique100.sh > /tmp/issue50-musique.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1
RUNS=results/quality/qwen2.5-coder-1.5b
INDEX="$PWD/results/quality/indexes/musique_train_corpus"
[ -d "$INDEX" ] && [ -n "$(ls -A "$INDEX")" ] ||
  .venv/bin/searchain index ../shared/data/musique/musique_train_corpus.json --out "$INDEX"
OUT="$RUNS/musique-100-evidence"
# --reuse-from only starts a run; once the run holds records, it resumes as it is.
REUSE=(--reuse-from "$RUNS/musique-100")
[ -s "$OUT/results.jsonl" ] && REUSE=()
.venv/bin/searchain eval --dataset musique --index "$INDEX" --limit 100 --seed 0 \
  --model qwen2.5-coder-1.5b --concurrency 1 --methods searchain,retrieve-read "${REUSE[@]}" \
  --out "$OUT"
