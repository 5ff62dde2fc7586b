"""The HTML pages of a build, folder by folder: each folder a site whose repeated edge blocks
(:mod:`.repeated`) are found across its pages, then left out of each page before it is split
into passages.

A folder's repeated blocks depend on all its pages, so the pages read in this build are
parsed first (in the sandbox, as every file is), and the pages an incremental build does not
read again count by the edge fingerprints the manifest kept for them (``edges``). Where a
folder's repeated blocks are no longer the ones the manifest records (a page added that
shares a footer, say), its unchanged pages are read again too, so that every page of a site
is read by the same rule. The manifest keeps, per folder, each repeated block's text and the
number of pages it stood on: what was left out is said, never silent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from searchain.retrieval.documents import repeated as rp
from searchain.retrieval.documents.files import FileEntry, Parsed, ParseJob, passages_of
from searchain.retrieval.documents.sandbox import Failure

Parse = Callable[[list[FileEntry]], Iterable[tuple[ParseJob, Any]]]
Record = dict[str, dict[str, dict[str, Any]]]  # folder -> fingerprint -> {"text", "pages"}


@dataclass(slots=True)
class Sites:
    """The HTML pages of a build: the ones read (parsed, not yet passages) and every page's
    edge fingerprints with their texts (``""`` where only the manifest knew the page)."""

    max_words: int | None
    parsed: dict[str, Parsed | Failure] = field(default_factory=dict)
    edges: dict[str, dict[str, str]] = field(default_factory=dict)
    _repeated: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, rel: str, result: Parsed | Failure) -> None:
        self.parsed[rel] = result
        if isinstance(result, Parsed) and result.document is not None:
            self.edges[rel] = rp.edge_prints(result.document)
            self._repeated.pop(rp.folder_of(rel), None)

    def repeated(self, folder: str) -> dict[str, int]:
        """``{fingerprint: pages}`` of the blocks repeated across ``folder``'s pages."""
        if folder not in self._repeated:
            pages = {r: e for r, e in self.edges.items() if rp.folder_of(r) == folder}
            self._repeated[folder] = rp.repeated_prints(pages)
        return self._repeated[folder]

    def folders(self) -> set[str]:
        return {rp.folder_of(rel) for rel in self.edges}

    def finish(self, rel: str) -> Parsed | Failure:
        """A page read in this build as passages, its site's repeated blocks left out."""
        result = self.parsed.pop(rel)
        if isinstance(result, Failure) or result.document is None:
            return result
        doc = rp.strip(result.document, self.repeated(rp.folder_of(rel)))
        dropped = Counter(result.dropped) + Counter(d.why for d in doc.dropped if d.why == rp.WHY)
        from searchain.retrieval.documents.binary_formats import UnreadableDocument

        try:
            return Parsed(passages_of([doc], rel, self.max_words, "html"), dict(dropped))
        except UnreadableDocument as e:
            return Failure(str(e))

    def record(self, old: Record) -> Record:
        """The manifest's ``repeated_blocks``: per folder, each repeated block's text (from
        a page read now, else from the ``old`` record) and its number of pages."""
        texts = {p: t for e in self.edges.values() for p, t in e.items() if t}
        out: Record = {}
        for folder in sorted(self.folders()):
            before = old.get(folder, {})
            blocks = sorted(self.repeated(folder).items(), key=lambda item: -item[1])
            if blocks:
                out[folder] = {
                    p: {"text": texts.get(p) or before.get(p, {}).get("text", ""), "pages": n}
                    for p, n in blocks
                }
        return out

    def prints(self, rel: str) -> list[str]:
        """A page's edge fingerprints, as its manifest entry keeps them (``edges``)."""
        return sorted(self.edges.get(rel, {}))


def survey(
    parse: Parse,
    max_words: int | None,
    files: list[FileEntry],
    to_read: list[FileEntry],
    kept: dict[str, list[str]],
    old: Record,
) -> tuple[Sites, list[FileEntry]]:
    """Parse the HTML pages in ``to_read``; count the pages not read again by the edge
    fingerprints ``kept`` for them (``{page: edges}``, from the manifest); and where a
    folder's repeated blocks differ from the ``old`` record, read its kept pages again too.
    ``(sites, the kept pages read again)``."""
    sites = Sites(max_words)
    for job, result in parse([f for f in to_read if f.kind == "html"]):
        sites.add(job.rel, result)
    for rel, prints in kept.items():
        sites.edges[rel] = dict.fromkeys(prints, "")
    moved = {f for f in sites.folders() if set(sites.repeated(f)) != set(old.get(f, {}))}
    again = [f for f in files if f.rel in kept and rp.folder_of(f.rel) in moved]
    for job, result in parse(again):
        sites.add(job.rel, result)
    return sites, again
