"""On-disk passage store: ``passages.jsonl`` plus a numpy array of line offsets.

A search hit is a row number; the store turns row numbers back into (id, title, text) by
slicing the file at ``offsets[i]:offsets[i + 1]``. A line is ``[id, title, text]``, or
``[id, title, text, source]`` for a passage read from a user's document. With ``mmap=True``
nothing but the pages actually touched is read, so a 20 GB corpus costs no RAM to keep searchable.
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Iterable, Iterator, Sequence
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import IO

import numpy as np

from searchain.types import Passage

PASSAGES_FILE = "passages.jsonl"
OFFSETS_FILE = "passages.offsets.npy"

_FLUSH_EVERY = 8192  # passages per write(); amortises syscalls without holding much text


def encoded_text(title: str, text: str, with_title: bool) -> str:
    """The string an embedder is given for a passage (its title on a line of its own)."""
    return f"{title}\n{text}" if with_title and title else text


class StoreWriter:
    """Append passages to a store; :meth:`close` writes the offsets array."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        # Closed by close()/abort(): the writer outlives any single with-block.
        self._file: IO[bytes] = open(directory / PASSAGES_FILE, "wb")  # noqa: SIM115
        self._buffer: list[bytes] = []
        self._lengths: list[int] = []

    def tee_texts(self, passages: Iterable[Passage], with_title: bool) -> Iterator[str]:
        """Store each passage and yield the text to index for it, in one pass.

        Doing both in a single generator means the corpus is read once and no list of all
        texts is ever built, which is what keeps indexing a large corpus within memory.
        """
        # Escaping the three strings directly is ~2x faster than json.dumps of a list, and
        # this runs once per passage of the corpus.
        esc = encode_basestring
        buffer, lengths = self._buffer, self._lengths
        for p in passages:
            if p.source is None:
                line = f"[{esc(p.id)},{esc(p.title)},{esc(p.text)}]\n".encode()
            else:  # a document's passage: where it lies in the file, as a fourth element
                line = (
                    f"[{esc(p.id)},{esc(p.title)},{esc(p.text)},"
                    f"{json.dumps(p.source, ensure_ascii=False)}]\n"
                ).encode()
            buffer.append(line)
            lengths.append(len(line))
            if len(buffer) >= _FLUSH_EVERY:
                self._flush()
            yield encoded_text(p.title, p.text, with_title)

    def __len__(self) -> int:
        return len(self._lengths)

    def _flush(self) -> None:
        self._file.write(b"".join(self._buffer))
        self._buffer.clear()

    def close(self) -> None:
        """Finish the store. After a failure the directory is discarded anyway."""
        self._flush()
        self._file.close()
        offsets = np.zeros(len(self._lengths) + 1, dtype=np.int64)
        np.cumsum(np.asarray(self._lengths, dtype=np.int64), out=offsets[1:])
        np.save(self._dir / OFFSETS_FILE, offsets)


class PassageStore:
    """Random access to the passages of an index by row number.

    ``lazy=True`` (what ``BM25Index.load(mmap=True)`` asks for) reads each hit with
    ``os.pread``: only the bytes of the hits are read, and, unlike slicing an mmap, nothing
    is mapped into the process (the kernel maps 64 KiB around every mmap fault, so 10,000
    random hits would show up as the whole file in RSS). ``lazy=False`` reads the file
    into memory once.
    """

    def __init__(self, directory: Path, lazy: bool = True) -> None:
        self._offsets = np.load(directory / OFFSETS_FILE, mmap_mode="r" if lazy else None)
        self._file: IO[bytes] | None = None
        self._data: bytes | mmap.mmap = b""
        path = directory / PASSAGES_FILE
        if not lazy or self._offsets[-1] == 0:
            self._data = path.read_bytes()
        elif hasattr(os, "pread"):
            self._file = open(path, "rb")  # noqa: SIM115 - held for the store's lifetime
        else:  # Windows has no pread; an mmap is the next best thing
            with open(path, "rb") as f:
                self._data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def get(self, rows: Sequence[int] | np.ndarray) -> list[Passage]:
        """The passages at ``rows`` (0-based), in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = self._offsets[rows].tolist()
        ends = self._offsets[rows + 1].tolist()
        loads = json.loads
        if self._file is not None:
            fd, pread = self._file.fileno(), os.pread
            raw = [pread(fd, e - s, s) for s, e in zip(starts, ends, strict=True)]
        else:
            data = self._data
            raw = [data[s:e] for s, e in zip(starts, ends, strict=True)]
        out = []
        for line in raw:
            row = loads(line)
            out.append(Passage(row[0], row[2], row[1], None, row[3] if len(row) > 3 else None))
        return out

    def close(self) -> None:
        f = getattr(self, "_file", None)  # absent if __init__ failed early
        if f is not None:
            f.close()
            self._file = None

    def __del__(self) -> None:
        self.close()
