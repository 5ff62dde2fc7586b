"""Load a script of ``bench/`` as a module, as the tests of its rules do."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_bench(name: str) -> ModuleType:
    """``bench/<name>.py`` as the module ``name`` (registered, so its dataclasses resolve)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
