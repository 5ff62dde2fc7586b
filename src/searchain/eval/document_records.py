"""The real-documentation bench's records on disk: an arm's scored records (one JSON line a
question, ``<arm>.jsonl``) and, beside them, the whole traces of its answers
(``<arm>.traces.jsonl``: what a calibrator reads its signals and configuration from)."""

from __future__ import annotations

import json
from pathlib import Path


def load_records(path: Path) -> dict[str, dict]:
    """An arm's records (one JSON line each) as ``{question id: record}``, the latest line per
    id (a cut last line is skipped)."""
    out: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            out[row["id"]] = row
    return out


def traces_path(records: Path) -> Path:
    """Where the whole traces of an arm's records go: ``<arm>.traces.jsonl`` beside them."""
    return records.with_name(records.stem + ".traces.jsonl")


def load_traces(path: Path) -> dict[str, dict]:
    """An arm's whole traces as ``{question id: trace dict}``, the latest line per id. A cut
    last line (a run killed while writing) is skipped; any other line that is not JSON is an
    error naming the file and the line."""
    out: dict[str, dict] = {}
    if not path.is_file():
        return out
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            if n == len(lines):
                continue
            raise ValueError(f"{path}:{n}: not a JSON line ({e.msg})") from None
        out[str(row["id"])] = row["trace"]
    return out


# Where the records' answers were made, not how: a path or a thread count may differ between
# two sessions without changing an answer.
NOT_SETTINGS = frozenset({"index", "threads"})


def settings_changes(recorded: dict, now: dict) -> list[str]:
    """How an arm's settings now (``{"spec": …, "method": …}``, as a records folder's manifest
    holds them) differ from those its records were made with, in words ("method.route:
    'chain' -> 'read-first'"); empty: the same configuration. Both are compared as the
    manifest stores them (JSON: a tuple now is the list it was written as)."""
    recorded, now = _as_stored(recorded), _as_stored(now)
    return [
        f"{part}.{key}: {before.get(key)!r} -> {after.get(key)!r}"
        for part in ("spec", "method")
        for before, after in [(recorded.get(part) or {}, now.get(part) or {})]
        for key in sorted(set(before) | set(after))
        if key not in NOT_SETTINGS and before.get(key) != after.get(key)
    ]


def _as_stored(settings: dict) -> dict:
    return json.loads(json.dumps(settings, default=str))
