"""REBEL's tests share one real local HTTP tool server over the Compositional Celebrities
facts (its API key is a secret the traces and logs must never show)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rebel_kit import KEY
from tool_server import FactServer, load_facts


@pytest.fixture(scope="module")
def server(data_dir: Path):
    with FactServer(load_facts(data_dir), KEY) as srv:
        yield srv
