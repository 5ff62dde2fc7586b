"""``--help`` that stays readable in a narrow terminal.

Typer's rich help lays every option out as one table row: option names, their ``--no-``
forms, the type and the help text side by side. In 80 columns the first columns take most
of the width, the help text is squeezed into a sliver and any word longer than the sliver is
cut with "…" (``llm-url:base=htt…``). Below :data:`RICH_HELP_MIN_COLUMNS` the commands use
the plain help of click instead, which wraps the text under long option names and cuts nothing;
the rich markup in help strings (``[bold]…[/]``) is rendered to plain text for it.
"""

from __future__ import annotations

import shutil
from typing import Any

from rich.errors import MarkupError
from rich.text import Text

RICH_HELP_MIN_COLUMNS = 100


def terminal_columns() -> int:
    """The width help is laid out in ($COLUMNS first, as rich and click read it)."""
    return shutil.get_terminal_size(fallback=(80, 24)).columns


def plain_text(markup: str | None) -> str | None:
    """``markup`` as the text rich would print, without its styles."""
    if not markup:
        return markup
    try:
        return Text.from_markup(markup).plain
    except MarkupError:  # not markup after all: keep it as written
        return markup


def use_plain_help(command: Any) -> None:
    """Switch ``command`` and every subcommand to click's plain help, in place.

    Typed loosely on purpose: Typer builds its commands on the copy of click it carries
    (``typer._click``), whose classes are not ``click``'s."""
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None
    command.help = plain_text(command.help)
    command.short_help = plain_text(command.short_help)
    for param in command.params:
        if hasattr(param, "help"):  # options, and typer's arguments
            param.help = plain_text(param.help)
    for sub in getattr(command, "commands", {}).values():
        use_plain_help(sub)
