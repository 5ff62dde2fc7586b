"""Where searchain keeps its caches (LLM calls, the demo index)."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "SEARCHAIN_CACHE_DIR"


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """``cache_dir``, else ``$SEARCHAIN_CACHE_DIR``, else the platform's user cache dir."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("searchain"))
