"""Where a PostgreSQL collection lives: ``postgresql://USER@HOST/DB?collection=NAME``.

The URL is hostile input (it arrives from a command line, a config file, an API call) and
holds a secret: it is parsed and checked here once, the ``collection`` parameter is taken
out of it (PostgreSQL does not know it), and everything that shows the URL shows
:attr:`Target.display`, its password masked like any other credential.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from searchain.redaction import redact_text, register

SCHEMES = ("postgresql://", "postgres://")
# A collection is a value in a column, never an identifier in SQL; still, a name is kept to
# what a person would type, so that it can be shown, logged and used in file names safely.
COLLECTION_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
DEFAULT_COLLECTION = "default"


class PostgresTargetError(ValueError):
    """A ``postgresql://`` URL or collection name that cannot be used."""


def is_postgres_url(value: object) -> bool:
    """Whether ``value`` names a PostgreSQL collection rather than an index directory."""
    return isinstance(value, str) and value.lower().startswith(SCHEMES)


@dataclass(frozen=True)
class Target:
    """A collection in a PostgreSQL database: the libpq URL (without ``collection``) and
    the collection's name."""

    dsn: str
    collection: str

    @property
    def display(self) -> str:
        """The URL as it may be printed: user-info masked, the collection kept."""
        joiner = "&" if "?" in self.dsn else "?"
        return redact_text(f"{self.dsn}{joiner}collection={self.collection}")

    def __repr__(self) -> str:  # a dataclass repr would print the password
        return f"Target({self.display!r})"

    __str__ = __repr__


def check_collection(name: str) -> str:
    """``name`` if it is a valid collection name; otherwise a clear error."""
    if not isinstance(name, str) or not COLLECTION_NAME.match(name):
        shown = repr(name[:40]) if isinstance(name, str) else type(name).__name__
        raise PostgresTargetError(
            f"invalid collection name {shown}: use 1-63 lowercase letters, digits, '_' or "
            "'-', starting with a letter"
        )
    return name


def parse_target(url: str, collection: str | None = None) -> Target:
    """The :class:`Target` a ``postgresql://`` URL names (``collection`` overrides the
    URL's ``?collection=``; neither: ``default``)."""
    if not is_postgres_url(url):
        raise PostgresTargetError("a PostgreSQL index is named by a postgresql:// URL")
    if any(c in url for c in "\r\n\0") or len(url) > 2048:
        raise PostgresTargetError("the postgresql:// URL holds control characters or is too long")
    parts = urllib.parse.urlsplit(url)
    if parts.fragment:
        raise PostgresTargetError("a postgresql:// URL has no #fragment")
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    named = [v for k, v in query if k == "collection"]
    if len(named) > 1:
        raise PostgresTargetError("the postgresql:// URL names more than one collection")
    rest = urllib.parse.urlencode([(k, v) for k, v in query if k != "collection"])
    dsn = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, rest, ""))
    name = collection or (named[0] if named else DEFAULT_COLLECTION)
    target = Target(dsn, check_collection(name))
    register(_password(target))  # masked in traces, logs and manifests from now on
    return target


def connect(target: Target, **options: Any) -> Any:
    """A psycopg connection to the target's database (the ``postgres`` extra), errors
    raised with the password masked."""
    try:
        import psycopg
    except ImportError as e:
        raise ImportError(
            "a postgresql:// index needs the postgres extra: pip install 'searchain[postgres]'"
        ) from e
    try:
        return psycopg.connect(target.dsn, **options)
    except psycopg.Error as e:
        raise ConnectionError(
            f"cannot connect to {target.display}: {redact_text(str(e), [_password(target)])}"
        ) from None


def _password(target: Target) -> str:
    return urllib.parse.unquote(urllib.parse.urlsplit(target.dsn).password or "")
