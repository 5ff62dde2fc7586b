"""Snapshots of the KV cache of prompt prefixes, so a prompt never prefills again what an
earlier one already computed.

llama.cpp keeps one KV cache per context. Two kinds of prefix come back:

* *dialogue* prefixes: SearChain's rounds share a long prefix (the dialogue so far), but
  between two rounds the reader reads a passage with a prompt of its own, which evicts it
  from the live cache. A snapshot of sequence 0 (only the KV cells in use: tens of MB,
  copied in milliseconds) is taken after each long prompt is decoded and restored when a
  later prompt shares a longer prefix with it than with the live cache (an LRU of a few).
* *static* prefixes: a template's instruction and demos, the same for every question. A
  prompt that diverges from an earlier one after a shared head marks that head as static;
  the prefill stops at its end to snapshot it (memory, and disk through
  ``kv_disk.DiskPrefixStore`` so later processes start from it), then goes on.

Logits are not restored: the caller always decodes at least the last prompt token again.
Outputs are unchanged (the restored cells are the ones the same tokens produced on the same
batch grid); only time is saved. Models with sliding-window attention (Gemma 3: 512) are the
exception llama.cpp makes: a sequence's saved state keeps only the last window of cells of
the sliding-window layers, so a snapshot longer than the window would restore different
cells (measured: logits off by ~1.0, and a changed answer). Such models snapshot prefixes of
at most ``max_tokens`` = the window.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from searchain.llm.kv_disk import HEAD_TOKENS, HISTORY_HEADS, DiskPrefixStore

SEEN = 256  # sequences remembered for counting new tokens


@dataclass
class PrefixStats:
    restores: int = 0
    reused_tokens: int = 0  # prompt tokens not decoded again thanks to a snapshot
    saves: int = 0
    static_saves: int = 0  # snapshots of static prefixes (also written to disk)
    disk_restores: int = 0  # snapshots loaded from disk (made by an earlier process)
    prompt_tokens: int = 0  # tokens of every prompt prefilled
    prefilled_tokens: int = 0  # of them, the ones really decoded (the rest came from a cache)
    # Of them, the tokens no earlier prompt, output or disk snapshot holds as a prefix: what
    # an ideal cache would still have to prefill (bench/prefix_reuse.py's yardstick).
    new_tokens: int = 0
    generated_tokens: int = 0
    seen: list[np.ndarray] = field(default_factory=list, repr=False)

    def count_new(self, tokens: list[int], disk_keys: Any = ()) -> None:
        arr = np.asarray(tokens, dtype=np.int64)
        known = max((_shared(arr, s) for s in self.seen), default=0)
        known = max(known, max((_shared(arr, np.asarray(k)) for k in disk_keys), default=0))
        self.new_tokens += len(tokens) - known

    def remember(self, tokens: list[int]) -> None:
        self.seen.append(np.asarray(tokens, dtype=np.int64))
        del self.seen[:-SEEN]


def _shared(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the common prefix of two token arrays."""
    m = min(len(a), len(b))
    if m == 0:
        return 0
    diff = np.flatnonzero(a[:m] != b[:m])
    return int(diff[0]) if len(diff) else m


class PrefixStates:
    """Dialogue snapshots (an LRU) and static-prefix snapshots (an LRU of their own, backed
    by an optional disk store), keyed by the prompt tokens they hold."""

    def __init__(
        self,
        capacity: int = 4,
        min_tokens: int = 256,
        *,
        static_capacity: int = 8,
        min_static: int = 64,
        disk: DiskPrefixStore | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.capacity, self.min_tokens, self.max_tokens = capacity, min_tokens, max_tokens
        self.static_capacity, self.min_static = static_capacity, min_static
        self.disk = disk
        self._items: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self._static: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        # Of a dialogue snapshot, the cells up to this position are a cold run's (after it:
        # output cells); a static snapshot is a cold run's throughout.
        self._exact: dict[tuple[int, ...], int] = {}
        self._heads: list[np.ndarray] = [
            np.asarray(h, dtype=np.int64) for h in (disk.heads() if disk else [])
        ]
        self.stats = PrefixStats()

    def disk_keys(self) -> list[tuple[int, ...]]:
        return list(self.disk.keys()) if self.disk else []

    def best(self, tokens: list[int]) -> tuple[tuple[int, ...] | None, int]:
        """The snapshot (in memory or on disk) sharing the longest prefix with ``tokens``,
        and that length."""
        arr = np.asarray(tokens, dtype=np.int64)
        best_key, best_n = None, 0
        for key in [*self._items, *self._static, *self.disk_keys()]:
            if not self.fits(len(key)):
                continue
            n = _shared(arr, np.asarray(key, dtype=np.int64))
            if n > best_n:
                best_key, best_n = key, n
        return best_key, best_n

    # -- static prefixes ----------------------------------------------------------------
    def static_boundary(self, tokens: list[int]) -> int:
        """Where ``tokens`` diverges from the earlier prompt it shares most with, when both
        go on past the shared head (a prompt that merely extends an earlier one, as a next
        round does, marks nothing); 0 when there is no such head. Remembers ``tokens``."""
        arr = np.asarray(tokens, dtype=np.int64)
        boundary, contained = 0, None
        for i, head in enumerate(self._heads):
            n = _shared(arr, head)
            if n == len(head):  # tokens extends (or repeats) this head
                contained = i
            elif n < len(arr):
                boundary = max(boundary, n)
        head = arr[:HEAD_TOKENS]
        if contained is not None:
            self._heads[contained] = head  # the grown dialogue replaces its earlier round
        elif not any(_shared(arr, h) == len(arr) for h in self._heads):
            self._heads.append(head)
            del self._heads[:-HISTORY_HEADS]
            if self.disk:
                self.disk.remember(tokens)
        return boundary

    def has(self, key: tuple[int, ...]) -> bool:
        return key in self._static or key in self._items or key in self.disk_keys()

    def fits(self, n: int) -> bool:
        """Whether a snapshot of ``n`` tokens restores exactly (see the module doc)."""
        return self.max_tokens is None or n <= self.max_tokens

    def save_static(self, llama: Any, tokens: list[int]) -> None:
        if not self.fits(len(tokens)):
            return
        data = _snapshot(llama)
        if data is None:
            return
        key = tuple(tokens)
        self._static[key] = data
        self.stats.static_saves += 1
        while len(self._static) > self.static_capacity:
            self._static.popitem(last=False)
        if self.disk:
            self.disk.save(key, data)

    # -- dialogue prefixes --------------------------------------------------------------
    def save(self, llama: Any, tokens: list[int], exact: int | None = None) -> None:
        key = tuple(tokens)
        if len(key) < self.min_tokens or key in self._items or not self.fits(len(key)):
            return
        data = _snapshot(llama)
        if data is None:
            return
        self._items[key] = data
        self._exact[key] = len(key) if exact is None else min(exact, len(key))
        self.stats.saves += 1
        while len(self._items) > self.capacity:
            old, _ = self._items.popitem(last=False)
            self._exact.pop(old, None)

    def exact_len(self, key: tuple[int, ...]) -> int:
        """Up to which position the snapshot ``key`` holds a cold run's cells."""
        if key in self._static or key not in self._items:
            return len(key)
        return self._exact.get(key, len(key))

    def restore(self, llama: Any, key: tuple[int, ...]) -> bool:
        """Load the snapshot ``key`` into sequence 0; False (cache cleared) if it fails."""
        import llama_cpp

        data = self._items.get(key) or self._static.get(key)
        from_disk = data is None
        if data is None and self.disk:
            data = self.disk.load(key)
            if data is not None:
                self._static[key] = data
                while len(self._static) > self.static_capacity:
                    self._static.popitem(last=False)
        if data is None:
            return False
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        arr = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, arr, len(data), 0) != len(data):
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            llama.n_tokens = 0
            self._items.pop(key, None)
            self._exact.pop(key, None)
            self._static.pop(key, None)
            return False
        llama.input_ids[: len(key)] = key
        llama.n_tokens = len(key)
        for items in (self._items, self._static):
            if key in items:
                items.move_to_end(key)
        self.stats.restores += 1
        self.stats.disk_restores += from_disk
        return True


def _snapshot(llama: Any) -> bytes | None:
    """Sequence 0's KV cells, as llama.cpp serialises them."""
    import llama_cpp

    ctx = llama._ctx.ctx
    size = llama_cpp.llama_state_seq_get_size(ctx, 0)
    buf = (ctypes.c_uint8 * size)()
    n = llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0)
    return ctypes.string_at(buf, n) if n else None
