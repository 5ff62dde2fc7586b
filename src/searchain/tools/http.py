"""The generic HTTP tool: the paper's hidden fields (method, endpoint, static parameters) in
config, the dynamic parameters from the LLM — every request through
:mod:`searchain.net.safe_http`, which refuses private, loopback, link-local and metadata
addresses (unless the tool's config names the host), re-checks redirects and bounds size
and time.

URL templates: ``https://api.example.org/v1/person/{name}`` puts the ``name`` parameter in
the path, percent-encoded (a value cannot add a host, a path segment or a query). The host
must be fixed by the template; only a template that is *exactly* one placeholder
(``"{url}"``) lets the LLM choose the whole URL, and then the allowlist in the policy is
the only guard. Dynamic parameters not in the template go to the query string (GET) or the
body (POST). Static parameters (API keys) are added to the query or body last, never shown
to the LLM, and redacted (with their URL-encoded forms) from output, traces and errors.
Constants that are not secret belong in the template (``?units=metric``).
"""

from __future__ import annotations

import json
import logging
import re
import string
import urllib.parse
from collections.abc import Mapping
from typing import Any

from searchain.net.safe_http import FetchError, HttpPolicy, UnsafeURLError, fetch
from searchain.redaction import mask_secrets
from searchain.tools.base import Tool, ToolError, ToolOutput

log = logging.getLogger(__name__)

METHODS = ("GET", "POST", "PUT", "DELETE")
_WHOLE = re.compile(r"^\{(\w+)\}$")


class ToolRefusedError(ToolError):
    """The request was refused by the safety policy before anything was sent."""


def template_fields(url: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(url) if f]


def _check_template(name: str, url: str, params: Mapping[str, Any]) -> None:
    fields = template_fields(url)
    unknown = [f for f in fields if f not in params]
    if unknown:
        raise ValueError(f"tool {name!r}: URL placeholders {unknown} are not parameters")
    if _WHOLE.match(url):
        return
    probe = urllib.parse.urlsplit(url.format(**{f: "x" for f in fields}))
    if probe.scheme not in ("http", "https") or not probe.hostname:
        raise ValueError(f"tool {name!r}: URL must be an http(s) URL, got {url!r}")
    head = url.split("//", 1)[-1].split("/", 1)[0]
    if "{" in url.split("//", 1)[0] or "{" in head:
        raise ValueError(
            f"tool {name!r}: placeholders may not set the scheme or host ({url!r}); "
            "use a whole-URL template '{url}' with allowed_hosts to let the model choose"
        )


def _as_query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return v if isinstance(v, str) else json.dumps(v)


class HttpTool(Tool):
    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        *,
        url: str,
        method: str = "GET",
        static_params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        policy: HttpPolicy | None = None,
        body: str = "json",
    ) -> None:
        super().__init__(name, description, parameters)
        self.method = method.upper()
        if self.method not in METHODS:
            raise ValueError(f"tool {name!r}: method must be one of {METHODS}")
        if body not in ("json", "form"):
            raise ValueError(f"tool {name!r}: body must be 'json' or 'form'")
        _check_template(name, url, self.parameters.get("properties") or {})
        self.url, self.body = url, body
        self.static_params = dict(static_params or {})
        self.headers = dict(headers or {})
        clash = set(self.static_params) & set(self.param_names)
        if clash:
            raise ValueError(f"tool {name!r}: {sorted(clash)} are both static and dynamic")
        if policy is None:
            host = None if _WHOLE.match(url) else urllib.parse.urlsplit(url).hostname
            policy = HttpPolicy(allowed_domains=(host,) if host else None)
        self.policy = policy
        self.secrets = self._secret_values()
        if _WHOLE.match(url) and self.secrets and policy.allowed_domains is None:
            # The model picks the host: an API key must never go to a host it chose freely.
            raise ValueError(
                f"tool {name!r}: a whole-URL template with static parameters or headers needs "
                "allowed_hosts"
            )

    def _secret_values(self) -> tuple[str, ...]:
        values = [str(v) for v in self.static_params.values()]
        for v in self.headers.values():
            values.append(v)
            values.extend(w for w in v.split()[1:] if len(w) >= 4)  # "Bearer <token>"
        return tuple(v for v in values if v)

    def __repr__(self) -> str:  # never show static values
        return f"HttpTool({self.name!r}, {self.method} {self.url})"

    def _request_url(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        fields = template_fields(self.url)
        rest = {k: v for k, v in args.items() if k not in fields}
        whole = _WHOLE.match(self.url)
        if whole:
            return str(args[whole.group(1)]), rest
        quoted = {f: urllib.parse.quote(_as_query_value(args[f]), safe="") for f in fields}
        return self.url.format(**quoted), rest

    def _call(self, args: dict[str, Any]) -> ToolOutput:
        missing = [f for f in template_fields(self.url) if f not in args]
        if missing:
            raise ToolError(f"tool {self.name!r} needs {missing} to build its URL")
        url, rest = self._request_url(args)
        kw: dict[str, Any] = {"headers": self.headers or None}
        merged = {**rest, **self.static_params}  # static last: the model cannot override them
        if self.method in ("GET", "DELETE"):
            kw["params"] = {k: _as_query_value(v) for k, v in merged.items()}
        elif self.body == "json":
            kw["json"] = merged
        else:
            kw["data"] = {k: _as_query_value(v) for k, v in merged.items()}
        try:
            resp = fetch(url, policy=self.policy, method=self.method, secrets=self.secrets, **kw)
        except UnsafeURLError as e:
            msg = mask_secrets(str(e), self.secrets)
            raise ToolRefusedError(f"tool {self.name!r} refused the request: {msg}") from None
        except FetchError as e:
            msg = mask_secrets(str(e), self.secrets)
            raise ToolError(f"tool {self.name!r} request failed: {msg}") from None
        text = mask_secrets(resp.text, self.secrets)  # a server may echo the key back
        if resp.status >= 400:
            text = f"HTTP {resp.status} error: {text}"
        log.debug("tool %s: HTTP %s from %s", self.name, resp.status, resp.url)
        meta = {
            "status": resp.status,
            "url": mask_secrets(resp.url, self.secrets),
            "bytes": len(resp.content),
            "truncated_bytes": resp.truncated,
            "redirects": [mask_secrets(r, self.secrets) for r in resp.redirects],
            "elapsed_s": round(resp.elapsed_s, 3),
        }
        return ToolOutput(text, meta=meta)
