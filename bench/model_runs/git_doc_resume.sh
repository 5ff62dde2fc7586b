#!/bin/bash
# Resume the one frozen git-doc run on a machine that has main checked out and installed
# (results/real-docs/git-doc/README.md): the pinned corpus from main's setup, a worktree at the
# commit the run was started from (every default and calibrator chosen there), the records
# answered so far copied in, then git_doc_frozen.sh from the worktree (it skips what is done).
# An interruption and this resume are one run, not a second one.
#   bench/model_runs/git_doc_resume.sh [WORKTREE]     # from main's root
set -eu
cd "$(dirname "$0")/../.."  # main's root
PINNED=f33d462
TREE="${1:-/work/git-doc-frozen}"
RECORDS=results/real-docs/git-doc/qwen2.5-coder-1.5b
export PYTHONPATH="$PWD/src"
.venv/bin/python -m bench.real_docs_answers setup --set git-doc --no-peer  # git-doc at its version
[ -d "$TREE" ] || git worktree add --detach "$TREE" "$PINNED"
[ "$(git -C "$TREE" rev-parse --short=7 HEAD)" = "$PINNED" ] || { echo "$TREE is not at $PINNED"; exit 1; }
[ -e "$TREE/.venv" ] || ln -s "$PWD/.venv" "$TREE/.venv"
mkdir -p "$TREE/$RECORDS"
for f in "$RECORDS"/*.jsonl "$RECORDS"/manifest.json; do  # never shorter than what is there
  t="$TREE/$RECORDS/$(basename "$f")"
  if [ ! -e "$t" ] || [ "$(wc -l < "$f")" -gt "$(wc -l < "$t")" ]; then cp "$f" "$t"; fi
  # a line cut by a copy or a kill mid-write: dropped, so the next line appended is whole
  # (that item is answered again: it was never recorded)
  if [ -s "$t" ] && [ "$(tail -c 1 "$t" | od -An -c | tr -d ' ')" != '\n' ]; then
    python3 -c 'import sys; p=sys.argv[1]; t=open(p).read(); open(p,"w").write(t[:t.rfind("\n")+1])' "$t"
  fi
done
cd "$TREE" && nohup bench/model_runs/git_doc_frozen.sh > /tmp/git-doc.log 2>&1 &
echo "resumed in $TREE (log: /tmp/git-doc.log)"
