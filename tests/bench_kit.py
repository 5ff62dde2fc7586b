"""What the tests of the benches share. A test runs a bench as its user does, ``python -m
bench.<name>`` from the repository root, and never imports one: what a bench and a test
both need lives in ``src/searchain``."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_bench(name: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python -m bench.<name> ARGS`` in the repository root, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", f"bench.{name}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def copy_of(results: Path, into: Path) -> Path:
    """A copy of a committed results folder, for a bench to write its page into (never into
    ``results/`` itself)."""
    return Path(shutil.copytree(results, into / results.name))


# A page a bench wrote before bench/ was a package names the command `python bench/<name>.py`;
# written again, it names `python -m bench.<name>`.
_OLD_COMMAND = re.compile(r"python bench/(\w+)\.py\b")


def as_now(page: str) -> str:
    """A committed page with the bench commands it shows in today's form (a page regenerated
    since is unchanged)."""
    return _OLD_COMMAND.sub(r"python -m bench.\1", page)
