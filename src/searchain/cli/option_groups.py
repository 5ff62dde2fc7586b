"""Options declared once, in groups that commands list: how a group becomes options and back.

An :class:`OptionGroup` is a frozen dataclass whose fields are typer declarations
(``Annotated[type, typer.Option(...)]``) with their defaults. A command takes a group as one
keyword parameter (``retrieval: RetrievalOptions``); :func:`grouped` shows typer the group's
fields as options, in the group's place, and hands the command the group built from their
values. A group says what it fills of the one assembly
:class:`~searchain.methods.assembly.Spec` (:meth:`OptionGroup.spec_fields`), so
:func:`spec_of` builds a command's spec from the groups it was given.

Typer reads a command's options from its function signature only, so the signature typer sees
is made here, once per command, when the app is built: that is also when the options derived
from the methods' settings are made (``method_flags.py``), since methods may be registered
until then.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, Self

from searchain.methods.assembly import Spec

KEYWORD = inspect.Parameter.KEYWORD_ONLY


class OptionGroup:
    """A group of options declared once (a frozen dataclass of typer declarations)."""

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        """The group's options as the parameters typer reads, in declaration order."""
        hints = typing.get_type_hints(cls, include_extras=True)
        return [
            inspect.Parameter(f.name, KEYWORD, default=f.default, annotation=hints[f.name])
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        ]

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Self:
        """The group of the values typer parsed, by parameter name."""
        return cls(**values)

    def spec_fields(self) -> dict[str, Any]:
        """What the group fills of a :class:`Spec`, by field name (none by default)."""
        return {}


def spec_of(*groups: OptionGroup, options: Mapping[str, Any] | None = None) -> Spec:
    """The spec the groups' options describe, with the method's ``options`` (ValueError:
    they do not fit)."""
    fields = {name: value for g in groups for name, value in g.spec_fields().items()}
    return Spec(**fields, options=dict(options or {}))


def _group_type(annotation: object) -> type[OptionGroup] | None:
    if isinstance(annotation, type) and issubclass(annotation, OptionGroup):
        return annotation
    return None


def grouped(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` as typer must see it: each of its group parameters spread into the
    group's options; called, it receives each group built from their values."""
    sig = inspect.signature(command, eval_str=True)
    groups: dict[str, tuple[type[OptionGroup], list[str]]] = {}
    params: list[inspect.Parameter] = []
    for p in sig.parameters.values():
        if kind := _group_type(p.annotation):
            spread = kind.parameters()
            groups[p.name] = (kind, [q.name for q in spread])
            params += spread
        else:  # keyword-only like the groups' (typer passes every value by name)
            params.append(p.replace(kind=KEYWORD))
    names = [p.name for p in params]
    if clash := sorted({n for n in names if names.count(n) > 1}):
        raise TypeError(f"{command.__name__}: options declared twice: {', '.join(clash)}")

    @functools.wraps(command)
    def run(**values: Any) -> Any:
        for name, (kind, fields) in groups.items():
            values[name] = kind.from_values({f: values.pop(f) for f in fields})
        return command(**values)

    run.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    del run.__wrapped__  # typer must read the signature above, not the command's
    return run
