"""Figures of bench/reliability.py about evaluation runs: each kind of LLM endpoint fault
(attempts, wall time, what was recorded), and items lost or duplicated after ``kill -9`` at
random points, with a corrupt middle line, and with two concurrent writers.

The runs are real: ``searchain.eval.runner`` with retrieve-read over the demo BM25 index and
the OpenAI client, against searchain.net.faults's endpoint. Writers that get killed run in their
own processes (this module is also that worker: ``python -m bench.reliability_runs OUT URL N``;
the figures themselves: ``python -m bench.reliability --only llm-faults,durability``).
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.kit import ROOT, Figure, module_command
from searchain.eval.runner import RESULTS, Item, read_results, run
from searchain.llm import RetryPolicy
from searchain.llm.openai_backend import OpenAILLM
from searchain.net.faults import LLMFaultServer

FAST = RetryPolicy(attempts=3, base_delay=0.05, max_delay=0.1)
KINDS = ("http_500", "http_429", "html_200", "empty_json", "truncated_json", "no_choices",
         "hang", "trickle_headers", "refused")  # fmt: skip
LOCKED_EXIT = 3


def items(n: int) -> list[Item]:
    return [Item(f"q{i:04d}", f"Who founded the company number {i}?") for i in range(n)]


def methods(url: str, timeout: float = 1.0) -> dict[str, Any]:
    from searchain.methods.base import traced
    from searchain.methods.retrieve_read import RetrieveRead
    from searchain.retrieval.demo import default_index

    llm = OpenAILLM("fault", base_url=url, retry=FAST, timeout=timeout)
    return {"retrieve-read": traced(RetrieveRead(llm, default_index(), k=2), llm)}


def llm_faults(n: int = 4) -> list[Figure]:
    out = []
    for kind in KINDS:
        with tempfile.TemporaryDirectory() as tmp, LLMFaultServer(kind) as srv:
            url = "http://127.0.0.1:9/v1" if kind == "refused" else srv.url  # discard port
            t0 = time.monotonic()
            run(items(n), methods(url), Path(tmp), concurrency=2)
            wall = time.monotonic() - t0
            records = read_results(tmp)
            text = (Path(tmp) / RESULTS).read_text()
            # Refused connections leave no trace to count: the policy's number, by design.
            attempts = len(srv.requests) / n if kind != "refused" else FAST.attempts
        statuses = collections.Counter(r["status"] for r in records)
        lost = n - len({r["id"] for r in records})
        ok = (
            attempts == FAST.attempts and statuses == {"error": n} and lost == 0
            and "10.0.0.7" not in text and "<html" not in text
        )  # fmt: skip
        value = (f"{attempts:g} attempts/item, {wall:.1f} s, recorded {len(records)}/{n} as "
                 f"{'/'.join(statuses)}, lost {lost}")  # fmt: skip
        target = f"{FAST.attempts} attempts, 100 % recorded, 0 lost, no upstream body"
        out.append(Figure(f"LLM fault {kind}", value, target, ok))
    return out


# -- writers that die -------------------------------------------------------------------------
def worker(out: str, url: str, n: int) -> int:
    """One writer: answer every pending item of ``out``; exit 3 if another holds the run."""
    from searchain.eval.rundir import RunLocked

    try:
        summary = run(items(n), methods(url), out, concurrency=2)
    except RunLocked as e:
        print(e, file=sys.stderr)
        return LOCKED_EXIT
    print(json.dumps({"done": summary.done, "quarantined": summary.quarantined}))
    return 0


def _start(out: Path, url: str, n: int) -> subprocess.Popen[str]:
    cmd = module_command(__spec__.name, str(out), url, str(n))
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )


def _lines(out: Path) -> int:
    path = out / RESULTS
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _wait_for_lines(out: Path, proc: subprocess.Popen[str], more_than: int) -> None:
    deadline = time.monotonic() + 120
    while _lines(out) <= more_than and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)


def _tally(out: Path, n: int) -> tuple[int, int]:
    """(lost, duplicated) (method, item) answers among the records of ``out``."""
    records = read_results(out, latest=False)
    keys = collections.Counter((r["method"], r["id"]) for r in records if r["status"] == "ok")
    return n - len(keys), sum(c - 1 for c in keys.values())


def durability(points: int = 20, n: int = 400, seed: int = 0) -> list[Figure]:
    rng = random.Random(seed)
    out_figs = []
    with tempfile.TemporaryDirectory() as tmp, LLMFaultServer("ok", latency=0.05) as srv:
        out = Path(tmp) / "kill"
        kills = 0
        for _ in range(points):
            proc = _start(out, srv.url, n)
            _wait_for_lines(out, proc, _lines(out))  # it is writing: now kill at random
            time.sleep(rng.uniform(0, 0.3))
            if proc.poll() is None:
                proc.kill()
                kills += 1
            proc.communicate()
        final = _start(out, srv.url, n)
        final.communicate()
        lost, dup = _tally(out, n)
        name = f"lost/duplicated after kill -9 at {kills} random points"
        ok = (lost, dup) == (0, 0) and kills > 0
        out_figs.append(Figure(name, f"{lost}/{dup}", "0/0", ok))
        out_figs.append(_corrupt_middle_line(out, srv.url, n))
        out_figs.append(_two_writers(Path(tmp) / "two", srv.url, n))
    return out_figs


def _corrupt_middle_line(out: Path, url: str, n: int) -> Figure:
    from searchain.eval.rundir import QUARANTINE
    from searchain.server.runs import RunStore

    lines = (out / RESULTS).read_text().splitlines(keepends=True)
    middle = len(lines) // 2
    lines[middle] = lines[middle][: len(lines[middle]) // 2] + "\n"  # cut mid-record
    (out / RESULTS).write_text("".join(lines))
    listing = RunStore(out.parent).list()  # what GET /v1/runs answers with
    listed = [r for r in listing if r["name"] == out.name]
    proc = _start(out, url, n)
    proc.communicate()
    quarantined = len((out / QUARANTINE).read_text().splitlines())
    lost, dup = _tally(out, n)
    ok = (proc.returncode == 0 and quarantined == 1 and (lost, dup) == (0, 0)
          and listed and listed[0]["corrupt"] == 1)  # fmt: skip
    corrupt = listed[0]["corrupt"] if listed else "?"
    value = (f"{lost}/{dup}; resume exit {proc.returncode}, {quarantined} line quarantined, "
             f"listing {'ok' if listed else 'missing'} (corrupt lines {corrupt})")  # fmt: skip
    return Figure("lost/duplicated with a corrupt middle line", value, "0/0", ok)


def _two_writers(out: Path, url: str, n: int) -> Figure:
    first = _start(out, url, n)
    _wait_for_lines(out, first, 0)  # the first holds the run
    second = _start(out, url, n)
    _, err2 = second.communicate()
    first.communicate()
    lost, dup = _tally(out, n)
    refused = second.returncode == LOCKED_EXIT and f"pid {first.pid}" in err2
    ok = refused and first.returncode == 0 and (lost, dup) == (0, 0)
    value = (
        f"{lost}/{dup}; second writer {'refused, naming the holder' if refused else 'NOT refused'}"
    )
    return Figure("lost/duplicated with two concurrent writers", value, "0/0", ok)


def main() -> int:
    p = argparse.ArgumentParser(
        description="One writer of the durability figures (what bench.reliability starts and "
        "kills): answer every pending item of the run OUT against the endpoint URL; exit 3 if "
        "another writer holds the run. The figures: python -m bench.reliability --only "
        "llm-faults,durability"
    )
    p.add_argument("out", help="the run directory")
    p.add_argument("url", help="an OpenAI-compatible endpoint (searchain.net.faults's)")
    p.add_argument("n", type=int, help="items in the run")
    args = p.parse_args()
    return worker(args.out, args.url, args.n)


if __name__ == "__main__":
    sys.exit(main())
