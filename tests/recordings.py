"""Replay of recorded real model calls (``tests/data/recordings/NAME.jsonl``).

``SEARCHAIN_RECORD=1`` records instead: calls go to the real embedded model and are appended.
"""

from __future__ import annotations

import os
from pathlib import Path

from searchain.llm import CachedLLM, JsonlStore
from searchain.llm.local import DEFAULT_MODEL_NAME, LocalLLM

DIR = Path(__file__).parent / "data" / "recordings"
RECORD = os.environ.get("SEARCHAIN_RECORD") == "1"


def recorded_llm(name: str) -> CachedLLM:
    store = JsonlStore(DIR / f"{name}.jsonl")
    if RECORD:
        return CachedLLM(LocalLLM(), store)
    return CachedLLM(None, store, backend="local", model=DEFAULT_MODEL_NAME)
