"""``searchain settings``: every setting of each method, from its one declaration."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from searchain.cli.common import JsonOpt, console, fail


def settings(
    method: Annotated[
        str | None,
        typer.Argument(help="A method (searchain, rebel, thinkcite, ...); default: all."),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """List a method's settings: name, values, default, whether an HTTP client may set it,
    and what it does. Set one with its option (ask --r-max 3), -O NAME=VALUE, a keyword of
    the Python API (ask(..., r_max=3)) or, where "remote" says so, an HTTP request's
    "options"."""
    from searchain.methods.catalog import canonical_methods, method_settings

    names = [method] if method else list(canonical_methods())
    try:
        found = {m: method_settings(m) for m in names}
    except ValueError as e:
        fail(str(e))
    if json_out:
        out = {m: [s.to_dict() for s in ss] for m, ss in found.items()}
        print(json.dumps(out, indent=2, default=str))
        return
    for m, ss in found.items():
        table = Table(title=f"[bold]{m}[/]", title_justify="left", show_lines=False)
        for col in ("setting", "option", "values", "default", "remote"):
            table.add_column(col, no_wrap=col != "values")
        table.add_column("what it does", ratio=1, overflow="fold")
        for s in ss:
            table.add_row(
                s.name,
                f"--{s.flag}" if s.flag else "-O",
                escape(s.kind()),
                escape(str(s.default)),
                "yes" if s.remote else "no",
                escape(s.help),
            )
        console.print(table)
