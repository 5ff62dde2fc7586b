"""Whether a run directory's configuration and a resuming one are the same run although they
differ in how their methods were asked for (``options``, the ``-O`` settings).

A run is what each of its methods resolved to (``method_config``: ``eval.methods.describe``,
every field of the method's settings dataclass, less those at their ``before`` value or inert).
Where that is equal and the options differ only in such fields, the options change nothing
the manifest does not already show: a run made when a setting's default was the paper's
resumes when it is asked for with that value pinned (bench/quality.py pins the paper preset,
``searchain-paper``'s settings, on the Table reproductions made before the preset existed). An
option the builder consumes outside the dataclass (a reader's path, a tools file) is not
fully in ``method_config``, so a difference there is still another configuration.
"""

from __future__ import annotations

import dataclasses
from typing import Any

_UNSET = object()


def same_run(old: dict[str, Any], new: dict[str, Any], diff: list[str]) -> bool:
    """Whether configurations that differ in the keys ``diff`` are still one run: a larger
    --limit (``datasets.subsample`` keeps every item the smaller one picked), and options that
    pin what the methods already resolved to (:func:`asked_alike`)."""
    if not diff or set(diff) - {"limit", "options"}:
        return False
    if "limit" in diff and not grows(old.get("limit"), new.get("limit")):
        return False
    return "options" not in diff or asked_alike(old, new)


def grows(old: Any, new: Any) -> bool:
    """Whether a run of ``old`` items extended to ``new`` keeps them all (None: every item)."""
    return isinstance(old, int) and (new is None or (isinstance(new, int) and new > old))


def asked_alike(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether configurations ``old`` and ``new`` resolve every method alike while their
    ``options`` differ only in fields of the methods' settings dataclasses."""
    if "method_config" not in new or old.get("method_config") != new["method_config"]:
        return False
    before, now = old.get("options") or {}, new.get("options") or {}
    for method in set(before) | set(now):
        a, b = before.get(method, {}), now.get(method, {})
        changed = {k for k in set(a) | set(b) if a.get(k, _UNSET) != b.get(k, _UNSET)}
        if changed and not changed <= _dataclass_fields(method):
            return False
    return True


def _dataclass_fields(method: str) -> set[str]:
    """The fields of ``method``'s settings dataclass (none for a name not registered here)."""
    from searchain.methods.catalog import resolve

    try:
        config = resolve(method)[0].config_class()
    except ValueError:
        return set()
    return (
        {f.name for f in dataclasses.fields(config)} if dataclasses.is_dataclass(config) else set()
    )
