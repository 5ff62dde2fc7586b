"""What a build of a document index did, file by file, and the callbacks that show it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class IndexReport:
    """What a build did, file by file (names relative to the indexed roots)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    outdated: list[str] = field(default_factory=list)  # read again: an older extractor's
    # read again: the blocks repeated across their site's pages are no longer the same
    resited: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    read: list[str] = field(default_factory=list)  # the files parsed this time
    passages: int = 0
    seconds: float = 0.0
    parser_peak_mb: float = 0.0  # the parser workers' largest peak memory
    # lines or blocks of the files read that were left out of the passages, by why (page
    # furniture, navigation, blocks repeated across a site); documents.json names them
    left_out: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "outdated": self.outdated,
            "resited": self.resited,
            "skipped": self.skipped,
            "read": self.read,
            "passages": self.passages,
            "seconds": round(self.seconds, 3),
            "parser_peak_mb": round(self.parser_peak_mb, 1),
            "left_out": self.left_out,
        }

    def summary(self) -> str:
        outdated = (
            f"{len(self.outdated)} read again (indexed by an older extractor), "
            if self.outdated
            else ""
        )
        if self.resited:
            outdated += f"{len(self.resited)} read again (their site's repeated blocks changed), "
        left_out = sum(self.left_out.values())
        return (
            f"{len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} "
            f"removed, {outdated}{len(self.unchanged)} unchanged, {len(self.skipped)} "
            f"skipped; {self.passages:,} passages"
            + (
                f"; {left_out:,} lines or blocks left out (page furniture, navigation)"
                if left_out
                else ""
            )
        )


@dataclass(slots=True)
class Progress:
    """Callbacks a CLI or service turns into a progress bar."""

    total: Callable[[int], None] = lambda n: None
    file_done: Callable[[str, int], None] = lambda rel, passages: None
