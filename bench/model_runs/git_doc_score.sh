#!/bin/bash
# The one scoring of the frozen git-doc run, written before it is answered: after
# bench/model_runs/git_doc_frozen.sh is complete (60 questions, three arms). Issue 62's
# figures: every arm right by the short and the whole answer (the set's grading rule:
# alias_match), by kind (one-hop, two-part, bridge), SearChain's defaults paired against
# retrieve-read's defaults and the question-only ablation (95 % bootstrap CIs). Issue 61's:
# SearChain's confidence as each trace recorded it, against the naive confidence (one scoring
# call an answer): the more confident half over all, AURC (paired), ECE where it is a
# probability. Writes results/real-docs/git-doc/{answers,confidence}.md.
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1 PYTHONPATH="$PWD/src"
D=results/real-docs/git-doc
ARMS=searchain-plan,retrieve-read-answer-plan,searchain-evidence-question-plan
for arm in ${ARMS//,/ }; do
  n=$(grep -c '"status": "ok"' "$D/qwen2.5-coder-1.5b/$arm.jsonl" || true)
  [ "$n" -ge 60 ] || { echo "$arm: $n of 60 answered: the run is not complete"; exit 1; }
done
.venv/bin/python -m bench.real_docs_answers table --set git-doc --arms $ARMS --golds answers \
  --paired-with retrieve-read-answer-plan,searchain-evidence-question-plan > "$D/answers.md"
.venv/bin/python -m bench.docs_confidence --set git-doc --arms searchain-plan \
  --out "$D/confidence.md"
