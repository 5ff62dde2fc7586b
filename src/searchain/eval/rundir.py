"""A run directory's integrity: one writer at a time, and corrupt lines set aside.

* :class:`RunLock` -- ``run.lock`` in the run directory, held (``flock``) by the process that
  appends to ``results.jsonl``, with that process's pid, host and start time inside. A second
  writer is refused with a message naming the holder, so two evaluations on one ``--out`` can
  neither pay for every item twice nor interleave their lines. The kernel drops the lock when
  its holder dies (even by ``kill -9``), so a lock file left by a dead process is taken over
  without anyone deleting it by hand.
* :func:`scan` / :func:`quarantine` -- a line that is not a complete record (a disk error, a
  hand edit, a bad merge) must not stop a resume or the run listing: it is moved, with its
  line number, to ``results.quarantine.jsonl`` and reported; its item counts as not done, so
  the resume answers it again.
* :class:`ResultWriter` -- appends records whole, flushed and fsynced, under the lock; a
  results file replaced or deleted during the run (``git stash``) is followed, never written
  into the deleted old file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchain.redaction import install_log_redaction, redact_obj
from searchain.types import strict_dumps

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: an exclusive create stands in (see below)
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)
RESULTS = "results.jsonl"  # a line per finished (method, item)
MANIFEST = "manifest.json"  # what the run is (runner.manifest_for)
LOCK = "run.lock"
QUARANTINE = "results.quarantine.jsonl"
REQUIRED = ("method", "id", "status")


class RunLocked(RuntimeError):
    """Another live process is writing this run directory."""


class RunLock:
    """Exclusive, non-blocking ownership of a run directory (see the module docstring)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LOCK
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                else:  # pragma: no cover
                    _claim_without_flock(self.path)
            except OSError:
                os.close(fd)
                raise RunLocked(
                    f"{self.path.parent} is being written by another process "
                    f"({_holder(self.path)}); wait for it to finish, stop it, or use another "
                    "--out"
                ) from None
            # The holder deletes the file when it releases it: a lock taken on a file that
            # was deleted meanwhile is a lock on nothing, so it is taken again on the new one.
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        previous = _read(self.path)
        if previous.get("pid") not in (None, os.getpid()):
            log.info("taking over %s from pid %s, which has ended", self.path, previous["pid"])
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(_me()).encode() + b"\n")
        os.fsync(fd)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            # Deleted while still held (a finished run leaves no run.lock behind); a waiting
            # acquirer sees the file gone and locks a new one (acquire's inode check).
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _me() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _holder(path: Path) -> str:
    info = _read(path)
    if not info:
        return "holder unknown"
    return f"pid {info.get('pid')} on {info.get('host')}, since {info.get('since')}"


def _alive(pid: int) -> bool:  # pragma: no cover - used without flock only
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _claim_without_flock(path: Path) -> None:  # pragma: no cover - Windows
    info = _read(path)
    pid = info.get("pid")
    if isinstance(pid, int) and pid != os.getpid() and _alive(pid):
        raise OSError("locked")


# -- corrupt lines --------------------------------------------------------------------------
@dataclass
class Scan:
    records: list[dict[str, Any]]
    bad: list[tuple[int, str, str]]  # (line number, text, why)


def scan(path: Path) -> Scan:
    """Every complete record of a results file, and the lines that are not records. A torn
    last line (no newline: a writer killed mid-write) is neither: it is ignored."""
    records: list[dict[str, Any]] = []
    bad: list[tuple[int, str, str]] = []
    if not path.exists():
        return Scan(records, bad)
    with path.open(encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.endswith("\n"):
                break
            why = _problem(line)
            if why is None:
                records.append(json.loads(line))
            else:
                bad.append((n, line.rstrip("\n"), why))
    return Scan(records, bad)


def _problem(line: str) -> str | None:
    try:
        record = json.loads(line)
    except ValueError:
        return "not JSON"
    if not isinstance(record, dict):
        return "not a JSON object"
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        return f"missing {', '.join(missing)}"
    # The types every reader of a record relies on (the report, the run browser).
    number = (int, float)
    checks = {
        "method": isinstance(record["method"], str),
        "id": isinstance(record["id"], str | int) and not isinstance(record["id"], bool),
        "status": isinstance(record["status"], str),
        "question": isinstance(record.get("question", ""), str),
        "trace": isinstance(record.get("trace") or {}, dict),
        "error": isinstance(record.get("error") or "", str),
        "seconds": record.get("seconds") is None or isinstance(record["seconds"], number),
        "metrics": isinstance(record.get("metrics") or {}, dict)
        and all(isinstance(v, number) for v in (record.get("metrics") or {}).values()),
    }
    wrong = [k for k, ok in checks.items() if not ok]
    return f"wrong type of {', '.join(wrong)}" if wrong else None


def quarantine(run_dir: Path, results: str) -> int:
    """Move the corrupt lines of ``run_dir/results`` to :data:`QUARANTINE` (appended, with
    their line numbers and the reason); the results file keeps every good line, in order.
    Call with the run's lock held. Returns how many lines were moved."""
    path = run_dir / results
    found = scan(path)
    if not found.bad:
        return 0
    bad_lines = {n for n, _, _ in found.bad}
    with (run_dir / QUARANTINE).open("a", encoding="utf-8") as q:
        for n, text, why in found.bad:
            q.write(json.dumps({"line": n, "reason": why, "text": text}, ensure_ascii=False) + "\n")
        q.flush()
        os.fsync(q.fileno())
    tmp = path.with_suffix(".tmp")
    with (
        path.open(encoding="utf-8", errors="replace") as src,
        tmp.open("w", encoding="utf-8") as out,
    ):
        for n, line in enumerate(src, 1):
            if n not in bad_lines:
                out.write(line)
        out.flush()
        os.fsync(out.fileno())
    tmp.replace(path)
    log.warning(
        "%s: %d corrupt line(s) (%s) moved to %s; their items will be answered again",
        path,
        len(found.bad),
        ", ".join(str(n) for n, _, _ in found.bad[:10]),
        QUARANTINE,
    )
    return len(found.bad)


def _repair(path: Path) -> None:
    """Cut a torn last line left by a killed writer, so appends start on a fresh line."""
    if not path.exists():
        return
    with path.open("rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


class ResultWriter:
    """Appends records durably; safe to call from many threads. Owns the run directory while
    open (:class:`RunLock`: a second writer gets :class:`RunLocked`); on opening it cuts a torn
    last line and quarantines corrupt ones (``quarantined``: how many)."""

    def __init__(self, path: Path) -> None:
        install_log_redaction()
        self._run_lock = RunLock(path.parent).acquire()
        try:
            _repair(path)
            self.quarantined = quarantine(path.parent, path.name)
            self._f = path.open("a", encoding="utf-8")
        except BaseException:
            self._run_lock.release()
            raise
        self._path = path
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        line = strict_dumps(redact_obj(record), ensure_ascii=False) + "\n"
        with self._lock:
            self._follow_replacement()
            self._f.write(line)
            self._f.flush()
            os.fsync(self._f.fileno())

    def _follow_replacement(self) -> None:
        """Append to the file the path names now. A results file replaced while the run
        goes on (``git stash``/``checkout`` of a committed run, an editor's save) would
        otherwise take every later record into the deleted old file, lost at exit."""
        try:
            same = os.stat(self._path).st_ino == os.fstat(self._f.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            log.warning(
                "%s was replaced or deleted during the run; appending to the file now at that path",
                self._path,
            )
            self._f.close()
            _repair(self._path)  # the new file may end with a torn line
            self._f = self._path.open("a", encoding="utf-8")

    def close(self) -> None:
        self._f.close()
        self._run_lock.release()
