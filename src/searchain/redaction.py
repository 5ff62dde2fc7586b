"""Secrets never leave the process: one redaction helper for every boundary.

API keys, the service's bearer token, tool static parameters and the user-info of URLs
(``http://user:pass@host``) must not reach run manifests, ``results.jsonl``, traces, logs or
HTTP bodies. Rather than trusting every writer to remember, the writers (manifest, result
records, error records, the HTTP API, the log) pass what they emit through
:func:`redact_text` / :func:`redact_obj`, which replace

* every *known* secret: the values registered with :func:`register` (the LLM client's key,
  the API token, tool static parameters) and the values of environment variables whose name
  says they are secret (``*_API_KEY``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``), in plain
  and URL-encoded form;
* what *looks* like a credential: URL user-info, ``?api_key=``-style query values,
  ``Bearer ...`` headers, ``sk-...`` keys; and, in mappings, the values of keys named like a
  credential (``api_key``, ``authorization``, ``static_params``...).

Everything else is left as it is (traces are data: answers and passages must not change).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import traceback
import urllib.parse
from collections.abc import Iterable
from typing import Any

MASK = "***"
# Shorter values would mask ordinary words; real keys and tokens are much longer.
MIN_SECRET_CHARS = 6
_SECRET_ENV = re.compile(r"API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
# Placeholders clients send to servers that ignore the key: not secrets, and too common.
_NOT_SECRET = frozenset({"not-needed", "none", "null", "dummy", "EMPTY", "sk-no-key-required"})
_SECRET_KEY = re.compile(
    r"^(api[_-]?key|apikey|x-api-key|access[_-]?token|auth[_-]?token|api[_-]?token|token|"
    r"secret|client[_-]?secret|password|passwd|authorization|proxy-authorization|cookie|"
    r"set-cookie|static_params)$",
    re.IGNORECASE,
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@\"'<>]*@")
_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:api[_-]?key|apikey|key|token|access[_-]?token|secret|password|pwd|auth|"
    r"sig|signature)=)[^&#\s\"'<>]+"
)
# A credential after the scheme has a digit and some length ("basic research" is prose).
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{12,}")
_KEY_LIKE = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")

_registered: set[str] = set()
_lock = threading.Lock()


def register(*values: Any) -> None:
    """Remember values that must never be written out (keys, tokens, static parameters)."""
    with _lock:
        for v in values:
            if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS and v not in _NOT_SECRET:
                _registered.add(v)


def known_secrets(extra: Iterable[str] = ()) -> list[str]:
    """Registered secrets, secret-named environment variables and ``extra``, longest first
    (so a secret that contains another is masked whole)."""
    with _lock:
        found = set(_registered)
    for name, value in os.environ.items():
        secret = _SECRET_ENV.search(name) and len(value) >= MIN_SECRET_CHARS
        if secret and value not in _NOT_SECRET:
            found.add(value)
    found.update(s for s in extra if isinstance(s, str) and len(s) >= MIN_SECRET_CHARS)
    return sorted(found, key=len, reverse=True)


def redact_text(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every known secret and every credential-looking part masked."""
    return _mask(text, known_secrets(extra)) if text else text


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` (and its URL-encoded forms) replaced by ``***``;
    nothing else is masked (:func:`redact_text` also masks what looks like a credential)."""
    for secret in secrets:
        if not secret:
            continue
        if secret in text:
            text = text.replace(secret, MASK)
        for form in (urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret)):
            if form != secret and form in text:
                text = text.replace(form, MASK)
    return text


def _mask(text: str, secrets: list[str]) -> str:
    text = mask_secrets(text, secrets)
    if "://" in text:
        text = _USERINFO.sub(rf"\g<1>{MASK}@", text)
    if "=" in text:
        text = _QUERY_SECRET.sub(rf"\g<1>{MASK}", text)
    text = _BEARER.sub(rf"\g<1> {MASK}", text)
    return _KEY_LIKE.sub(f"sk-{MASK}", text)


def redact_obj(obj: Any, extra: Iterable[str] = ()) -> Any:
    """A copy of a JSON-like value with :func:`redact_text` applied to every string, and the
    values of credential-named keys masked whatever they hold."""
    secrets = known_secrets(extra)  # once for the whole value, not once per string
    return _walk(obj, secrets)


def _walk(obj: Any, secrets: list[str]) -> Any:
    if isinstance(obj, str):
        return _mask(obj, secrets) if obj else obj
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if isinstance(k, str) and _SECRET_KEY.match(k) and v not in (None, "", {}, []):
                out[k] = MASK
            else:
                out[k] = _walk(v, secrets)
        return out
    if isinstance(obj, list | tuple):
        return [_walk(v, secrets) for v in obj]
    return obj


def clean_url(url: str | None) -> str | None:
    """``url`` without user-info and without secret-looking query values (for messages,
    manifests and cache keys that name an endpoint)."""
    if not url:
        return url
    try:
        parts = urllib.parse.urlsplit(str(url))
    except ValueError:
        return redact_text(str(url))
    netloc = parts.netloc.rpartition("@")[2]
    cleaned = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    return redact_text(cleaned)


# -- logs ---------------------------------------------------------------------------------
_installed = False


def install_log_redaction() -> None:
    """Mask secrets in every log record from now on (messages and tracebacks), whatever
    logger or handler emits them: the record factory is wrapped once per process."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed format string: leave it to the handler to report
            return record
        masked = redact_text(message)
        if masked != message:
            record.msg, record.args = masked, ()
        if record.exc_info and record.exc_info[1] is not None:
            text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            masked = redact_text(text)
            if masked != text:  # the formatter prints exc_text when it is set
                record.exc_text = masked
        return record

    logging.setLogRecordFactory(factory)
