"""What leaves the service: every trace, event and run record passes through :func:`public`."""

from __future__ import annotations

from typing import Any

from searchain import redaction
from searchain.types import finite


def public(obj: Any) -> Any:
    """What leaves the service: finite numbers (:func:`finite`), secrets masked."""
    return finite(redaction.redact_obj(obj))
