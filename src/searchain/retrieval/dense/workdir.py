"""The ``.partial`` work directory that makes a dense build resumable (see
:mod:`searchain.retrieval.dense`)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import IO, Any

from searchain.retrieval.dense.vectors import DENSE_FORMAT_VERSION
from searchain.retrieval.index_dir import Progress, publish

PROGRESS_FILE = "progress.json"
LOCK_FILE = ".lock"


class WorkDir:
    """The ``.partial`` directory of a build: locked, checked against the settings, kept on
    failure so the next run resumes, renamed into place on success."""

    def __init__(
        self, path: Path, model: dict[str, Any], index_title: bool, rows: int, log: Progress
    ) -> None:
        self.path = path
        self.log = log
        self.identity = {
            "format_version": DENSE_FORMAT_VERSION,
            "model_fingerprint": model["fingerprint"],
            "dim": model["dim"],
            "max_seq_length": model["max_seq_length"],
            "index_title": index_title,
        }
        self.checkpoint_rows = rows
        self.digests: list[str] = []  # per chunk, in order: what the embeddings rows hold
        self._lock: IO[bytes] | None = None

    def __enter__(self) -> WorkDir:
        self.path.mkdir(exist_ok=True)
        self._lock = open(self.path / LOCK_FILE, "wb")  # held until __exit__
        try:
            import fcntl

            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # no fcntl (Windows): builds are not guarded against each other
            pass
        except BlockingIOError:
            self._lock.close()
            raise RuntimeError(f"another build is writing {self.path}; wait for it") from None
        self._adopt_progress()
        return self

    def _adopt_progress(self) -> None:
        progress_file = self.path / PROGRESS_FILE
        if not progress_file.is_file():
            return
        try:
            progress = json.loads(progress_file.read_text())
            same = progress["identity"] == self.identity
        except (json.JSONDecodeError, KeyError, TypeError):
            same = False
        if not same:  # another model or format: those vectors are useless here
            self.log.say(f"discarding {self.path}: it was encoded with other settings")
            for child in self.path.iterdir():
                if child.name != LOCK_FILE:
                    _remove(child)
            return
        # Chunk boundaries must line up with the saved rows, so the saved size wins.
        self.checkpoint_rows = int(progress["checkpoint_rows"])
        self.digests = list(progress["digests"])
        self.log.say(f"resuming {self.path}: {len(self.digests):,} chunks already encoded")

    def save_progress(self) -> None:
        """Record the encoded chunks; the embeddings they name must be on disk already."""
        state = {
            "identity": self.identity,
            "checkpoint_rows": self.checkpoint_rows,
            "digests": self.digests,
        }
        tmp = self.path / f"{PROGRESS_FILE}.tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path / PROGRESS_FILE)  # atomic: never half a progress file

    def publish(self, out_dir: Path) -> None:
        (self.path / PROGRESS_FILE).unlink(missing_ok=True)
        (self.path / LOCK_FILE).unlink(missing_ok=True)  # our descriptor keeps the lock
        self.path.chmod(0o755)
        publish(self.path, out_dir)

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._lock is not None:
            self._lock.close()
        if exc_type is None or not self.path.is_dir():
            return
        if self.digests:
            self.log.say(f"build stopped; re-run it to resume from {self.path}")
        else:  # not one chunk saved: nothing to resume, so leave no litter
            self.discard()


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
