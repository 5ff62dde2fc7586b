"""A run directory's records, read once and shared by the report's table and its sections
(``report.py``, ``selective/report.py``, ``rescore.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from searchain.eval.runner import read_results


@dataclass(slots=True)
class RunRecords:
    """A run directory's records, read once and shared by the table and the analyses."""

    name: str
    records: list[dict]
    path: Path | None = None  # the run directory (its manifest names the golds), when read


RunLike = str | Path | RunRecords


def load(runs: Sequence[RunLike]) -> list[RunRecords]:
    """Read each run directory once (already loaded runs pass through)."""
    return [
        r if isinstance(r, RunRecords) else RunRecords(Path(r).name, read_results(r), Path(r))
        for r in runs
    ]
