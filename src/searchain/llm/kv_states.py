"""Snapshots of the KV cache of long prompts, so a short call in between does not cost the
next long call its prefix.

llama.cpp keeps one KV cache per context. SearChain's rounds share a long prefix (the
dialogue or growing prompt so far), but between two rounds the reader reads a passage with a
prompt of its own, which evicts that prefix, so every round used to prefill the whole
dialogue again. A snapshot of sequence 0 (only the KV cells in use: tens of MB, copied in
milliseconds) is taken after each long prompt is decoded and restored when a later prompt
shares a longer prefix with it than with the live cache. Logits are not restored: the caller
always decodes at least the last prompt token again. Outputs are unchanged (the restored
cells are the ones the same tokens produced on the same batch grid); only time is saved.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any


@dataclass
class PrefixStats:
    restores: int = 0
    reused_tokens: int = 0  # prompt tokens not decoded again thanks to a snapshot
    saves: int = 0
    prompt_tokens: int = 0  # tokens of every prompt prefilled
    prefilled_tokens: int = 0  # of them, the ones really decoded (the rest came from a cache)


class PrefixStates:
    """An LRU of KV snapshots keyed by the prompt tokens they hold."""

    def __init__(self, capacity: int = 4, min_tokens: int = 256) -> None:
        self.capacity, self.min_tokens = capacity, min_tokens
        self._items: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self.stats = PrefixStats()

    def best(self, tokens: list[int]) -> tuple[tuple[int, ...] | None, int]:
        """The snapshot sharing the longest prefix with ``tokens``, and that length."""
        best_key, best_n = None, 0
        for key in self._items:
            n = 0
            for a, b in zip(key, tokens, strict=False):
                if a != b:
                    break
                n += 1
            if n > best_n:
                best_key, best_n = key, n
        return best_key, best_n

    def save(self, llama: Any, tokens: list[int]) -> None:
        key = tuple(tokens)
        if len(key) < self.min_tokens or key in self._items:
            return
        import llama_cpp

        ctx = llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        n = llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0)
        if not n:
            return
        self._items[key] = ctypes.string_at(buf, n)
        self.stats.saves += 1
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def restore(self, llama: Any, key: tuple[int, ...]) -> bool:
        """Load the snapshot ``key`` into sequence 0; False (cache cleared) if it fails."""
        import llama_cpp

        data = self._items[key]
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        arr = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, arr, len(data), 0) != len(data):
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            llama.n_tokens = 0
            self._items.pop(key)
            return False
        llama.input_ids[: len(key)] = key
        llama.n_tokens = len(key)
        self._items.move_to_end(key)
        self.stats.restores += 1
        return True
