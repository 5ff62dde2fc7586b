"""The passages the service has cited, kept so a person can open each as a page.

A chat client shows a citation as a link; what it links to must be readable by a person who
clicks it, whatever the index (a corpus record, a web page LLM-URL fetched, a passage of the
user's documents). The passages an answer read are kept here, the newest few thousand, so the
citation page (``server/citation_pages.py``) can show them without searching again. A link is
signed with the service's token (HMAC), so it opens in a browser without the bearer header, and
only for passages the service itself linked to.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections import OrderedDict
from urllib.parse import quote

from searchain.types import Passage, Trace

KEPT = 4096  # passages kept (each a few hundred bytes of text)


class CitedPassages:
    """The passages of the latest answers, by id (bounded: the oldest go first)."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._passages: OrderedDict[str, Passage] = OrderedDict()
        self._lock = threading.Lock()  # answers finish in worker threads

    def remember(self, trace: Trace) -> None:
        with self._lock:
            for passage in trace.references:
                self._passages[passage.id] = passage
                self._passages.move_to_end(passage.id)
            while len(self._passages) > self.kept:
                self._passages.popitem(last=False)

    def get(self, pid: str) -> Passage | None:
        with self._lock:
            return self._passages.get(pid)


def signature(token: str | None, pid: str) -> str:
    """The link signature of passage ``pid`` under the service's ``token`` ("" without one:
    an open service's pages need none). The viewer computes the same in the browser."""
    if token is None:
        return ""
    digest = hmac.new(token.encode(), f"passage:{pid}".encode(), hashlib.sha256).hexdigest()
    return digest[:32]


def signed(token: str | None, pid: str, given: str | None) -> bool:
    """Whether ``given`` is the signature of ``pid`` (always, on a service without a token)."""
    return token is None or hmac.compare_digest(signature(token, pid), given or "")


def page_link(base: str, pid: str, token: str | None) -> str:
    """The citation page of passage ``pid`` on the service at ``base`` (ending in "/")."""
    return f"{base}passages/{quote(pid, safe='')}" + _signed_query("?", pid, token)


def file_link(pid: str, token: str | None) -> str:
    """The file passage ``pid`` was read from, on this service (a path from its root)."""
    return f"/passage-file?id={quote(pid, safe='')}" + _signed_query("&", pid, token)


def _signed_query(joiner: str, pid: str, token: str | None) -> str:
    sig = signature(token, pid)
    return f"{joiner}cite={sig}" if sig else ""
