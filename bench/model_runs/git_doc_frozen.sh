#!/bin/bash
# The one run of the frozen git-doc set (../shared/splits/git-doc/: 60 questions over Debian's
# git-doc, 30 one-hop, 15 two-part, 15 bridge), which closes issues 62 and 61: SearChain's
# defaults, retrieve-read's defaults (its short-answer ending) and the question-only ablation,
# on the default retriever, question by question in turn (--interleave: fair seconds), every
# answer's whole trace kept (its confidence is scored from them). Run ONLY when every default
# and calibrator is chosen: the records are the reported run, answered once and scored once.
# Qwen2.5-Coder-1.5B-Instruct, one llama.cpp thread, one model run at a time, from a worktree
# pinned at the commit that chose everything. Resumable (an interruption is not a second run).
#   git worktree add --detach /work/git-doc-frozen <commit>
#   cd /work/git-doc-frozen && nohup bench/model_runs/git_doc_frozen.sh > /tmp/git-doc.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"
docs() { .venv/bin/python -m bench.real_docs_answers "$@"; }
docs setup --set git-doc --no-peer
docs run --set git-doc --frozen-run --interleave \
  --arms searchain-plan,retrieve-read-answer-plan,searchain-evidence-question-plan
