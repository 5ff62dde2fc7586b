"""Build a method by name, the way the CLI, the HTTP service and the evaluation harness do.

Everything here is derived from the method records (``catalog.py``, ``builtin.py``) at the time
it is asked for, so a record registered later is on every surface too. The upper-case names
(``METHODS``, ``CANONICAL_METHODS``, ...) are kept for older callers; code here calls the
functions.
"""

from __future__ import annotations

from typing import Any

from searchain.llm import LLM
from searchain.methods.base import Method
from searchain.methods.builder_options import (
    DEDUP,
    EXACT_FALLBACK,
    NLI,
    READER,
    REWARD_MODEL,
    REWARD_REFERENCE,
    TOOLS,
    K,
    dedup_note,
    make_embedder,
    make_reader,
)
from searchain.methods.catalog import MethodRecord, all_names, records, resolve
from searchain.methods.settings import Setting, unknown_message
from searchain.retrieval.base import Retriever

__all__ = [
    "DEDUP",
    "EXACT_FALLBACK",
    "NLI",
    "READER",
    "REWARD_MODEL",
    "REWARD_REFERENCE",
    "TOOLS",
    "K",
    "build_method",
    "canonical",
    "canonical_methods",
    "check_options",
    "dedup_note",
    "description",
    "group_of",
    "make_embedder",
    "make_reader",
    "method_names",
    "method_settings",
    "record_of",
    "takes",
    "task_options",
]


def method_names() -> tuple[str, ...]:
    """Every name that builds a method: each record's, its variants', its aliases'."""
    return all_names()


def canonical_methods() -> tuple[str, ...]:
    """Each method once, by the name of its record."""
    return tuple(r.name for r in records())


def record_of(name: str) -> MethodRecord:
    return resolve(name)[0]


def description(name: str) -> str:
    """One line on what ``name`` does: its record's summary, and what a variant fixes."""
    record, fixed = resolve(name)
    if fixed:
        said = ", ".join(f"{k}={v}" for k, v in fixed.items())
        return f"{record.name} with {said}: {record.summary}"
    if name != record.name:
        return f"= {record.name}: {record.summary}"
    return record.summary


def canonical(name: str) -> str:
    """The method that ``name`` builds: an alias's target, an ablation's SearChain."""
    return record_of(name).name


def group_of(name: str) -> str:
    """The heading a method's settings are listed under."""
    return record_of(name).group


def task_options(name: str, task: str | None) -> dict[str, Any]:
    """The options that tell method ``name`` the task kind of the data set it answers
    (``Example.task``): ``{}`` for a method that takes none."""
    record = record_of(name)
    if record.task_options is None or task is None:
        return {}
    return record.task_options(task)


def method_settings(name: str) -> tuple[Setting, ...]:
    """Every setting method ``name`` takes: its config's fields and its builder's options."""
    return record_of(name).settings()


def takes(name: str, setting: str) -> bool:
    """Whether method ``name`` has the setting called ``setting``."""
    return any(s.name == setting for s in method_settings(name))


def check_options(name: str, options: dict[str, Any]) -> None:
    """Refuse a name method ``name`` does not take, or a value outside its setting's type,
    choices or range, before anything is opened (rules between settings are the config's)."""
    record = record_of(name)
    settings = {s.name: s for s in record.settings()}
    unknown = set(options) - set(settings) - record.python_objects
    if unknown:
        raise ValueError(unknown_message(name, unknown, settings))
    for key, value in options.items():
        if key in settings and (value is None or isinstance(value, bool | int | float | str)):
            settings[key].check(value)  # objects (a tools list, an LLM) are the caller's


def build_method(
    name: str,
    llm: LLM,
    retriever: Retriever | None,
    *,
    k: int | None = None,
    reader: str | None = None,
    dedup: str | None = None,
    **options: Any,
) -> Method:
    """Method ``name`` with ``options`` (its settings, checked first). ``k``, ``reader`` and
    ``dedup`` as keywords reach the methods that take them and are ignored by the others
    (one ``-k`` for every method of an evaluation); as ``options`` they are checked."""
    record, fixed = resolve(name)
    check_options(name, options)
    takes = {s.name: s for s in record.settings()}
    for setting, value in ((K, k), (READER, reader), (DEDUP, dedup)):
        if value is not None:
            setting.check(value)
            if setting.name in takes:
                options.setdefault(setting.name, value)
    return record.build(llm, retriever, {**options, **fixed})


_DERIVED = {
    "METHODS": method_names,
    "CANONICAL_METHODS": canonical_methods,
    "ALIASES": lambda: {a: r.name for r in records() for a in r.aliases},
    "SEARCHAIN_ABLATIONS": lambda: dict(record_of("searchain").variants),
    "TASK_AWARE": lambda: tuple(
        n for r in records() if r.task_options is not None for n in r.names()
    ),
    "GROUPS": lambda: {r.name: r.group for r in records() if r.group != "baselines"},
    "BASELINES": lambda: tuple(r.name for r in records() if r.group == "baselines"),
    "PYTHON_OBJECTS": lambda: {r.name: set(r.python_objects) for r in records()},
    "DESCRIPTIONS": lambda: {n: description(n) for n in method_names()},
}


def __getattr__(name: str) -> Any:
    """The tables older callers import, derived from the records when asked for."""
    if name in _DERIVED:
        return _DERIVED[name]()
    if name == "SEARCHAIN_FAMILIES":
        from searchain.methods.builtin import SEARCHAIN_FAMILIES

        return SEARCHAIN_FAMILIES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
