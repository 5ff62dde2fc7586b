"""One declaration per method setting, from which every surface is derived.

A method's settings are the fields of its config dataclass, each declared with
:func:`setting`: its default, a help line, the values it may take, and whether a remote client
of the HTTP service may set it per request. From that one declaration come:

* the named options of ``searchain ask`` and ``searchain serve`` (``cli/method_flags.py``),
* ``-O KEY=VALUE`` and the Python API's keyword options (checked by name, type and range when
  the method is built: :func:`config_from_options`),
* the HTTP API's per-request allow-list (``server/request_options.py``'s ``AskOptions``),
* ``searchain settings`` and ``GET /v1/methods``, which list them.

Settings that name files, models or endpoints (a reader checkpoint, a tools file, a template)
are declared ``remote=False``: only the operator or a local user sets them.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

_KEY = "setting"
_SCALARS = (bool, int, float, str)


@dataclass(frozen=True)
class Setting:
    """A method setting: everything any surface needs to offer, check and document it."""

    name: str
    type: type  # bool, int, float or str
    default: Any
    help: str
    nullable: bool = False  # None is a value (e.g. theta: "the reader's calibrated value")
    choices: tuple[Any, ...] = ()
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    remote: bool = True  # an HTTP client may set it per request
    remote_le: float | None = None  # a tighter upper bound for HTTP clients (cost)
    flag: str | None = None  # a named option of `searchain ask` (and serve): --FLAG

    def check(self, value: Any) -> Any:
        """``value`` if it is valid for this setting (an int for a float becomes a float),
        else ValueError naming the setting and what it takes."""
        if value is None:
            if self.nullable:
                return None
            raise ValueError(f"{self.name} needs a value ({self.kind()})")
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.type is str and isinstance(value, os.PathLike):  # a file named from Python
            value = os.fspath(value)
        ok = isinstance(value, self.type) and not (
            self.type is not bool and isinstance(value, bool)
        )
        if not ok:
            raise ValueError(f"{self.name} takes {self.kind()}, not {value!r}")
        if self.choices and value not in self.choices:
            raise ValueError(
                f"{self.name} is one of {', '.join(map(str, self.choices))}, not {value!r}"
            )
        if self.ge is not None and value < self.ge:
            raise ValueError(f"{self.name} must be at least {_num(self.ge)}, not {value}")
        if self.gt is not None and value <= self.gt:
            raise ValueError(f"{self.name} must be more than {_num(self.gt)}, not {value}")
        if self.le is not None and value > self.le:
            raise ValueError(f"{self.name} must be at most {_num(self.le)}, not {value}")
        return value

    def kind(self) -> str:
        """What values it takes, in words: ``an integer >= 1``, ``one of llm, reader``."""
        if self.choices:
            text = "one of " + ", ".join(map(str, self.choices))
        else:
            text = {bool: "true or false", int: "an integer", float: "a number"}.get(
                self.type, "text"
            )
            bounds = [
                f">= {_num(self.ge)}" if self.ge is not None else "",
                f"> {_num(self.gt)}" if self.gt is not None else "",
                f"<= {_num(self.le)}" if self.le is not None else "",
            ]
            if any(bounds):
                text += " " + " and ".join(b for b in bounds if b)
        return text + (" (or null)" if self.nullable else "")

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["type"] = self.type.__name__
        out["choices"] = list(self.choices)
        return {k: v for k, v in out.items() if v not in (None, [], ())} | {
            "default": self.default,
            "remote": self.remote,
        }


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def setting(
    default: Any,
    help: str,
    *,
    choices: Iterable[Any] = (),
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    remote: bool = True,
    remote_le: float | None = None,
    flag: str | None = None,
    before: Any = dataclasses.MISSING,
) -> Any:
    """A config dataclass field declared as a setting. ``before``: the value the code had in
    effect before the setting existed (a run manifest leaves the setting out at that value,
    so runs made before it still resume: ``eval/methods.describe``)."""
    spec = dict(
        help=help,
        choices=tuple(choices),
        ge=ge,
        gt=gt,
        le=le,
        remote=remote,
        remote_le=remote_le,
        flag=flag,
    )
    metadata: dict[str, Any] = {_KEY: spec}
    if before is not dataclasses.MISSING:
        metadata["before"] = before
    return field(default=default, metadata=metadata)


def option(name: str, type_: type, default: Any, help: str, **spec: Any) -> Setting:
    """A setting that is not a config field: one the method's builder consumes (a reader
    checkpoint, a tools file, an NLI judge), declared beside the builder."""
    nullable = spec.pop("nullable", default is None)
    return Setting(name=name, type=type_, default=default, help=help, nullable=nullable, **spec)


def _scalar(hint: Any) -> tuple[type, bool]:
    """``int | None`` -> (int, True)."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and inner[0] in _SCALARS:
            return inner[0], True
    if hint in _SCALARS:
        return hint, False
    raise TypeError(f"a setting is a bool, int, float or str (or None), not {hint!r}")


@functools.cache
def settings_of(config: type) -> tuple[Setting, ...]:
    """The settings a config dataclass declares, in field order."""
    hints = typing.get_type_hints(config)
    out = []
    for f in dataclasses.fields(config):
        spec = f.metadata.get(_KEY)
        if spec is None:
            continue
        kind, nullable = _scalar(hints[f.name])
        out.append(Setting(name=f.name, type=kind, default=f.default, nullable=nullable, **spec))
    return tuple(out)


def check_settings(config: Any) -> None:
    """Check every declared setting of a config instance (call it in ``__post_init__``)."""
    for s in settings_of(type(config)):
        setattr(config, s.name, s.check(getattr(config, s.name)))


C = TypeVar("C")


def config_from_options(config: type[C], options: Mapping[str, Any], method: str) -> C:
    """``config(**options)``, with an unknown name refused the way every surface words it."""
    known = {s.name for s in settings_of(config)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(unknown_message(method, unknown, known))
    return config(**options)


def unknown_message(method: str, unknown: Iterable[str], known: Iterable[str]) -> str:
    names = ", ".join(sorted(unknown))
    return (
        f"{method} has no setting {names} (its settings: {', '.join(sorted(known))}; "
        f"`searchain settings {method}` describes them)"
    )


def merged(groups: Mapping[str, Iterable[Setting]]) -> dict[str, list[tuple[str, Setting]]]:
    """Each setting name with the (method, setting) pairs that declare it, for surfaces that
    offer one option for every method (a CLI flag, an HTTP field)."""
    out: dict[str, list[tuple[str, Setting]]] = {}
    for method, settings in groups.items():
        for s in settings:
            out.setdefault(s.name, []).append((method, s))
    return out
