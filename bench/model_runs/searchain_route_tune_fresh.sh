#!/bin/bash
# SearChain reading first: the route rule's second tune round (issue 62), on tune items no rule
# was chosen on: the 32 fresh documentation tune questions (bench/data/
# real_docs_tune_fresh_questions.md) and HotpotQA tune items 21-40 (the seed-0 order of the
# tune split; items 1-20 were the first round). The route arm reads first and always chains,
# so every rule's answers are computed offline (bench/searchain_route.py); retrieve-read with
# its short-answer ending is the bar, also on the first round's 24 documentation questions
# (against the one-sentence form: the prompt change judged on tune items). Default
# retriever (bm25+parts+bridge), Qwen2.5-Coder-1.5B-Instruct, one llama.cpp thread, one model
# run at a time, from a pinned worktree. Resumable: run it again.
#   nohup bench/model_runs/searchain_route_tune_fresh.sh > /tmp/route-fresh.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"
docs() { .venv/bin/python -m bench.real_docs_answers "$@"; }
docs setup --set tune-fresh --no-peer
docs run --set tune-fresh --arms searchain-route-always
docs setup --set tune --no-peer
docs run --set tune --arms retrieve-read-answer-plan
# the one-sentence form it is judged against (its records held 2 of the 24)
docs run --set tune --arms retrieve-read-plan
.venv/bin/python - <<'PY'  # HotpotQA tune items 21-40: the seed-0 picks of 40 less those of 20
from bench.quality import RESULTS
from bench.tune import REPORTED
from searchain.eval.datasets.named import subsample
from searchain.eval.recipes import RECIPES
from searchain.eval.splits import tune_split
src = tune_split(RECIPES["hotpotqa"], REPORTED, RESULTS)
lines = [ln for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()]
first = set(subsample(range(len(lines)), 20, 0))
fresh = [i for i in subsample(range(len(lines)), 40, 0) if i not in first]
out = src.with_name("hotpotqa-tune-50-route-fresh.jsonl")
out.write_text("".join(lines[i] + "\n" for i in fresh), encoding="utf-8")
PY
.venv/bin/python -m searchain.cli eval \
  --dataset results/quality/splits/hotpotqa-tune-50-route-fresh.jsonl --methods searchain \
  --seed 0 --model qwen2.5-coder-1.5b --api auto --concurrency 1 \
  --out results/quality/qwen2.5-coder-1.5b/tune/hotpotqa-route-always-fresh \
  --retriever bm25+parts+bridge -O searchain.route=read-first -O searchain.chain_when=always
docs run --set tune-fresh --arms retrieve-read-answer-plan
