#!/bin/bash
# Issue 50's tune measurement: SearChain with final_step=tracing (the paper's) against
# final_step=evidence on the first 20 items (seed-0 subsample) of the HotpotQA tune split,
# Qwen2.5-Coder-1.5B-Instruct, one llama.cpp thread, one model run at a time. The two runs
# take turns in slices of SLICE seconds (default 600), so both hold the same items whenever
# it stops; the round calls they share come from the call cache, whichever computed them.
# Resumable: run it again (a slice's unfinished item is redone, its finished calls cached).
#   nohup bench/model_runs/evidence_step_tune.sh > /tmp/issue50-tune.log 2>&1 &
set -u
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"
RUNS=results/quality/qwen2.5-coder-1.5b/tune
ITEMS=20
finished() { awk NF "$RUNS/hotpotqa-fresh-$1/results.jsonl" 2>/dev/null | wc -l; }
for _ in $(seq 30); do  # at most 30 turns each: a run that cannot finish stops here
  [ "$(finished tracing)" -ge $ITEMS ] && [ "$(finished evidence)" -ge $ITEMS ] && break
  for step in evidence tracing; do
    if [ "$(finished $step)" -lt $ITEMS ]; then
      timeout "${SLICE:-600}" .venv/bin/python -m bench.tune run --set hotpotqa \
        --name "fresh-$step" --limit $ITEMS -O "searchain.final_step=$step"
    fi
  done
done
.venv/bin/python -m bench.tune compare --set hotpotqa fresh-tracing fresh-evidence \
  --out "$RUNS/issue50-tracing-vs-evidence.md"
# A third configuration (issue 50 allows three), from the first comparison's losses: the
# evidence step also reads the passages of nodes IR did not confirm.
.venv/bin/python -m bench.tune run --set hotpotqa --name fresh-evidence-path --limit $ITEMS \
  -O searchain.final_step=evidence -O searchain.evidence_sources=path+question
.venv/bin/python -m bench.tune compare --set hotpotqa fresh-evidence fresh-evidence-path \
  --out "$RUNS/issue50-evidence-vs-evidence-path.md"
