"""What a method is before it is built: one :class:`MethodRecord` (``catalog.py`` keeps
them, ``builtin.py`` declares the built-in ones)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from searchain.methods.settings import Setting, settings_of

# A builder: (llm, retriever, options) -> Method. ``options`` are the checked settings that
# were given (the builder applies its own defaults) plus any Python objects the record allows.
Builder = Callable[[Any, Any, dict[str, Any]], Any]
# What a long-lived caller (the service) opens once for a method, from the operator's options:
# (llm, retriever, options) -> the objects the builder takes in place of what they name (a
# reward model pair, an NLI judge, a tools file), by setting name.
Resources = Callable[[Any, Any, Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class MethodRecord:
    """One method, declared once: its settings are its config's fields (``config``: the
    dataclass, or ``"module:Class"`` imported when first asked for, since configs import heavy
    modules) and the ones its builder consumes (``options``), less those in ``without``."""

    name: str
    summary: str  # one line: what it does (``--method`` help, ``GET /v1/methods``)
    config: type | str
    build: Builder
    options: tuple[Setting, ...] = ()
    without: tuple[str, ...] = ()
    group: str = "baselines"  # the heading its settings are listed under
    aliases: tuple[str, ...] = ()  # other names that build it as it is
    # Other names that build it with some settings fixed (SearChain's ablations).
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # The options that tell it the data set's task kind (None: it takes none).
    task_options: Callable[[str], dict[str, Any]] | None = None
    python_objects: frozenset[str] = frozenset()  # objects a Python caller may pass instead
    resources: Resources | None = None  # None: it names nothing to open
    # How ``searchain ask --tree`` draws its trace ("module:function"; None: the common tree).
    tree: str | None = None

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.variants, *self.aliases)

    def config_class(self) -> type:
        found: type = self.config if isinstance(self.config, type) else _imported(self.config)
        return found

    def tree_drawer(self) -> Callable[[Any], Any] | None:
        return None if self.tree is None else _imported(self.tree)

    def settings(self) -> tuple[Setting, ...]:
        """Every setting it takes: its config's (a config that nests parts lists them with
        its own ``settings()``), then its builder's."""
        config = self.config_class()
        own = config.settings() if hasattr(config, "settings") else settings_of(config)
        return tuple(s for s in (*own, *self.options) if s.name not in self.without)

    def open_resources(
        self, llm: Any, retriever: Any, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """What its options name, opened (``{}`` for a method that names nothing)."""
        return {} if self.resources is None else self.resources(llm, retriever, options)


def _imported(path: str) -> Any:
    """``"module:name"``, imported now."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
