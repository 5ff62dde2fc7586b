"""The dataset tests read the real benchmark files in ../shared/data (never edited)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _shared_data(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("SEARCHAIN_DATA", str(data_dir))
