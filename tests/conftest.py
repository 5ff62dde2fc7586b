"""Shared test helpers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

# Let the tests run from a plain checkout too (``pip install -e .`` makes this a no-op).
_SRC = Path(__file__).resolve().parents[1] / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))


def shared_data_dir() -> Path:
    """The read-only benchmark data, ``../shared/data`` next to the repository."""
    return Path(__file__).resolve().parents[2] / "shared" / "data"


DATA_DIR = shared_data_dir()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    # The benchmark data is part of the test setup: a missing copy fails, never skips.
    if not DATA_DIR.is_dir():
        pytest.fail(f"shared data not found at {DATA_DIR} (expected ../shared/data)")
    return DATA_DIR


@pytest.fixture(scope="session")
def hotpot_path(data_dir: Path) -> Path:
    """The 500 HotpotQA dev questions (IRCoT subsample) whose contexts form the pooled corpus."""
    return data_dir / "hotpotqa" / "dev_subsampled.jsonl"


@pytest.fixture(scope="session")
def hotpot(hotpot_path: Path) -> list[dict]:
    with hotpot_path.open() as f:
        return [json.loads(line) for line in f]
