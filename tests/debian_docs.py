"""Documents no one here wrote: Debian's documentation packages, fetched by the test set-up
(``apt-get download`` + ``dpkg -x``), extracted once into a cache outside the repository
(``$SEARCHAIN_TEST_CACHE``, default ``~/.cache/searchain-tests``) and never committed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("SEARCHAIN_TEST_CACHE", Path.home() / ".cache" / "searchain-tests"))


def fetch(package: str) -> Path:
    """The files of Debian package ``package``, extracted once into the cache."""
    root = CACHE / "debian" / package
    if (root / ".extracted").is_file():
        return root
    if not (shutil.which("apt-get") and shutil.which("dpkg")):
        pytest.skip("fetching real documents needs apt-get and dpkg (Debian or Ubuntu)")
    debs = CACHE / "debian" / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    got = subprocess.run(["apt-get", "download", package], cwd=debs, capture_output=True)
    if got.returncode != 0 and os.geteuid() == 0:  # no package lists yet: read them once
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, check=False)
        got = subprocess.run(["apt-get", "download", package], cwd=debs, capture_output=True)
    assert got.returncode == 0, got.stderr.decode(errors="replace")
    deb = max(debs.glob(f"{package}_*.deb"), key=lambda p: p.stat().st_mtime)
    subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    (root / ".extracted").touch()
    return root
