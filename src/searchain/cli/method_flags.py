"""Named CLI options derived from the methods' settings (``methods/settings.py``).

A setting declared with ``flag=`` becomes ``--FLAG`` on ``searchain ask`` (every flagged
setting: :class:`MethodFlags`) and on ``serve`` and ``mcp`` (the operator's, those no remote
client may set: :class:`OperatorFlags`), option groups made when the app is built, with the
help, type and choices of its declaration; a setting two methods share
(``--dedup-threshold``) is one option that reaches whichever method runs. Left out, an
option means "the method's default", so a flag given to a method that does not take it is
an error, not ignored. Every setting, flagged or not, is also reachable with
``-O NAME=VALUE``. ``--method`` is a group here too (:class:`MethodChoice`), its help every
registered method's summary.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Self

import typer

from searchain.cli.option_groups import OptionGroup
from searchain.cli.serve_options import DefaultMethodOpt
from searchain.methods.catalog import canonical_methods, method_settings, resolve
from searchain.methods.settings import Setting, merged

PARAM = "setting__"  # the prefix of derived parameters (no clash with a command's own)


def flagged(operator_only: bool = False) -> dict[str, list[tuple[str, Setting]]]:
    """Flagged settings by setting name, with the methods that declare them."""
    by_name = merged({m: method_settings(m) for m in canonical_methods()})
    out = {}
    for name, pairs in by_name.items():
        pairs = [(m, s) for m, s in pairs if s.flag]
        if pairs and (not operator_only or not any(s.remote for _, s in pairs)):
            out[name] = pairs
    return out


def _label(method: str) -> str:
    return resolve(method)[0].group


def _help(pairs: list[tuple[str, Setting]]) -> str:
    if len(pairs) == 1:
        _, s = pairs[0]
        return f"{s.help} [dim](default {s.default})[/]" if s.default is not None else s.help
    if len({s.help for _, s in pairs}) == 1:
        defaults = ", ".join(f"{_label(m)} {s.default}" for m, s in pairs)
        return f"{pairs[0][1].help} [dim](default: {defaults})[/]"
    parts = []
    for m, s in pairs:
        default = f" [dim](default {s.default})[/]" if s.default is not None else ""
        parts.append(f"[bold]{_label(m)}[/]: {s.help}{default}")
    return " ".join(parts)


def _parameter(name: str, pairs: list[tuple[str, Setting]]) -> inspect.Parameter:
    setting = pairs[0][1]
    flag = setting.flag
    groups = {_label(m) for m, _ in pairs}
    panel = f"{groups.pop()} settings" if len(groups) == 1 else "Settings of several methods"
    common: dict[str, Any] = dict(help=_help(pairs), rich_help_panel=panel, show_default=False)
    kind: Any = setting.type
    if setting.type is bool:
        info = typer.Option(f"--{flag}/--no-{flag}", **common)
    else:
        if setting.choices and setting.type is str:
            kind = Literal[tuple(dict.fromkeys(c for _, s in pairs for c in s.choices))]
        info = typer.Option(f"--{flag}", **common)
    return inspect.Parameter(
        PARAM + name,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[kind | None, info],
    )


def method_help() -> str:
    """The ``--method`` help: every method's summary, from its record."""
    from searchain.methods.catalog import records

    parts = []
    for r in records():
        also = [*r.aliases, *r.variants]
        parts.append(
            f"[bold]{r.name}[/] ({r.summary})" + (f"; also {', '.join(also)}" if also else "")
        )
    return "; ".join(parts) + "."


@dataclass(frozen=True)
class MethodChoice(OptionGroup):
    """``ask``'s ``--method``, described by the methods registered when the app is built."""

    method: str = "searchain"

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        (param,) = super().parameters()
        return [param.replace(annotation=Annotated[str, typer.Option(help=method_help())])]

    def spec_fields(self) -> dict[str, Any]:
        return {"method": self.method}


@dataclass(frozen=True)
class ServedMethod(OptionGroup):
    """``serve``'s and ``mcp``'s ``--method``: the default of requests that name none."""

    method: DefaultMethodOpt = "searchain"

    def spec_fields(self) -> dict[str, Any]:
        return {"method": self.method}


@dataclass(frozen=True)
class MethodFlags(OptionGroup):
    """A named option per flagged setting of every method; ``given`` holds those given, by
    setting name (left out, an option means the method's default)."""

    given: Mapping[str, Any] = field(default_factory=dict)
    operator_only: ClassVar[bool] = False

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        return [_parameter(n, pairs) for n, pairs in flagged(cls.operator_only).items()]

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Self:
        given = {k.removeprefix(PARAM): v for k, v in values.items() if v is not None}
        return cls(given)

    def options_of(self, method: str) -> dict[str, Any]:
        """The given flags as ``method``'s options (ValueError: a flag of another method)."""
        return flags_for(method, dict(self.given))


@dataclass(frozen=True)
class OperatorFlags(MethodFlags):
    """``serve``'s and ``mcp``'s flags: the settings no remote client may set."""

    operator_only: ClassVar[bool] = True

    def per_method(self) -> dict[str, dict[str, Any]]:
        """The given flags as per-method options: each reaches every method that takes it."""
        return operator_flags(dict(self.given))


def flags_for(method: str, given: dict[str, Any]) -> dict[str, Any]:
    """The given flags as ``method``'s options; a flag of another method is an error."""
    takes = {s.name for s in method_settings(method)}
    wrong = [n for n in given if n not in takes]
    if wrong:
        owners = flagged()
        said = ", ".join(
            f"--{owners[n][0][1].flag} ({' and '.join(m for m, _ in owners[n])})" for n in wrong
        )
        raise ValueError(
            f"{said} {'is a setting' if len(wrong) == 1 else 'are settings'} of another "
            f"method, not of {resolve(method)[0].name} "
            f"(`searchain settings {method}` lists its own)"
        )
    return dict(given)


def operator_flags(given: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``serve``'s flags as per-method options: each reaches every method that takes it."""
    out: dict[str, dict[str, Any]] = {}
    owners = flagged(operator_only=True)
    for name, value in given.items():
        for method, _ in owners[name]:
            out.setdefault(method, {})[name] = value
    return out
