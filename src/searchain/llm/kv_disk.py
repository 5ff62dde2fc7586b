"""KV snapshots of static prompt prefixes kept on disk, so a new process starts from them.

A static prefix (a prompt's instruction and demos) is the same for every question, so its
KV cells are the same too: computed once, they can be loaded by every later process instead
of prefilled again (llama.cpp's own prompt cache and ``llama-server``'s slot save/restore do
the same). One directory per *model key* — the model file's fingerprint and the llama.cpp
settings that change the cells — holds one file per prefix:

    SCKV1\\n | header length (8 bytes, little endian) | JSON header | state bytes

The header holds the prefix's tokens (what a prompt must start with to use it) and the
sha256 of the state bytes. A file whose checksum, header or size is wrong is deleted and
ignored (the prefix is then prefilled and saved again); writes go to a temporary file and
are renamed into place, so a killed process never leaves a half-written snapshot. The
directory is bounded (``max_bytes``): the least recently used files go first. A changed
prompt file makes new token prefixes (old files are simply never matched, then evicted);
a changed model or setting makes a new model key.

Which prefixes are static is learnt, not declared: a prompt that *diverges* from an earlier
one (both go on differently after a shared head) marks the shared head as static. The heads
of recent prompts are kept in the same directory (``history.json``), so the second process
that asks a question already finds where its prompts' static part ends.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

MAGIC = b"SCKV1\n"
HISTORY_FILE = "history.json"
HISTORY_HEADS = 24  # prompt heads remembered per model
HEAD_TOKENS = 2048  # of each prompt, the first tokens remembered
DEFAULT_MAX_BYTES = 2 << 30
DISK_ENV = "SEARCHAIN_KV_DISK"  # "0": no static-prefix snapshots on disk
DISK_MB_ENV = "SEARCHAIN_KV_DISK_MB"  # the bound of a model's directory (default 2 GiB)


def model_key(model_path: Path, **settings: object) -> str:
    """A fingerprint of the model file (size, first and last MiB) and the given settings.
    Hashing the whole file would cost seconds a load for a 1 GB model; a different model
    with the same size, head and tail is not a case to plan for."""
    h = hashlib.sha256()
    size = model_path.stat().st_size
    h.update(str(size).encode())
    with model_path.open("rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(0, size - (1 << 20)))
        h.update(f.read(1 << 20))
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


def disk_store_for(model_path: Path, **settings: object) -> DiskPrefixStore | None:
    """The store of ``model_path`` under these settings, in ``<cache>/kv/<model key>/``;
    None when ``SEARCHAIN_KV_DISK=0``."""
    if os.environ.get(DISK_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    from searchain.paths import cache_root

    mb = os.environ.get(DISK_MB_ENV)
    max_bytes = int(float(mb) * (1 << 20)) if mb else DEFAULT_MAX_BYTES
    return DiskPrefixStore(cache_root() / "kv" / model_key(model_path, **settings), max_bytes)


def _key_name(tokens: tuple[int, ...]) -> str:
    return hashlib.sha256(struct.pack(f"<{len(tokens)}i", *tokens)).hexdigest()[:32]


class DiskPrefixStore:
    """Snapshots of static prefixes for one model key, on disk."""

    def __init__(self, directory: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.dir = directory
        self.max_bytes = max_bytes
        self._index: dict[tuple[int, ...], Path] | None = None
        self._heads: list[tuple[int, ...]] | None = None

    # -- snapshots ----------------------------------------------------------------------
    def keys(self) -> dict[tuple[int, ...], Path]:
        """The token prefixes that have a snapshot file (read once, from the headers)."""
        if self._index is None:
            self._index = {}
            for path in sorted(self.dir.glob("*.kv")):
                header = self._read_header(path)
                if header is not None:
                    self._index[tuple(header["tokens"])] = path
        return self._index

    def _read_header(self, path: Path) -> dict | None:
        try:
            with path.open("rb") as f:
                if f.read(len(MAGIC)) != MAGIC:
                    raise ValueError("not a searchain KV snapshot")
                (n,) = struct.unpack("<Q", f.read(8))
                header = json.loads(f.read(n))
            if not isinstance(header.get("tokens"), list):
                raise ValueError("no tokens in the header")
            return header
        except (OSError, ValueError, struct.error) as e:
            self._discard(path, e)
            return None

    def load(self, tokens: tuple[int, ...]) -> bytes | None:
        """The state bytes of the snapshot of ``tokens``; None (file deleted) if corrupt."""
        path = self.keys().get(tokens)
        if path is None:
            return None
        try:
            with path.open("rb") as f:
                f.read(len(MAGIC))
                (n,) = struct.unpack("<Q", f.read(8))
                header = json.loads(f.read(n))
                data = f.read()
            if len(data) != header["state_bytes"]:
                raise ValueError(f"{len(data)} state bytes, header says {header['state_bytes']}")
            if hashlib.sha256(data).hexdigest() != header["sha256"]:
                raise ValueError("checksum mismatch")
        except (OSError, ValueError, KeyError, struct.error) as e:
            self._discard(path, e)
            self.keys().pop(tokens, None)
            return None
        os.utime(path)  # least recently used goes first
        return data

    def save(self, tokens: tuple[int, ...], data: bytes) -> None:
        if tokens in self.keys():
            return
        header = json.dumps(
            {
                "tokens": list(tokens),
                "state_bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        ).encode()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            path = self.dir / f"{_key_name(tokens)}.kv"
            fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".part")
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + struct.pack("<Q", len(header)) + header)
                f.write(data)
            os.replace(tmp, path)
        except OSError as e:  # a full or read-only cache costs speed, never an answer
            log.warning("KV snapshot not saved in %s: %s", self.dir, e)
            return
        self.keys()[tokens] = path
        self._evict()

    def _evict(self) -> None:
        files = sorted(self.dir.glob("*.kv"), key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in files)
        while files and total > self.max_bytes:
            victim = files.pop(0)
            total -= victim.stat().st_size
            victim.unlink(missing_ok=True)
            for k, p in list(self.keys().items()):
                if p == victim:
                    del self.keys()[k]

    def _discard(self, path: Path, why: Exception) -> None:
        log.warning("ignoring corrupt KV snapshot %s (%s); it will be rebuilt", path.name, why)
        path.unlink(missing_ok=True)

    # -- prompt heads (where static prefixes end) ---------------------------------------
    def heads(self) -> list[tuple[int, ...]]:
        if self._heads is None:
            try:
                raw = json.loads((self.dir / HISTORY_FILE).read_text(encoding="utf-8"))
                self._heads = [tuple(int(t) for t in h) for h in raw][-HISTORY_HEADS:]
            except (OSError, ValueError, TypeError):
                self._heads = []
        return self._heads

    def remember(self, tokens: list[int]) -> None:
        """Keep the head of a prompt that diverged from every remembered one."""
        head = tuple(tokens[:HEAD_TOKENS])
        heads = self.heads()
        heads.append(head)
        del heads[:-HISTORY_HEADS]
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".part")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump([list(h) for h in heads], f)
            os.replace(tmp, self.dir / HISTORY_FILE)
        except OSError as e:
            log.warning("prompt history not saved in %s: %s", self.dir, e)
