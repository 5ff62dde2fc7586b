"""Think&Cite's fixtures: the requantised reference model its reward and end-to-end tests
share."""

from __future__ import annotations

from pathlib import Path

import pytest
from thinkcite_kit import kept_dir, requantised


@pytest.fixture(scope="session")
def reference_gguf(request) -> Path:
    """The packaged Q4_K_M model requantised to Q3_K_S with llama.cpp's own quantiser (about
    a second), cached in the pytest cache directory."""
    from searchain.llm.local import default_model_path

    out = kept_dir(request, "thinkcite-reference") / "gemma-270m-q3_k_s.gguf"
    return requantised(default_model_path(), out, threads=2)
