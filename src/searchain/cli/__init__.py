"""The ``searchain`` command line.

searchain ask "Who portrayed Corliss Archer in Kiss and Tell?"     # offline, demo corpus
searchain index corpus.jsonl --out my-index                       # your own corpus
searchain ask "..." --index my-index --llm openai --model gpt-4o-mini --api chat
searchain search "Corliss Archer" --index my-index -k 5 --json

One module per command or command group (:mod:`.index`, :mod:`.ask`, :mod:`.evaluate`,
:mod:`.serve`, :mod:`.mcp`, :mod:`.mirror`, :mod:`.settings`), the shared consoles, errors,
option types and retriever opening in :mod:`.common`, the option groups the answering
commands share in :mod:`.model_options` (spread into options by :mod:`.option_groups`), the
options derived from the methods' settings in :mod:`.method_flags`; the commands are
registered here, in the order ``--help`` lists them.
"""

from __future__ import annotations

import sys

import typer

from searchain.cli.ask import ask, show_trace
from searchain.cli.calibrate import calibrate
from searchain.cli.common import console, err
from searchain.cli.evaluate import eval_, report
from searchain.cli.index import index, search
from searchain.cli.mcp import mcp
from searchain.cli.mirror import mirror_app
from searchain.cli.narrow_help import RICH_HELP_MIN_COLUMNS, terminal_columns, use_plain_help
from searchain.cli.option_groups import grouped
from searchain.cli.serve import serve, serve_index
from searchain.cli.settings import settings


def build_app() -> typer.Typer:
    """The command line as the method records declare it now: the answering commands' option
    groups are spread into options (``option_groups.py``), ``ask``'s with a named option per
    flagged setting of every method, ``serve``'s and ``mcp``'s the operator's
    (``method_flags.py``)."""
    app = typer.Typer(
        help=(
            "Answer knowledge-intensive questions with an LLM working together with a search "
            "engine, and see where every step of the answer came from.\n\n"
            "With no options everything runs offline: an embedded model "
            "(Qwen2.5-Coder-1.5B-Instruct, or $SEARCHAIN_MODEL) and a BM25 index of the "
            "bundled HotpotQA demo corpus (built on first use)."
        ),
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode="rich",
    )
    app.command()(index)
    app.command()(search)
    app.command()(grouped(ask))
    app.command()(settings)
    app.command("serve-index")(serve_index)
    app.command("eval")(grouped(eval_))
    app.command()(report)
    app.command()(calibrate)
    app.add_typer(mirror_app, name="mirror")
    app.command("serve")(grouped(serve))
    app.command("mcp")(grouped(mcp))
    return app


app = build_app()


def main() -> None:
    try:
        if terminal_columns() < RICH_HELP_MIN_COLUMNS:
            command = typer.main.get_command(app)
            use_plain_help(command)
            command(prog_name="searchain")
        else:
            app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


__all__ = ["app", "build_app", "console", "err", "main", "show_trace"]
