"""The vectors an index already published at the build's destination holds, found by the
text they encode: building the same folder or corpus again encodes only passages whose text
is new or changed.

Encoding is what costs (hours for a manual on 2 cores with the packaged GGUF embedder);
reading the files again is seconds. So a rebuild reads everything afresh, as it always did,
and looks each passage's text up here before encoding it. Vectors are reused only from an
index encoded with the same model file, dimension, sequence length and title setting — the
identity the build's work directory already checks — so a reused row is exactly the row the
model would write (its own tests compare them).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from searchain.retrieval._store import PassageStore, encoded_text
from searchain.retrieval.dense.vectors import DENSE_FORMAT_VERSION, open_embeddings
from searchain.retrieval.index_dir import METADATA_FILE

_READ_ROWS = 4096  # rows of the earlier store read at a time while keying its texts


def text_key(text: str) -> bytes:
    """What identifies the text a vector encodes (16 bytes, so 100k passages take ~5 MB)."""
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


class EarlierVectors:
    """Rows of a published index by the key of the text each encodes."""

    def __init__(self, embeddings: np.ndarray, rows: dict[bytes, int]) -> None:
        self._embeddings = embeddings
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @classmethod
    def at(cls, out_dir: Path, identity: dict[str, Any]) -> EarlierVectors | None:
        """The index at ``out_dir`` if it was encoded as this build encodes (``identity``:
        the work directory's), else None: another model's vectors are not comparable."""
        meta_file = out_dir / METADATA_FILE
        if not meta_file.is_file():
            return None
        try:
            meta = json.loads(meta_file.read_text())
        except (OSError, ValueError):
            return None  # a damaged index is replaced, not read
        model = meta.get("model") or {}
        same = (
            meta.get("kind") == "dense"
            and meta.get("format_version") == DENSE_FORMAT_VERSION
            and model.get("fingerprint") == identity["model_fingerprint"]
            and meta.get("dim") == identity["dim"]
            and model.get("max_seq_length") == identity["max_seq_length"]
            and meta.get("index_title", True) == identity["index_title"]
        )
        if not same:
            return None
        rows = int(meta["n_passages"])
        try:
            embeddings = open_embeddings(out_dir, rows, int(meta["dim"]), mmap=True)
            keys = _keys(PassageStore(out_dir), rows, bool(identity["index_title"]))
        except (OSError, ValueError):  # damaged (StaleIndexError is a ValueError)
            return None
        return cls(embeddings, keys)

    def vector(self, text: str) -> np.ndarray | None:
        """The earlier vector of exactly this text, or None."""
        row = self._rows.get(text_key(text))
        return None if row is None else np.asarray(self._embeddings[row])


def _keys(store: PassageStore, rows: int, with_title: bool) -> dict[bytes, int]:
    keys: dict[bytes, int] = {}
    try:
        for start in range(0, rows, _READ_ROWS):
            batch = store.get(range(start, min(start + _READ_ROWS, rows)))
            for offset, p in enumerate(batch):
                keys.setdefault(text_key(encoded_text(p.title, p.text, with_title)), start + offset)
    finally:
        store.close()
    return keys
