#!/bin/bash
# Issue 50's cost target (SearChain's seconds per question <= 2.0 x retrieve-read's on the same
# runs), timed fairly: both arms on the same 15 reported real-documentation questions (spread
# over the documents), question by question, each arm in turn (--interleave: whatever else
# the shared machine runs, both meet it alike), no call cache (every call computed), one
# llama.cpp thread. Records: results/real-docs/timing/.
#   nohup bench/model_runs/evidence_step_timing.sh > /tmp/issue50-timing.log 2>&1 &
set -eu
cd "$(dirname "$0")/../.."  # the repository root
.venv/bin/python -m bench.real_docs_answers run --set reported --limit 15 \
  --arms retrieve-read,searchain --interleave --out results/real-docs/timing
