"""Every figure of the reliability bench (``python -m bench.reliability``, issue 20) on its
target, measured the same way against real local servers: SSRF refusals, deadlines, canaries,
request options, LLM faults, durability of runs, slot release after a 504, 500s under
Schemathesis. The bench runs as a user runs it, one group of figures a process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# bench/reliability_runs.py's KINDS: every kind of LLM endpoint fault gets its figure
LLM_FAULTS = ("http_500", "http_429", "html_200", "empty_json", "truncated_json", "no_choices",
              "hang", "trickle_headers", "refused")  # fmt: skip


def figures(group: str, *args: str) -> list[str]:
    """The figure lines ``python -m bench.reliability --only GROUP`` prints, all on target
    (the bench exits 1 when one misses)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.reliability", "--only", group, *args],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(("ok  ", "FAIL "))]
    assert lines, done.stdout + done.stderr[-2000:]
    missed = [ln for ln in lines if not ln.startswith("ok  ")]
    assert not missed, "\n".join(missed)
    assert done.returncode == 0, done.stderr[-2000:]
    return lines


@pytest.mark.parametrize(
    "group",
    ["ssrf", "deadlines", "canaries", "options", "slot", "faces"],
    ids=["ssrf", "deadlines", "canaries", "options", "slot-release", "faces"],
)
def test_figures(group: str) -> None:
    figures(group)


@pytest.mark.slow
def test_llm_fault_kinds_are_retried_and_recorded() -> None:
    lines = figures("llm-faults")
    assert [ln.split(":")[0].removeprefix("ok   LLM fault ") for ln in lines] == list(LLM_FAULTS)


@pytest.mark.slow
def test_no_item_lost_or_duplicated_after_kills_corruption_and_a_second_writer() -> None:
    lines = figures("durability", "--points", "20")
    assert "20 random points" in lines[0]  # every kill landed mid-run


@pytest.mark.slow
def test_no_500_under_schemathesis_on_any_endpoint() -> None:
    figures("schemathesis", "--examples", "15")


# -- the pieces behind the figures, one by one ------------------------------------------------


def test_a_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    import os

    from searchain.eval.rundir import LOCK, RunLock, RunLocked

    with RunLock(tmp_path):
        with pytest.raises(RunLocked, match=f"pid {os.getpid()} on "):
            RunLock(tmp_path).acquire()
        assert f'"pid": {os.getpid()}' in (tmp_path / LOCK).read_text()
    RunLock(tmp_path).acquire().release()  # released: free again


def test_a_released_lock_leaves_no_file_and_a_racing_holder_relocks(tmp_path: Path) -> None:
    """A finished run leaves no run.lock behind; a process that opened the old file just
    before it was deleted does not end up holding a lock on a deleted file."""
    import os

    from searchain.eval.rundir import LOCK, RunLock, RunLocked

    first = RunLock(tmp_path).acquire()
    stale_fd = os.open(tmp_path / LOCK, os.O_RDWR)  # a racer's open, before the release
    first.release()
    assert not (tmp_path / LOCK).exists()
    second = RunLock(tmp_path).acquire()
    try:
        assert os.fstat(stale_fd).st_ino != os.stat(tmp_path / LOCK).st_ino
        with pytest.raises(RunLocked):
            RunLock(tmp_path).acquire()  # the live file is held: one writer at a time
    finally:
        os.close(stale_fd)
        second.release()
    assert not (tmp_path / LOCK).exists()


def test_a_results_file_replaced_during_a_run_loses_no_record(tmp_path: Path) -> None:
    """``git stash && git stash pop`` of a committed run replaces results.jsonl with a new
    file; the writer then appended into the deleted one (41 records found only in
    /proc/PID/fd of a 1.5B evaluation). It now appends to the file the path names."""
    import json
    import shutil

    from searchain.eval.runner import RESULTS, ResultWriter, read_results

    path = tmp_path / RESULTS
    writer = ResultWriter(path)
    try:
        writer.write({"method": "m", "id": "1", "status": "ok"})
        copy = tmp_path / "copy.jsonl"
        shutil.copy(path, copy)
        copy.replace(path)  # what git does: a new file (inode) at the same path
        writer.write({"method": "m", "id": "2", "status": "ok"})
        assert [r["id"] for r in read_results(tmp_path)] == ["1", "2"]  # nothing lost
        path.unlink()  # deleted outright: the next record starts a new file
        writer.write({"method": "m", "id": "3", "status": "ok"})
    finally:
        writer.close()
    assert [json.loads(x)["id"] for x in path.read_text().splitlines()] == ["3"]
    assert [r["id"] for r in read_results(tmp_path)] == ["3"]


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    import json
    import subprocess

    from searchain.eval.rundir import LOCK, RunLock

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    (tmp_path / LOCK).write_text(json.dumps({"pid": int(dead.stdout), "host": "h"}))
    with RunLock(tmp_path):
        assert json.loads((tmp_path / LOCK).read_text())["pid"] != int(dead.stdout)


def test_corrupt_lines_are_quarantined_and_the_rest_kept_in_order(tmp_path: Path) -> None:
    import json

    from searchain.eval.rundir import QUARANTINE, quarantine, scan
    from searchain.eval.runner import RESULTS

    good = [{"method": "m", "id": str(i), "status": "ok", "metrics": {"em": 1.0}} for i in range(4)]
    lines = [json.dumps(r) + "\n" for r in good]
    lines.insert(1, '{"method": "m", "id": "x", "sta\n')  # cut mid-record
    lines.insert(3, '{"method": "m", "id": "y", "status": "ok", "metrics": {"em": "high"}}\n')
    lines.insert(5, "[1, 2]\n")
    (tmp_path / RESULTS).write_text("".join(lines) + '{"torn": ')  # and a torn last line
    assert len(scan(tmp_path / RESULTS).bad) == 3
    assert quarantine(tmp_path, RESULTS) == 3
    assert scan(tmp_path / RESULTS).records == good
    moved = [json.loads(x) for x in (tmp_path / QUARANTINE).read_text().splitlines()]
    assert [m["line"] for m in moved] == [2, 4, 6]
    assert moved[1]["reason"] == "wrong type of metrics"
