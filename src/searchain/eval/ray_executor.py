"""``searchain eval --executor ray``: every (method, item) is a Ray task.

The driver keeps at most ``concurrency`` tasks in flight and appends each result to
``results.jsonl`` as it finishes, through the same record builder and writer as the local
executor — so results, failures and resume (finished items are skipped) behave the same.
Tasks get the :class:`MethodsSpec`, not a loaded model: each worker process builds the
methods once and reuses them for every task it runs. Workers need searchain installed (on a
remote cluster: the same environment, e.g. through a Ray ``runtime_env``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from searchain.eval.methods import MethodsSpec, Runner
from searchain.eval.runner import (
    RESULTS,
    Item,
    ResultWriter,
    RunSummary,
    error_record,
    execute,
    finish,
    pending,
)
from searchain.types import Trace

_built: dict[str, dict[str, Runner]] = {}  # per worker process, by MethodsSpec.key()


def _answer(spec: MethodsSpec, method: str, item: Item) -> dict[str, Any]:
    runners = _built.get(spec.key())
    if runners is None:
        runners = _built[spec.key()] = spec.build()
    record, _ = execute(method, runners[method], item)
    return record


def run_ray(
    items: list[Item],
    spec: MethodsSpec,
    run_dir: str | Path,
    *,
    address: str | None = None,
    concurrency: int = 4,
    num_cpus: float = 1,
    score: Callable[[Item, Trace], dict[str, Any]] | None = None,
    progress: Callable[[RunSummary, int], None] | None = None,
    retry_failed: bool = False,
) -> RunSummary:
    """Answer every (method, item) of ``spec`` not yet in ``run_dir`` as Ray tasks.
    ``address``: a cluster to join ("auto", "ray://host:10001"); ``None`` starts a local one
    unless Ray is already initialised in this process."""
    import time

    try:
        import ray
    except ImportError as e:
        raise ImportError("--executor ray needs Ray: pip install 'searchain[ray]'") from e

    run_dir = Path(run_dir)
    todo, skipped = pending(items, spec.names, run_dir, retry_failed=retry_failed)
    summary = RunSummary(skipped=skipped)
    if not todo:
        return summary
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    task = ray.remote(num_cpus=num_cpus, max_retries=0)(_answer)
    writer = ResultWriter(run_dir / RESULTS)
    queue = iter(todo)
    in_flight: dict[Any, tuple[str, Item]] = {}
    t0 = time.perf_counter()
    try:
        while True:
            while len(in_flight) < max(1, concurrency) and (nxt := next(queue, None)):
                in_flight[task.remote(spec, nxt[0], nxt[1])] = nxt
            if not in_flight:
                break
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                method, item = in_flight.pop(ref)
                try:
                    record = ray.get(ref)
                except Exception as exc:  # the worker died, or could not build the methods
                    cause = getattr(exc, "cause", None) or exc
                    record = {
                        "method": method,
                        "id": item.id,
                        "question": item.question,
                        **error_record(cause),
                        "seconds": 0.0,
                    }
                trace = Trace.from_dict(record["trace"]) if record["status"] == "ok" else None
                finish(record, item, trace, score, writer, summary)
                if progress is not None:
                    progress(summary, len(todo))
    finally:
        writer.close()
        if started_here:
            ray.shutdown()
    summary.seconds = time.perf_counter() - t0
    return summary
