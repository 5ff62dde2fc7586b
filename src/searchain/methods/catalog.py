"""The methods, each declared once as one component class that every surface derives from.

A :class:`~searchain.methods.component.MethodComponent` says all there is to know about a
method before it is built: its settings (its config's fields and the options its builder
consumes: ``k``, the reader, de-duplication, tools, the judge, the reward pair), how it is
built, what it opens once for a service, the other names that build it (an alias; a variant
such as a SearChain ablation, which fixes some settings), whether it takes the data set's task
kind, and the heading its settings are shown under. The CLI's options, ``-O``, the HTTP
allow-list, ``GET /v1/methods``, ``searchain settings``, the evaluation manifest and the
Python API all read the components at the time they are used.

The components are found, not listed: every module and subpackage of ``searchain.methods``
that defines one (so a new built-in method is one new file), then those that installed
packages name in the entry-point group ``searchain.methods`` (a plugin), in the order of their
``rank``. A Python caller may also :func:`register` one.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
from collections.abc import Callable, Mapping
from types import ModuleType
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
from searchain.methods.component import MethodComponent, is_component
from searchain.methods.settings import Setting, unknown_message
from searchain.retrieval.base import Retriever
from searchain.types import Trace

__all__ = [
    "DEDUP",
    "ENTRY_POINTS",
    "EXACT_FALLBACK",
    "NLI",
    "READER",
    "REWARD_MODEL",
    "REWARD_REFERENCE",
    "TOOLS",
    "K",
    "MethodComponent",
    "baselines",
    "build_as",
    "build_method",
    "canonical_methods",
    "check_options",
    "components",
    "dedup_note",
    "description",
    "discover",
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

ENTRY_POINTS = "searchain.methods"  # the entry-point group a plugin names its components in

Component = type[MethodComponent]
_COMPONENTS: dict[str, Component] = {}
_discovered = False


def register(component: Component) -> Component:
    """Add ``component`` (a name already taken by another method is refused)."""
    if not is_component(component):
        raise TypeError(f"{component!r} is not a MethodComponent subclass that sets a name")
    if not _discovered:
        discover()  # so a new method is checked against the found names too
    taken = {n for c in _COMPONENTS.values() if c.name != component.name for n in c.names()}
    clash = sorted(set(component.names()) & taken)
    if clash:
        raise ValueError(f"method name(s) already registered: {', '.join(clash)}")
    _COMPONENTS[component.name] = component
    return component


def unregister(name: str) -> None:
    """Remove a method (tests that register one of their own)."""
    _COMPONENTS.pop(name, None)


def components() -> tuple[Component, ...]:
    if not _discovered:
        discover()
    return tuple(_COMPONENTS.values())


records = components  # the name it had when a method was a record


def discover() -> tuple[Component, ...]:
    """Find the methods anew: the built-in ones, then the installed plugins' (what
    :func:`register` added since is dropped). Done on first use; call it again after
    installing a plugin in a running process."""
    global _discovered
    found = sorted([*_builtin(), *_plugins()], key=lambda c: c.rank)
    _discovered = True
    _COMPONENTS.clear()
    for component in found:
        register(component)
    return tuple(_COMPONENTS.values())


def _builtin() -> list[Component]:
    """The components of ``searchain.methods``' modules and subpackages (each imported: the
    surfaces import every method's config anyway, and a component imports its method's heavy
    parts only when it builds one)."""
    import searchain.methods as package

    found: list[Component] = []
    for module in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        found += components_in(importlib.import_module(module.name))
    return found


def components_in(module: ModuleType) -> list[Component]:
    """The components ``module`` defines: in itself or, for a package, in its own modules
    (not one it imported from elsewhere)."""
    here = module.__name__
    return [
        found
        for found in vars(module).values()
        if is_component(found)
        and (found.__module__ == here or found.__module__.startswith(f"{here}."))
    ]


def _plugins() -> list[Component]:
    """The components installed packages name in the ``searchain.methods`` entry-point group
    (``mine = "my_package.module:MineComponent"``)."""
    found = []
    for point in importlib.metadata.entry_points(group=ENTRY_POINTS):
        loaded = point.load()
        if not is_component(loaded):
            raise TypeError(
                f"entry point {point.name} = {point.value!r} (group {ENTRY_POINTS}) is not a "
                "MethodComponent subclass that sets a name"
            )
        found.append(loaded)
    return found


def resolve(name: str) -> tuple[Component, dict[str, Any]]:
    """The component that builds ``name`` and the settings ``name`` fixes (a variant's)."""
    for component in components():
        if name == component.name or name in component.aliases:
            return component, {}
        if name in component.variants:
            return component, dict(component.variants[name])
    raise ValueError(f"unknown method {name!r}; available: {', '.join(method_names())}")


def method_names() -> tuple[str, ...]:
    """Every name a method is built by: the methods, then their variants, then their
    aliases."""
    rs = components()
    return (
        *(r.name for r in rs),
        *(v for r in rs for v in r.variants),
        *(a for r in rs for a in r.aliases),
    )


def canonical_methods() -> tuple[str, ...]:
    """Each method once, by its own name."""
    return tuple(c.name for c in components())


def baselines() -> tuple[str, ...]:
    """The methods listed under the baselines' heading."""
    return tuple(c.name for c in components() if c.group == "baselines")


def description(name: str) -> str:
    """One line on what ``name`` does: its summary, and what a variant fixes."""
    component, fixed = resolve(name)
    if fixed:
        said = ", ".join(f"{k}={v}" for k, v in fixed.items())
        return f"{component.name} with {said}: {component.summary}"
    if name != component.name:
        return f"= {component.name}: {component.summary}"
    return component.summary


def task_options(name: str, task: str | None) -> dict[str, Any]:
    """The options that tell method ``name`` the task kind of the data set it answers
    (``Example.task``): ``{}`` for a method that takes none."""
    return {} if task is None else resolve(name)[0].task_options(task)


def method_settings(name: str) -> tuple[Setting, ...]:
    """Every setting method ``name`` takes: its config's fields and its builder's options."""
    return resolve(name)[0].settings()


def takes(name: str, setting: str) -> bool:
    """Whether method ``name`` has the setting called ``setting``."""
    return any(s.name == setting for s in method_settings(name))


def tree_drawer(name: str) -> Callable[[Trace], Any]:
    """How a trace of method ``name`` is drawn as a tree: its own drawer, else the tree
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
    name: str, options: Mapping[str, Any], component: Component | None = None
) -> None:
    """Refuse a name method ``name`` does not take, or a value outside its setting's type,
    choices or range, before anything is opened (rules between settings are the config's)."""
    found, fixed = resolve(name)
    component = component or found
    settings = {s.name: s for s in component.settings()}
    unknown = set(options) - set(settings) - component.python_objects
    if unknown:
        raise ValueError(unknown_message(name, unknown, settings))
    # A variant's fixed settings win over given ones; a given value that differs would be
    # dropped without a word, so it is refused (the paper preset with k=5 is not the paper).
    clash = sorted(k for k, v in options.items() if k in fixed and v is not None and v != fixed[k])
    if clash:
        said = ", ".join(f"{k}={fixed[k]!r} (given {options[k]!r})" for k in clash)
        which = "them" if len(clash) > 1 else "it"
        raise ValueError(f"{name} fixes {said}; use {component.name} to choose {which}")
    for key, value in options.items():
        if key in settings and (value is None or isinstance(value, bool | int | float | str)):
            settings[key].check(value)  # objects (a tools list, an LLM) are the caller's


def build_method(name: str, llm: LLM, retriever: Retriever | None, **options: Any) -> Method:
    """Method ``name`` with ``options`` (its settings, checked first, and the Python objects
    it allows)."""
    check_options(name, options, resolve(name)[0])
    return build_as(name, llm, retriever, options)


def build_as(
    name: str, llm: LLM, retriever: Retriever | None, options: Mapping[str, Any]
) -> Method:
    """Method ``name`` built from checked ``options`` and what the variant ``name`` fixes. A
    variant whose settings leave the method its own name (a preset, unlike an
    ablation that names itself from its config) is named ``name``: its traces and a run's
    records say which one ran, beside the method itself."""
    component, fixed = resolve(name)
    method = component.build(llm, retriever, {**options, **fixed})
    if fixed and getattr(method, "name", None) == component.name:
        method.name = name  # type: ignore[misc]
    return method
