"""Method options from the command line: ``-O key=value`` for every method of a command, or
``-O method.key=value`` for one (``-O thinkcite.max_iterations=5 -O seed=1``).

Values are read as JSON scalars when they parse (``5``, ``0.2``, ``true``, ``null``,
``"text"``), else kept as text, so ``-O family=eli5`` needs no quotes. Which names a method
takes is its own business: each method rejects a name it does not know when it is built.
"""

from __future__ import annotations

import json
import re
from typing import Any

_KEY = re.compile(r"^(?:(?P<method>[a-z][a-z0-9-]*)\.)?(?P<name>[a-z_][a-z0-9_]*)$")


def parse_value(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict | list):
        raise ValueError(f"option values are scalars, not {type(value).__name__}s: {text}")
    return value


def parse_method_options(specs: list[str] | None, methods: list[str]) -> dict[str, dict[str, Any]]:
    """The options of each of ``methods`` from ``KEY=VALUE`` specs; later specs win, and a
    ``method.key`` spec wins over a plain ``key`` for that method whatever the order."""
    common: dict[str, Any] = {}
    own: dict[str, dict[str, Any]] = {m: {} for m in methods}
    for spec in specs or []:
        key, sep, raw = spec.partition("=")
        m = _KEY.match(key.strip())
        if not sep or m is None:
            raise ValueError(
                f"bad option {spec!r}: write KEY=VALUE or METHOD.KEY=VALUE "
                "(e.g. max_iterations=5, thinkcite.n_children=2)"
            )
        value = parse_value(raw.strip())
        if m["method"] is None:
            common[m["name"]] = value
        elif m["method"] in own:
            own[m["method"]][m["name"]] = value
        else:
            raise ValueError(
                f"option {spec!r} names method {m['method']!r}, which is not run here "
                f"({', '.join(methods)})"
            )
    return {meth: {**common, **own[meth]} for meth in methods}
