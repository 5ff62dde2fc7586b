"""The server-sent events every streaming face sends: the response and its lines (what they
carry made :func:`~searchain.server.public.public`)."""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import StreamingResponse

from searchain.server.public import public

KEEP_ALIVE = ": keep-alive\n\n"  # an SSE comment: the connection is alive, nothing new


class EventStream(StreamingResponse):
    media_type = "text/event-stream"


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event: its name (none: an unnamed ``data:`` line, as OpenAI streams)
    and its JSON data, as everything that leaves the service (:func:`public`)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(public(data), ensure_ascii=False)}\n\n"
