"""Network access for model-written URLs and tool calls (see :mod:`searchain.net.safe_http`);
the plumbing of searchain's own HTTP servers is :mod:`searchain.net.serving`."""

from searchain.net.safe_http import (
    FetchError,
    FetchResponse,
    HttpPolicy,
    UnsafeURLError,
    afetch,
    check_url,
    fetch,
    redact,
)

__all__ = [
    "FetchError",
    "FetchResponse",
    "HttpPolicy",
    "UnsafeURLError",
    "afetch",
    "check_url",
    "fetch",
    "redact",
]
