"""Tools declared in a file (YAML, TOML or JSON), so people add tools without writing code.

```yaml
tools:
  - builtin: search          # the configured retriever; option: k (passages, default 3)
  - builtin: calculator
  - name: country_facts
    description: Facts about a country (currency, capital, latitude).
    parameters:              # shorthand: name -> description (required strings) ...
      country: the country's English name
    http:
      url: https://facts.example.org/country/{country}
      method: GET
      static_params: {api_key: "${FACTS_API_KEY}"}   # hidden; ${VAR} from the environment
      headers: {Authorization: "Bearer ${FACTS_TOKEN}"}
      allowed_hosts: [facts.example.org]             # default: the template's host
      allow_private: []      # e.g. ["127.0.0.1:8123"]: explicit opt-in for local servers
      max_bytes: 2000000
      timeout_s: 10
```

``parameters`` is either that shorthand or a full JSON schema (``{type: object,
properties: ..., required: ...}``, see :mod:`searchain.tools.schema`). Unknown keys are
errors, so a typo never silently disables a safety setting.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from searchain.net.safe_http import HttpPolicy
from searchain.retrieval.base import Retriever
from searchain.tools.base import Tool
from searchain.tools.calculator import Calculator
from searchain.tools.http import HttpTool
from searchain.tools.search import SearchTool

BUILTINS = ("search", "calculator")
_TOOL_KEYS = {"name", "description", "parameters", "http"}
_HTTP_KEYS = {
    "url",
    "method",
    "static_params",
    "headers",
    "allowed_hosts",
    "allow_private",
    "max_bytes",
    "timeout_s",
    "max_redirects",
    "retries",
    "body",
}
_ENV = re.compile(r"\$\{(\w+)\}")


class ToolConfigError(ValueError):
    """The tools file is malformed. The message names the file and the tool."""


def read_tools_file(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    path = Path(path)
    if not path.is_file():
        raise ToolConfigError(f"tools file not found: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            raise ToolConfigError(f"{path}: use a .yaml, .yml, .toml or .json tools file")
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
        raise ToolConfigError(f"{path}: {e}") from None
    except Exception as e:  # yaml.YAMLError, without importing yaml up front
        if type(e).__module__.startswith("yaml"):
            raise ToolConfigError(f"{path}: {e}") from None
        raise
    entries = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ToolConfigError(f"{path}: expected a non-empty list under 'tools'")
    return entries


def _expand_env(value: Any, where: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in os.environ:
            raise ToolConfigError(f"{where}: environment variable {m.group(1)} is not set")
        return os.environ[m.group(1)]

    return _ENV.sub(sub, str(value))


def _schema(params: Any, where: str) -> dict[str, Any]:
    if params is None:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    if not isinstance(params, dict):
        raise ToolConfigError(f"{where}: parameters must be a mapping")
    if params.get("type") == "object" or "properties" in params:
        return params
    if not all(isinstance(v, str) for v in params.values()):
        raise ToolConfigError(
            f"{where}: parameters are either a JSON schema (type: object) or a mapping of "
            "parameter name to description"
        )
    return {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in params.items()},
        "required": list(params),
        "additionalProperties": False,
    }


def _http_tool(entry: dict[str, Any], where: str) -> HttpTool:
    http = entry["http"]
    if not isinstance(http, dict) or "url" not in http:
        raise ToolConfigError(f"{where}: http needs at least a url")
    unknown = sorted(set(http) - _HTTP_KEYS)
    if unknown:
        raise ToolConfigError(f"{where}: unknown http setting(s) {unknown}")
    static = {
        k: _expand_env(v, f"{where} static_params.{k}")
        for k, v in (http.get("static_params") or {}).items()
    }
    headers = {
        k: _expand_env(v, f"{where} headers.{k}") for k, v in (http.get("headers") or {}).items()
    }
    policy = None
    if any(
        k in http
        for k in (
            "allowed_hosts",
            "allow_private",
            "max_bytes",
            "timeout_s",
            "max_redirects",
            "retries",
        )
    ):
        hosts = http.get("allowed_hosts")
        if hosts is None and not re.fullmatch(r"\{\w+\}", http["url"]):
            hosts = [_host_of(http["url"])]
        policy = HttpPolicy(
            allowed_domains=tuple(hosts) if hosts is not None else None,
            allow_private=tuple(str(h) for h in http.get("allow_private") or ()),
            max_bytes=int(http.get("max_bytes", 2_000_000)),
            timeout_s=float(http.get("timeout_s", 10.0)),
            max_redirects=int(http.get("max_redirects", 5)),
            retries=int(http.get("retries", 0)),
        )
    return HttpTool(
        entry["name"],
        entry["description"],
        _schema(entry.get("parameters"), where),
        url=http["url"],
        method=http.get("method", "GET"),
        static_params=static,
        headers=headers,
        policy=policy,
        body=http.get("body", "json"),
    )


def _host_of(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url.replace("{", "").replace("}", "")).hostname or ""


def build_tools(
    entries: list[dict[str, Any]], retriever: Retriever | None = None, source: str = "tools"
) -> list[Tool]:
    tools: list[Tool] = []
    for i, entry in enumerate(entries, 1):
        where = f"{source}: tool {i}"
        if not isinstance(entry, dict):
            raise ToolConfigError(f"{where}: expected a mapping")
        try:
            if "builtin" in entry:
                tools.append(_builtin(entry, retriever, where))
                continue
            where = f"{source}: tool {entry.get('name', i)!r}"
            unknown = sorted(set(entry) - _TOOL_KEYS)
            if unknown:
                raise ToolConfigError(f"{where}: unknown key(s) {unknown}")
            if not entry.get("name") or not entry.get("description") or "http" not in entry:
                raise ToolConfigError(f"{where}: needs name, description and http")
            tools.append(_http_tool(entry, where))
        except ToolConfigError:
            raise
        except (ValueError, TypeError) as e:
            raise ToolConfigError(f"{where}: {e}") from None
    names = [t.name for t in tools]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ToolConfigError(f"{source}: tool names must be unique, repeated: {dupes}")
    return tools


def _builtin(entry: dict[str, Any], retriever: Retriever | None, where: str) -> Tool:
    kind = entry["builtin"]
    options = {k: v for k, v in entry.items() if k != "builtin"}
    if kind == "search":
        if retriever is None:
            raise ToolConfigError(f"{where}: the search tool needs a retriever")
        unknown = sorted(set(options) - {"k", "name"})
        if unknown:
            raise ToolConfigError(f"{where}: unknown search option(s) {unknown}")
        return SearchTool(retriever, k=int(options.get("k", 3)), name=options.get("name", "search"))
    if kind == "calculator":
        if set(options) - {"name"}:
            raise ToolConfigError(f"{where}: the calculator takes only a name")
        return Calculator(name=options.get("name", "calculator"))
    raise ToolConfigError(f"{where}: unknown builtin {kind!r}; one of {BUILTINS}")


def load_tools(path: str | os.PathLike[str], retriever: Retriever | None = None) -> list[Tool]:
    """Read a tools file and build its tools (the search tool over ``retriever``)."""
    return build_tools(read_tools_file(path), retriever, source=str(path))


def default_tools(retriever: Retriever | None) -> list[Tool]:
    """The paper's benchmark setting: a search tool only (when there is a retriever)."""
    return [SearchTool(retriever)] if retriever is not None else []
