"""Parse untrusted files in worker processes bounded in memory and time.

A PDF with a decompression bomb in a stream, a pathological table, a parser bug that loops:
any of them must cost one file, not the build. Each worker is a separate process whose data
segment is capped (``RLIMIT_DATA``: heap and anonymous mappings, so shared libraries still
load); the parent gives each file ``timeout_s`` and kills a worker that overruns or dies,
starts a fresh one and reports the file as skipped with the reason. Results come back in
the order the jobs were given, so an index's rows do not depend on which worker was faster.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any


@dataclass(slots=True)
class Failure:
    """Why a file was not indexed."""

    reason: str


def _context() -> Any:
    # forkserver: workers never inherit a parent's threads (a server calling this, torch's
    # pools), which a plain fork of a threaded process may deadlock on.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _serve(conn: Connection, task: Callable[[Any], Any], memory_mb: int) -> None:
    if memory_mb and hasattr(os, "sched_getaffinity"):  # Linux (RLIMIT_DATA semantics)
        import resource

        limit = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    import logging

    # Parsers log what they recover from ("EOF marker not found"); what they cannot recover
    # from comes back as a Failure, so their warnings would only be noise in the CLI.
    logging.disable(logging.WARNING)
    from searchain.retrieval.documents.binary_formats import UnreadableDocument

    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        try:
            result: Any = task(job)
        except UnreadableDocument as e:
            result = Failure(str(e))
        except MemoryError:
            result = Failure(f"needs more than the {memory_mb} MB a parser may use")
        except RecursionError:
            result = Failure("nested too deeply to parse")
        except Exception as e:  # a parser bug on one file must not end the build
            result = Failure(f"{type(e).__name__}: {e}")
        try:
            conn.send(result)
        except MemoryError:
            conn.send(Failure(f"needs more than the {memory_mb} MB a parser may use"))


class _Worker:
    def __init__(self, ctx: Any, task: Callable[[Any], Any], memory_mb: int) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, task, memory_mb), daemon=True)
        self.process.start()
        child.close()
        self.job: int | None = None
        self.started = 0.0

    def kill(self) -> None:
        self.process.kill()
        self.process.join(5)
        self.conn.close()

    def peak_mb(self) -> float:
        """The worker's peak resident memory so far (Linux; 0 where unknown)."""
        try:
            with open(f"/proc/{self.process.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except (OSError, ValueError):
            pass
        return 0.0

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(2)
        self.conn.close()


def run_sandboxed(
    task: Callable[[Any], Any],
    jobs: Iterable[Any],
    *,
    workers: int = 2,
    timeout_s: float = 60.0,
    memory_mb: int = 1536,
    stats: dict[str, float] | None = None,
) -> Iterator[tuple[Any, Any]]:
    """``(job, task(job))`` for each job, in order; a :class:`Failure` where it failed,
    ran past ``timeout_s``, ran out of memory or killed its worker. ``stats`` receives
    ``worker_peak_mb``, the largest peak memory of a worker that finished normally."""
    pending = list(jobs)
    if not pending:
        return
    ctx = _context()
    pool = [_Worker(ctx, task, memory_mb) for _ in range(max(1, min(workers, len(pending))))]
    done: dict[int, Any] = {}
    next_job, next_out = 0, 0
    try:
        while next_out < len(pending):
            for i, w in enumerate(pool):
                if w.job is None and next_job < len(pending):
                    try:
                        w.conn.send(pending[next_job])
                    except OSError:  # a worker that died idle: replace it, retry the send
                        w.kill()
                        pool[i] = w = _Worker(ctx, task, memory_mb)
                        w.conn.send(pending[next_job])
                    w.job, w.started = next_job, time.monotonic()
                    next_job += 1
            busy = [w for w in pool if w.job is not None]
            if busy:
                deadline = min(w.started for w in busy) + timeout_s
                ready = wait([w.conn for w in busy], timeout=max(0.0, deadline - time.monotonic()))
                for i, w in enumerate(pool):
                    if w.job is None:
                        continue
                    if w.conn in ready:
                        try:
                            done[w.job] = w.conn.recv()
                        except (EOFError, OSError):
                            code = w.process.exitcode
                            done[w.job] = Failure(f"the parser crashed (exit {code})")
                            w.kill()
                            pool[i] = w = _Worker(ctx, task, memory_mb)
                        w.job = None
                    elif time.monotonic() - w.started >= timeout_s:
                        done[w.job] = Failure(f"took longer than {timeout_s:g} s to parse")
                        w.kill()
                        pool[i] = _Worker(ctx, task, memory_mb)
            while next_out in done:
                yield pending[next_out], done.pop(next_out)
                next_out += 1
    finally:
        peak = max(w.peak_mb() for w in pool)
        if stats is not None:
            stats["worker_peak_mb"] = max(stats.get("worker_peak_mb", 0.0), peak)
        for w in pool:
            w.stop()
