"""The HTTP service and web viewer behind ``searchain serve`` (the ``server`` extra).

Names are imported lazily so ``searchain.cli.serve`` loads without FastAPI.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Engine", "Settings", "check_bind", "create_app", "running", "serve"]

_WHERE = {
    "Engine": "searchain.server.engine",
    "Settings": "searchain.server.app",
    "create_app": "searchain.server.app",
    "check_bind": "searchain.server.serving",
    "running": "searchain.server.serving",
    "serve": "searchain.server.serving",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(_WHERE[name]), name)
