"""What leaves the service: every trace, event and run record passes through :func:`public`."""

from __future__ import annotations

import math
from typing import Any

from searchain import redaction


def public(obj: Any) -> Any:
    """What leaves the service: finite numbers (:func:`finite`), secrets masked."""
    return finite(redaction.redact_obj(obj))


def finite(obj: Any) -> Any:
    """JSON has no NaN or infinity: such floats (e.g. a log-probability) become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    return obj
