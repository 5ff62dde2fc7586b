#!/bin/bash
# The one scoring of issue 62's MuSiQue-100 run (bench/model_runs/route_hotpotqa_musique.sh
# with MUSIQUE=1), written while it ran and before any of its records was scored: after 100
# items in both methods, SearChain's default against retrieve-read's (cover-EM of the short
# answer, 95 % bootstrap CIs, paired; target SearChain >= 18) and SearChain's routes (one read
# or chained, each route's cover-EM, what the chain added and lost over its first read).
# Writes arms.md and routes.md into the run's folder.
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export PYTHONPATH="$PWD/src"
R=results/quality/qwen2.5-coder-1.5b/musique-100-route
for method in searchain retrieve-read; do
  n=$(grep -c "\"method\": \"$method\"" "$R/results.jsonl" || true)
  [ "$n" -ge 100 ] || { echo "$method: $n of 100 answered: the run is not complete"; exit 1; }
done
.venv/bin/python -m bench.arms_table --against retrieve-read \
  default="$R:searchain" retrieve-read="$R:retrieve-read" > "$R/arms.md"
.venv/bin/python -m bench.route_breakdown "$R" > "$R/routes.md"
cat "$R/arms.md" "$R/routes.md"
