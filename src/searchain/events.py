"""Progress events from inside a method, for live views (SSE, progress bars) without plumbing.

A method calls ``emit("round", n=2)``; whoever wants to watch wraps the call in
``with listening(callback): method.run(q)``. The listener lives in a context variable, so it
follows the call into ``asyncio.to_thread`` and never leaks between concurrent requests. With no
listener, ``emit`` costs one lookup.

Event kinds in use (``data`` keys in brackets) -- keep names stable, the web viewer shows them:
  start [method, question]            round [n]                  chain [n, queries]
  node [id, status, source]           retrieve [query, k]        llm [purpose]
  mcts_iteration [i, best_value]      subquestion [depth, text]  tool [name]
  answer [text]                       note [text]  (something a user should know, in words)
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

log = logging.getLogger(__name__)

Listener = Callable[[dict[str, Any]], None]
_listener: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "searchain_event_listener", default=None
)


def emit(kind: str, **data: Any) -> None:
    """Send an event to the current listener, if any. A failing listener never breaks the method."""
    listener = _listener.get()
    if listener is None:
        return
    try:
        listener({"event": kind, "time": time.time(), **data})
    except Exception:  # a broken viewer must not lose an answer
        log.exception("progress listener failed on %r", kind)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Route ``emit`` calls made in this context (and threads started from it) to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
