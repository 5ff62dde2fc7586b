"""The methods, each registered once as one record that every surface derives from.

A :class:`MethodRecord` says all there is to know about a method before it is built: its
settings (its config's fields and the options its builder consumes: ``k``, the reader,
de-duplication, tools, the judge, the reward pair), its builder, what it opens once for a
service, the other names that build it (an alias; a variant such as a SearChain ablation, which
fixes some settings), whether it takes the data set's task kind, and the heading its settings
are shown under. The CLI's options, ``-O``, the HTTP allow-list, ``GET /v1/methods``,
``searchain settings``, the evaluation manifest and the Python API all read the records at the
time they are used, so registering a record (:func:`register`) is the whole of adding a method.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from searchain.methods.record import Builder, MethodRecord
from searchain.methods.settings import Setting, unknown_message
from searchain.retrieval.base import Retriever
from searchain.types import Trace

__all__ = [
    "DEDUP",
    "EXACT_FALLBACK",
    "NLI",
    "READER",
    "REWARD_MODEL",
    "REWARD_REFERENCE",
    "TOOLS",
    "Builder",
    "K",
    "MethodRecord",
    "baselines",
    "build_as",
    "build_method",
    "canonical_methods",
    "check_options",
    "dedup_note",
    "description",
    "given_to",
    "make_embedder",
    "make_reader",
    "method_names",
    "records",
    "register",
    "resolve",
    "takes",
    "tree_drawer",
    "unregister",
]

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
    raise ValueError(f"unknown method {name!r}; available: {', '.join(method_names())}")


def method_names() -> tuple[str, ...]:
    """Every name a method is built by: records, then their variants, then their aliases."""
    rs = records()
    return (
        *(r.name for r in rs),
        *(v for r in rs for v in r.variants),
        *(a for r in rs for a in r.aliases),
    )


def canonical_methods() -> tuple[str, ...]:
    """Each method once, by the name of its record."""
    return tuple(r.name for r in records())


def baselines() -> tuple[str, ...]:
    """The methods listed under the baselines' heading."""
    return tuple(r.name for r in records() if r.group == "baselines")


def description(name: str) -> str:
    """One line on what ``name`` does: its record's summary, and what a variant fixes."""
    record, fixed = resolve(name)
    if fixed:
        said = ", ".join(f"{k}={v}" for k, v in fixed.items())
        return f"{record.name} with {said}: {record.summary}"
    if name != record.name:
        return f"= {record.name}: {record.summary}"
    return record.summary


def task_options(name: str, task: str | None) -> dict[str, Any]:
    """The options that tell method ``name`` the task kind of the data set it answers
    (``Example.task``): ``{}`` for a method that takes none."""
    record = resolve(name)[0]
    if record.task_options is None or task is None:
        return {}
    return record.task_options(task)


def method_settings(name: str) -> tuple[Setting, ...]:
    """Every setting method ``name`` takes: its config's fields and its builder's options."""
    return resolve(name)[0].settings()


def takes(name: str, setting: str) -> bool:
    """Whether method ``name`` has the setting called ``setting``."""
    return any(s.name == setting for s in method_settings(name))


def tree_drawer(name: str) -> Callable[[Trace], Any]:
    """How a trace of method ``name`` is drawn as a tree: its record's drawer, else the tree
    of reasoning every method's nodes make."""
    from searchain.render import tree_of_reasoning

    try:
        own = resolve(name)[0].tree_drawer()
    except ValueError:  # a trace of a method not registered here (one read from a file)
        own = None
    return own or tree_of_reasoning


def given_to(name: str, shared: Mapping[str, Any]) -> dict[str, Any]:
    """Of settings given once for several methods (one ``-k`` for an evaluation), those that
    method ``name`` takes and that were set (None: left to each method)."""
    own = {s.name for s in method_settings(name)}
    return {key: v for key, v in shared.items() if key in own and v is not None}


def check_options(
    name: str, options: Mapping[str, Any], record: MethodRecord | None = None
) -> None:
    """Refuse a name method ``name`` does not take, or a value outside its setting's type,
    choices or range, before anything is opened (rules between settings are the config's)."""
    found, fixed = resolve(name)
    record = record or found
    settings = {s.name: s for s in record.settings()}
    unknown = set(options) - set(settings) - record.python_objects
    if unknown:
        raise ValueError(unknown_message(name, unknown, settings))
    # A variant's fixed settings win over given ones; a given value that differs would be
    # dropped without a word, so it is refused (the paper preset with k=5 is not the paper).
    clash = sorted(k for k, v in options.items() if k in fixed and v is not None and v != fixed[k])
    if clash:
        said = ", ".join(f"{k}={fixed[k]!r} (given {options[k]!r})" for k in clash)
        raise ValueError(
            f"{name} fixes {said}; use {record.name} to choose {'them' if len(clash) > 1 else 'it'}"
        )
    for key, value in options.items():
        if key in settings and (value is None or isinstance(value, bool | int | float | str)):
            settings[key].check(value)  # objects (a tools list, an LLM) are the caller's


def build_method(name: str, llm: LLM, retriever: Retriever | None, **options: Any) -> Method:
    """Method ``name`` with ``options`` (its settings, checked first, and the Python objects
    its record allows)."""
    check_options(name, options, resolve(name)[0])
    return build_as(name, llm, retriever, options)


def build_as(
    name: str, llm: LLM, retriever: Retriever | None, options: Mapping[str, Any]
) -> Method:
    """Method ``name`` built from checked ``options`` and what the variant ``name`` fixes. A
    variant whose settings leave the method its record's own name (a preset, unlike an
    ablation that names itself from its config) is named ``name``: its traces and a run's
    records say which one ran, beside the method itself."""
    record, fixed = resolve(name)
    method = record.build(llm, retriever, {**options, **fixed})
    if fixed and getattr(method, "name", None) == record.name:
        method.name = name  # type: ignore[misc]
    return method


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
