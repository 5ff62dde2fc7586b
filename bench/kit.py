"""What the benches share: where the repository, its results and the shared data are, the
``searchain`` command as this Python runs it, and the figure a reliability bench prints."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository
RESULTS_DIR = ROOT / "results"  # committed runs and their pages, a folder per bench
SHARED = ROOT.parent / "shared"  # the read-only benchmark data, next to the repository
DATA = SHARED / "data"
# ``searchain ...`` run by this Python, whichever environment it is in (no .venv path assumed)
SEARCHAIN = (sys.executable, "-m", "searchain.cli")


def module_command(module: str, *args: str) -> list[str]:
    """``python -m module ARGS``: how a bench starts itself (or another bench) as a worker
    process. Run it with ``cwd=ROOT``, where ``bench`` is importable."""
    return [sys.executable, "-m", module, *args]


def part_of(doc: str | None, command: str) -> None:
    """The command line of a module that is a part of a bench, not a bench itself: its
    ``--help`` says what it holds and which command runs it; run otherwise, it says so too
    (exit status 2)."""
    what = (doc or "").strip().split("\n\n")[0]
    p = argparse.ArgumentParser(
        description=f"{what}\n\nA part of a bench, not one: run {command}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.parse_args()
    p.error(f"a part of a bench, not one: run {command}")


@dataclass
class Figure:
    """One measured figure and its target (bench.reliability prints them, and exits 1 when
    one misses)."""

    name: str
    value: str
    target: str
    ok: bool

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.name}: {self.value} (target {self.target})"


def print_and_keep(text: str, out: Path | None) -> None:
    """Print a bench's page, and write it to ``out`` too where one is named."""
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
