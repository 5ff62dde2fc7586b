"""Browse the evaluation runs ``searchain eval`` wrote under a runs directory.

Run names come from URLs, so a name is only ever looked up among the directory's own
children (no ``..``, no separators, no symlinks leading out). Results are re-read only when
``results.jsonl`` changes. A corrupt line is skipped and counted (``corrupt``), never a 500:
the next resume of the run moves it aside (``eval/rundir.py``). Nothing here writes.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from searchain.eval import report
from searchain.eval.rundir import scan
from searchain.eval.runner import MANIFEST, RESULTS

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")
# The metric that decides whether an answer counts as right, by task family.
PRIMARY_METRICS = ("cover_em", "accuracy", "rouge_l", "em", "f1")


class RunNotFound(LookupError):
    pass


def is_failure(record: dict[str, Any]) -> bool:
    """An item failed if it errored or scored 0 on its primary metric."""
    if record.get("status") != "ok":
        return True
    metrics = record.get("metrics") or {}
    for name in PRIMARY_METRICS:
        if name in metrics:
            return not float(metrics[name]) > 0
    return False


class RunStore:
    def __init__(self, root: str | Path | None) -> None:
        self.root = Path(root).resolve() if root is not None else None
        self._cache: dict[Path, tuple[tuple[int, int], list[dict[str, Any]], list[Any], int]] = {}
        self._lock = threading.Lock()

    def _dir(self, name: str) -> Path:
        if self.root is None or not _NAME.match(name):
            raise RunNotFound(name)
        path = self.root / name
        # resolve() follows symlinks: a link pointing outside the runs directory is refused.
        if path.resolve().parent != self.root or not path.is_dir():
            raise RunNotFound(name)
        if not (path / RESULTS).is_file() and not (path / MANIFEST).is_file():
            raise RunNotFound(name)
        return path

    def _load(self, path: Path) -> tuple[list[dict[str, Any]], list[Any], int]:
        """The latest record of each (method, item), the metrics table, the corrupt lines."""
        results = path / RESULTS
        stat = results.stat() if results.is_file() else None
        key = (stat.st_mtime_ns, stat.st_size) if stat else (0, 0)
        with self._lock:
            hit = self._cache.get(path)
            if hit and hit[0] == key:
                return hit[1], hit[2], hit[3]
        found = scan(results)
        latest: dict[tuple[str, str], dict[str, Any]] = {}
        for r in found.records:  # the last attempt stands, in the place of the first
            latest[(str(r["method"]), str(r["id"]))] = r
        records = list(latest.values())
        try:
            rows = report.summarize([report.RunRecords(path.name, records)]) if records else []
        except (TypeError, ValueError, KeyError):  # records that parse but hold odd values
            rows = []
        with self._lock:
            if len(self._cache) >= 16:
                self._cache.pop(next(iter(self._cache)))
            self._cache[path] = (key, records, rows, len(found.bad))
        return records, rows, len(found.bad)

    @staticmethod
    def _manifest(path: Path) -> dict[str, Any]:
        try:
            data = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def list(self) -> list[dict[str, Any]]:
        if self.root is None or not self.root.is_dir():
            return []
        out = []
        for child in sorted(self.root.iterdir()):
            try:
                path = self._dir(child.name)
            except RunNotFound:
                continue
            manifest = self._manifest(path)
            config = manifest.get("config") or {}
            records, _, corrupt = self._load(path)
            out.append(
                {
                    "name": child.name,
                    "dataset": _str_or_none(config.get("dataset")),
                    "methods": [str(m) for m in config.get("methods") or []],
                    "created": _str_or_none(manifest.get("created")),
                    "records": len(records),
                    "errors": sum(r.get("status") != "ok" for r in records),
                    "corrupt": corrupt,
                }
            )
        return out

    def detail(
        self,
        name: str,
        *,
        failures: bool = False,
        method: str | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> dict[str, Any]:
        path = self._dir(name)
        records, rows, corrupt = self._load(path)
        chosen = [
            r
            for r in records
            if (method is None or r.get("method") == method) and (not failures or is_failure(r))
        ]
        metrics = [
            {
                "method": row.method,
                "items": row.items,
                "failed": row.failed,
                "metrics": {
                    k: {"mean": c.mean, "lo": c.lo, "hi": c.hi} for k, c in row.metrics.items()
                },
            }
            for row in rows
        ]
        return {
            "name": name,
            "manifest": self._manifest(path),
            "metrics": metrics,
            "total": len(chosen),
            "corrupt": corrupt,
            "offset": offset,
            "limit": limit,
            "items": [_summary(r) for r in chosen[offset : offset + limit]],
        }

    def item(self, name: str, item_id: str, method: str | None = None) -> dict[str, Any]:
        records, _, _ = self._load(self._dir(name))
        found = [
            _record(r)
            for r in records
            if str(r.get("id")) == item_id and (method is None or r.get("method") == method)
        ]
        if not found:
            raise RunNotFound(f"{name}/{item_id}")
        return {"run": name, "id": item_id, "records": found}


def _str_or_none(v: Any) -> str | None:
    return None if v is None else str(v)


def _summary(r: dict[str, Any]) -> dict[str, Any]:
    trace = r.get("trace") or {}
    return {
        "id": str(r.get("id")),
        "method": str(r.get("method")),
        "question": str(r.get("question", "")),
        "status": str(r.get("status")),
        "answer": str(trace.get("answer") or ""),
        "metrics": r.get("metrics") or {},
        "seconds": r.get("seconds"),
        "error": r.get("error"),
        "failure": is_failure(r),
    }


def _record(r: dict[str, Any]) -> dict[str, Any]:
    keys = ("method", "question", "status", "metrics", "seconds", "error", "trace")
    out = {k: r.get(k) for k in keys}
    out["id"] = str(r.get("id"))
    out["metrics"] = out["metrics"] or {}
    return out
