"""The methods, each registered once as one record that every surface derives from.

A :class:`MethodRecord` says all there is to know about a method before it is built: its
settings (its config's fields and the options its builder consumes: ``k``, the reader,
de-duplication, tools, the judge, the reward pair), its builder, the other names that build it
(an alias; a variant such as a SearChain ablation, which fixes some settings), whether it takes
the data set's task kind, and the heading its settings are shown under. The CLI's options,
``-O``, the HTTP allow-list, ``GET /v1/methods``, ``searchain settings``, the evaluation
manifest and the Python API all read the records at the time they are used, so registering a
record (:func:`register`) is the whole of adding a method.
"""

from __future__ import annotations

from typing import Any

from searchain.methods.record import Builder, MethodRecord

__all__ = ["Builder", "MethodRecord", "all_names", "records", "register", "resolve", "unregister"]

_RECORDS: dict[str, MethodRecord] = {}


def register(record: MethodRecord) -> MethodRecord:
    """Add ``record`` (a name already taken by another record is refused)."""
    _load_builtin()  # so a new record is checked against the built-in names too
    taken = {n for r in _RECORDS.values() if r.name != record.name for n in r.names()}
    clash = sorted(set(record.names()) & taken)
    if clash:
        raise ValueError(f"method name(s) already registered: {', '.join(clash)}")
    _RECORDS[record.name] = record
    return record


def unregister(name: str) -> None:
    """Remove a record (tests that register a method of their own)."""
    _RECORDS.pop(name, None)


def records() -> tuple[MethodRecord, ...]:
    _load_builtin()
    return tuple(_RECORDS.values())


def resolve(name: str) -> tuple[MethodRecord, dict[str, Any]]:
    """The record that builds ``name`` and the settings ``name`` fixes (a variant's)."""
    for record in records():
        if name == record.name or name in record.aliases:
            return record, {}
        if name in record.variants:
            return record, dict(record.variants[name])
    raise ValueError(f"unknown method {name!r}; available: {', '.join(all_names())}")


def all_names() -> tuple[str, ...]:
    """Every name a method is built by: records, then their variants, then their aliases."""
    rs = records()
    return (
        *(r.name for r in rs),
        *(v for r in rs for v in r.variants),
        *(a for r in rs for a in r.aliases),
    )


_loaded = False


def _load_builtin() -> None:
    """Register the built-in methods on first use (a record's settings and builder are
    imported only when asked for, so this is cheap)."""
    global _loaded
    if not _loaded:
        _loaded = True
        from searchain.methods.builtin import builtin_records

        for record in builtin_records():
            register(record)
