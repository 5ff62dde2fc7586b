"""What a method is before it is built: one :class:`MethodRecord` (``catalog.py`` keeps
them, ``builtin.py`` declares the built-in ones)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from searchain.methods.settings import Setting

# A builder: (llm, retriever, options) -> Method. ``options`` are the checked settings that
# were given (the builder applies its own defaults) plus any Python objects the record allows.
Builder = Callable[[Any, Any, dict[str, Any]], Any]


@dataclass(frozen=True)
class MethodRecord:
    """One method, declared once."""

    name: str
    summary: str  # one line: what it does (``--method`` help, ``GET /v1/methods``)
    settings: Callable[[], tuple[Setting, ...]]  # called late: configs import heavy modules
    build: Builder
    group: str = "baselines"  # the heading its settings are listed under
    aliases: tuple[str, ...] = ()  # other names that build it as it is
    # Other names that build it with some settings fixed (SearChain's ablations).
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # The options that tell it the data set's task kind (None: it takes none).
    task_options: Callable[[str], dict[str, Any]] | None = None
    python_objects: frozenset[str] = frozenset()  # objects a Python caller may pass instead

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.variants, *self.aliases)
