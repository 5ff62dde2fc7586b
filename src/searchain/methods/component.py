"""What a method is before it is built: one :class:`MethodComponent` subclass, declared in the
method's own module (or package), found there by ``catalog.py``.

As a Haystack component is one class whose configuration comes in and whose work is ``run``,
a method's component is one class that declares everything the surfaces need to know about it
(class attributes) and the hooks that build it and what it opens (class methods). The method it
builds is the object with ``run(question) -> Trace``; the component is never instantiated.
Subclassing registers nothing: ``catalog`` discovers the components of the ``searchain.methods``
package and of installed plugins (the ``searchain.methods`` entry-point group).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from searchain.methods.base import Method
from searchain.methods.settings import Setting, settings_of


class MethodComponent:
    """One method, declared once: its settings are its config's fields (``config``: the
    dataclass, or ``"module:Class"`` imported when first asked for, since configs import heavy
    modules) and the ones its builder consumes (``options``), less those in ``without``. A
    subclass that sets ``name`` is a method; one that does not is a base for others."""

    name: ClassVar[str]
    summary: ClassVar[str]  # one line: what it does (``--method`` help, ``GET /v1/methods``)
    config: ClassVar[type | str]
    options: ClassVar[tuple[Setting, ...]] = ()
    without: ClassVar[tuple[str, ...]] = ()
    group: ClassVar[str] = "baselines"  # the heading its settings are listed under
    aliases: ClassVar[tuple[str, ...]] = ()  # other names that build it as it is
    # Other names that build it with some settings fixed (SearChain's ablations, its preset).
    variants: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    python_objects: ClassVar[frozenset[str]] = frozenset()  # objects a Python caller may pass
    # How ``searchain ask --tree`` draws its trace ("module:function"; None: the common tree).
    tree: ClassVar[str | None] = None
    # Where it is listed among the methods (lower first; ties in the order they were found):
    # the built-in ones are 10-90, SearChain first, then its rivals, then the baselines.
    rank: ClassVar[int] = 100
    # The confidence signals a calibrator of its answers reads (``scoring/confidence`` computes
    # them from any trace; ``searchain calibrate`` fits on these, plus the costly checks a run
    # recorded). A method whose trace carries more (SearChain's chain) names its own.
    calibration_signals: ClassVar[tuple[str, ...]] = (
        "has_answer",
        "answer_in_references",
        "answer_in_cited",
        "citations",
    )

    @classmethod
    def build(cls, llm: Any, retriever: Any, options: dict[str, Any]) -> Method:
        """The method, from the checked settings that were given (its own defaults apply to
        the rest) and the Python objects it allows."""
        raise NotImplementedError(f"method {cls.name!r} declares no build()")

    @classmethod
    def task_options(cls, task: str) -> dict[str, Any]:
        """The options that tell it the data set's task kind (``{}``: it takes none)."""
        return {}

    @classmethod
    def open_resources(cls, llm: Any, retriever: Any, options: Mapping[str, Any]) -> dict[str, Any]:
        """What a long-lived caller (the service) opens once for it from the operator's
        options: the objects its builder takes in place of what they name (a reward model
        pair, an NLI judge, a tools file), by setting name (``{}``: it names nothing)."""
        return {}

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return (cls.name, *cls.variants, *cls.aliases)

    @classmethod
    def config_class(cls) -> type:
        found: type = cls.config if isinstance(cls.config, type) else imported(cls.config)
        return found

    @classmethod
    def tree_drawer(cls) -> Callable[[Any], Any] | None:
        return None if cls.tree is None else imported(cls.tree)

    @classmethod
    def settings(cls) -> tuple[Setting, ...]:
        """Every setting it takes: its config's (a config that nests parts lists them with
        its own ``settings()``), then its builder's."""
        config = cls.config_class()
        own = config.settings() if hasattr(config, "settings") else settings_of(config)
        return tuple(s for s in (*own, *cls.options) if s.name not in cls.without)


class TakesTaskKind(MethodComponent):
    """A base for the methods whose ``task`` setting adds the data set's label instruction to
    the question (StrategyQA's Yes/No, FEVER's labels): retrieve-read and the baselines."""

    @classmethod
    def task_options(cls, task: str) -> dict[str, Any]:
        return {"task": task}


def needs_retriever(name: str, retriever: Any) -> Any:
    """``retriever``, or the error a method that searches gives without one."""
    if retriever is None:
        raise ValueError(f"{name} needs a retriever")
    return retriever


def without_unset_k(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` less a ``k`` left unset (the method's own default applies)."""
    return {key: v for key, v in options.items() if not (key == "k" and not v)}


def is_component(found: object) -> bool:
    """Whether ``found`` is a method's component (a subclass that names a method itself, not
    a base that others fill in)."""
    return isinstance(found, type) and issubclass(found, MethodComponent) and "name" in vars(found)


def imported(path: str) -> Any:
    """``"module:name"``, imported now."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
