#!/bin/bash
# Issue 51's one scoring of the frozen 160, written before they are answered: after
# bench/model_runs/heldout_answers.sh is complete (160 items, both methods). The naive confidence (one
# scoring call per answer, bench/confidence.py) is added to the held-out answers and to the
# calibration run's (for its Platt-scaled baseline, fit on the calibration fit items only);
# MaxProb was recorded when they were answered. Then `searchain report` prints, per method,
# AURC, ECE (10 bins; and at 5, 15, 20 on one line), Brier (beside the base rate's), log-loss,
# cover-EM at 50/80/100 % coverage and 50 % over 100 %, against the naive, Platt-scaled naive,
# MaxProb and Platt-scaled MaxProb baselines, with paired bootstrap intervals, into
# results/heldout/report (report.md, selective.csv).
#
# Two confidences of the same answers (chosen 2026-11-27, before any held-out answer):
#   hotpotqa-heldout-160                — the plain calibrators' (what `ask`, `serve` and the
#                                         Python API show; MaxProb shown, not used): the one
#                                         issue 51's targets judge;
#   hotpotqa-heldout-160-maxprob-signal — the `+maxprob` calibrators' (MaxProb as a signal,
#                                         what `-O maxprob=true` shows), reported beside it.
# HELD, CAL, CONF, OUT and ITEMS may be set to try the commands on another run (a dry run).
set -eu
cd "$(dirname "$0")/../.."  # the repository root
export SEARCHAIN_THREADS=1
HELD=${HELD:-results/heldout/qwen2.5-coder-1.5b/hotpotqa-heldout-160}
CAL=${CAL:-results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration-default}
CONF=${CONF:-results/heldout/confidence}
OUT=${OUT:-results/heldout}
ITEMS=${ITEMS:-160}
n=$(grep -c '"status": "ok"' "$HELD/results.jsonl" || true)
[ "$n" -ge $((2 * ITEMS)) ] || { echo "the held-out run is not complete ($n of $((2 * ITEMS)) records ok)"; exit 1; }
BENCH=(.venv/bin/python -m bench.confidence --methods searchain,retrieve-read --model qwen2.5-coder-1.5b)
"${BENCH[@]}" "$CAL" --out "$CONF/calibration"
"${BENCH[@]}" "$HELD" --without maxprob --out "$CONF"
NAME=$(basename "$HELD")
SIGNAL="$CONF/maxprob-signal/$NAME-maxprob-signal"
rm -rf "$SIGNAL" && mkdir -p "$(dirname "$SIGNAL")" && cp -r "$CONF/$NAME" "$SIGNAL"
"${BENCH[@]}" --refresh "$SIGNAL" --out "$CONF/maxprob-signal"
.venv/bin/searchain report "$CONF/$NAME" "$SIGNAL" \
  --naive-platt "$CONF/calibration/$(basename "$CAL")" --maxprob-platt "$CAL" \
  --out "$OUT/report"
# MuSiQue-100 as a transfer figure (issue 51): SearChain's default answers of issue 50's run
# (results/quality/…/musique-100-evidence), scored with the HotpotQA calibrator applied
# across the corpus (`--transfer`: an uncalibrated score that says so), same tables.
MUS=${MUS:-results/quality/qwen2.5-coder-1.5b/musique-100-evidence}
"${BENCH[@]}" "$MUS" --transfer --out "$CONF/transfer"
.venv/bin/searchain report "$CONF/transfer/$(basename "$MUS")" --out "$OUT/transfer-report"
