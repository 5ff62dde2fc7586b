"""Run methods over a dataset: concurrent, resumable, and losing nothing.

A run directory holds

* ``manifest.json`` — what the run is (dataset and its hash, methods, options, model,
  versions, seed). Re-running into the same directory with a different configuration is
  refused instead of mixing results.
* ``results.jsonl`` — one line per finished (method, item): the full trace, or the error
  that ended it. Each line is written whole, flushed and fsynced before the next item counts
  as done, so ``kill -9`` loses at most the items in flight. A torn last line (killed during
  the write) is cut off on the next start; a corrupt line elsewhere is moved to
  ``results.quarantine.jsonl`` and reported, and its item is answered again (``rundir.py``).
* ``run.lock`` -- held by the one process writing the run; a second writer is refused.

Re-running the same command skips every (method, item) already in ``results.jsonl``.
Secrets (API keys, URL user-info, tokens) are masked in everything written here
(``searchain.redaction``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import platform
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Re-exported: what produced a run besides its configuration (run_environment.py).
from searchain.eval.run_environment import (  # noqa: F401
    LABEL_RULE_CHANGE,
    RECORDED_PACKAGES,
    environment_changes,
    index_fingerprint,
    runtime_environment,
)

# RunLocked: re-exported, the CLI reports it as it reports a configuration mismatch.
from searchain.eval.rundir import (  # noqa: F401
    MANIFEST,
    RESULTS,
    ResultWriter,
    RunLock,
    RunLocked,
    quarantine,
    scan,
)
from searchain.eval.same_run import same_run
from searchain.redaction import redact_obj, redact_text
from searchain.types import Trace

log = logging.getLogger(__name__)


class RunConfigMismatch(RuntimeError):
    """The run directory was made by a different configuration."""


@dataclass(slots=True)
class Item:
    """One question to answer (the evaluation's unit of work)."""

    id: str
    question: str
    gold: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunSummary:
    done: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    quarantined: int = 0  # corrupt lines of results.jsonl set aside (rundir.py)


def read_results(run_dir: str | Path, *, latest: bool = True) -> list[dict[str, Any]]:
    """The complete records of a run (a torn last line and corrupt lines are skipped; the
    writer moves the corrupt ones aside when it resumes).

    A (method, item) has more than one record only when a failed item was answered again
    (``--retry-failed``): the file keeps every attempt, and with ``latest`` (the default) the
    last one stands, in the place of the first."""
    records = scan(Path(run_dir) / RESULTS).records
    if not latest:
        return records
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        by_key[(r["method"], r["id"])] = r  # keeps the first key's position, the last value
    return list(by_key.values())


def manifest_for(
    config: dict[str, Any], environment: dict[str, Any] | None = None
) -> dict[str, Any]:
    from searchain import __version__
    from searchain.methods.searchain.node_labels import LABEL_RULE

    config = redact_obj(config)  # a --base-url with user-info, a key in an option...
    return {
        "config": config,
        "config_hash": config_hash(config),
        "searchain": __version__,
        "python": platform.python_version(),
        # The rule SearChain's node labels follow: signals read from them (and a calibrator fit
        # on those signals) belong to that rule.
        "label_rule": LABEL_RULE,
        # Not part of the hash: a run resumed after a package upgrade is still the same run,
        # but the manifest keeps what started it.
        "environment": environment or {},
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()


def prepare_run_dir(
    run_dir: str | Path, config: dict[str, Any], environment: dict[str, Any] | None = None
) -> Path:
    """Create the run directory, or check that an existing one was made by ``config``."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / MANIFEST
    manifest = manifest_for(config, environment)
    if path.exists():
        old = json.loads(path.read_text())
        # A run started before secrets were masked hashed its config as given.
        if old.get("config_hash") not in (manifest["config_hash"], config_hash(config)):
            new = manifest["config"]
            diff = sorted(
                k for k in set(old["config"]) | set(new) if old["config"].get(k) != new.get(k)
            )
            if not same_run(old["config"], new, diff):
                raise RunConfigMismatch(
                    f"{run_dir} holds a run with another configuration (differs in: "
                    f"{', '.join(diff)}); use a new --out directory"
                    + (" (a run's --limit may grow, not shrink)" if diff == ["limit"] else "")
                )
            if "limit" in diff:
                # A larger --limit keeps every item the smaller one picked (datasets.
                # subsample): the run grows, and its manifest says from what.
                grown = {"limit": old["config"].get("limit"), "created": old.get("created")}
                manifest["grown_from"] = [*old.get("grown_from", []), grown]
                _write_manifest(path, manifest)
    else:
        _write_manifest(path, manifest)
    return run_dir


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")  # two starting writers: no clash
    tmp.write_text(json.dumps(redact_obj(manifest), indent=2) + "\n")
    tmp.replace(path)


def run(
    items: list[Item],
    methods: dict[str, Callable[[str], Trace]],
    run_dir: str | Path,
    *,
    concurrency: int = 4,
    score: Callable[[Item, Trace], dict[str, Any]] | None = None,
    progress: Callable[[RunSummary, int], None] | None = None,
    retry_failed: bool = False,
) -> RunSummary:
    """Answer every (method, item) not yet in the run directory and record it (and, with
    ``retry_failed``, every one whose last attempt failed)."""
    return asyncio.run(
        arun(
            items,
            methods,
            run_dir,
            concurrency=concurrency,
            score=score,
            progress=progress,
            retry_failed=retry_failed,
        )
    )


def pending(
    items: list[Item], methods: Iterable[str], run_dir: Path, *, retry_failed: bool = False
) -> tuple[list[tuple[str, Item]], int]:
    """The (method, item) pairs not yet in ``run_dir``'s results, and how many are. With
    ``retry_failed``, pairs whose last record is a failure are pending again.

    Item by item, every method of an item before the next item: a run stopped part-way holds
    the same questions for every method, so its partial table already compares like with like
    (and an item's methods share prompt prefixes while they are warm in the LLM's cache)."""
    finished = {
        (r["method"], r["id"])
        for r in read_results(run_dir)
        if not (retry_failed and r["status"] != "ok")
    }
    names = list(methods)
    todo = [(m, it) for it in items for m in names if (m, it.id) not in finished]
    return todo, len(names) * len(items) - len(todo)


def execute(
    method: str, fn: Callable[[str], Trace], item: Item
) -> tuple[dict[str, Any], Trace | None]:
    """Answer one item; the record to write (without metrics) and the trace, if any. Every
    executor builds its records here, so a run's results do not depend on the executor."""
    started = time.perf_counter()
    record: dict[str, Any] = {"method": method, "id": item.id, "question": item.question}
    trace = None
    try:
        trace = fn(item.question)
        record.update(status="ok", trace=trace.to_dict())
    except Exception as exc:  # an item's failure must not end the run
        record.update(error_record(exc))
    record["seconds"] = time.perf_counter() - started
    return record, trace


def error_record(exc: BaseException) -> dict[str, Any]:
    return {
        "status": "error",
        "error": redact_text(f"{type(exc).__name__}: {exc}"),
        "where": redact_text(traceback.format_exception_only(type(exc), exc)[-1].strip()),
    }


async def arun(
    items: list[Item],
    methods: dict[str, Callable[[str], Trace]],
    run_dir: str | Path,
    *,
    concurrency: int = 4,
    score: Callable[[Item, Trace], dict[str, Any]] | None = None,
    progress: Callable[[RunSummary, int], None] | None = None,
    retry_failed: bool = False,
) -> RunSummary:
    run_dir = Path(run_dir)
    # The writer first: it takes the run's lock and sets corrupt lines aside, so what is
    # pending is read from a file no one else is writing.
    writer = ResultWriter(run_dir / RESULTS)
    try:
        todo, skipped = pending(items, methods, run_dir, retry_failed=retry_failed)
    except BaseException:
        writer.close()
        raise
    summary = RunSummary(skipped=skipped, quarantined=writer.quarantined)
    sem = asyncio.Semaphore(max(1, concurrency))
    # Our own pool: asyncio's default one has min(32, cores + 4) threads, which would cap
    # --concurrency 8 at 6 on a 2-core machine.
    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="eval")
    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()

    async def one(method: str, item: Item) -> None:
        async with sem:
            record, trace = await loop.run_in_executor(pool, execute, method, methods[method], item)
            finish(record, item, trace, score, writer, summary)
            if progress is not None:
                progress(summary, len(todo))

    try:
        await asyncio.gather(*(one(m, it) for m, it in todo))
    finally:
        pool.shutdown(wait=True)
        writer.close()
    summary.seconds = time.perf_counter() - t0
    return summary


def finish(
    record: dict[str, Any],
    item: Item,
    trace: Trace | None,
    score: Callable[[Item, Trace], dict[str, Any]] | None,
    writer: ResultWriter,
    summary: RunSummary,
) -> None:
    """Score a finished item, write it durably, count it."""
    if trace is not None and score is not None:
        try:
            record["metrics"] = score(item, trace)
        except Exception as exc:  # a metric that cannot score an answer fails that item only
            record.update(error_record(exc))
    writer.write(record)
    if record["status"] == "ok":
        summary.done += 1
    else:
        summary.failed += 1
