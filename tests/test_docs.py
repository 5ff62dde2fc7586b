"""The README is a front page and the docs are true to the code: links resolve (anchors too),
every ``searchain COMMAND --option`` written in them exists in that command's ``--help``, and
the README's two set-up commands are the ones CI and a first run use."""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^[ \t]*```([\w-]*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.M | re.S)
INLINE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SHELL = {"bash", "sh", "shell", "console", "zsh"}
SEPARATORS = {"&&", "||", "|", ";", "&"}


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def fences(text: str) -> list[tuple[str, str]]:
    return [(m.group(1).lower(), m.group(2)) for m in FENCE.finditer(text)]


def prose(text: str) -> str:
    """The text outside fenced blocks, with inline code spans blanked (they hold no links)."""
    return INLINE.sub("``", FENCE.sub("", text))


def slug(heading: str) -> str:
    # GitHub's anchors: markup gone, lower case, punctuation dropped (word characters, hyphens
    # and spaces kept), spaces to hyphens.
    text = re.sub(r"[`*]", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@functools.cache
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def test_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 120, f"README.md has {len(lines)} lines; move details to docs/"
    assert (ROOT / "docs" / "index.md").exists()
    assert "docs/index.md" in prose(README.read_text(encoding="utf-8"))


def test_readme_tables_are_copied_from_the_results_page() -> None:
    # The teaser's numbers are moved, never retyped: docs/results.md holds the same rows, and
    # its tables are recomputed from the committed runs (tests/eval/test_results_table.py for the
    # embedded model's, tests/bench/test_quality.py's pages for the 1.5B model's).
    section = prose(README.read_text(encoding="utf-8")).split("\n## Results\n", 1)[1]
    rows = [line for line in section.split("\n## ", 1)[0].splitlines()
            if line.startswith("|") and re.search(r"\d", line)]  # fmt: skip
    results = prose((ROOT / "docs" / "results.md").read_text(encoding="utf-8")).splitlines()
    assert len(rows) >= 3, rows  # the front page's table: one row an arm
    assert [r for r in rows if r not in results] == []


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    assert not broken, f"{name(page)}: " + "; ".join(broken)


@functools.cache
def cli_help() -> dict[str, str]:
    """Every command's and sub-command's ``--help``, from the real app, in one process.

    Plain (non-rich) help is parsed: one option per line, never truncated by the terminal."""
    script = r"""
import json, re, sys
from typer.testing import CliRunner
from searchain.cli import app
runner, out, todo = CliRunner(), {}, [[]]
while todo:
    path = todo.pop()
    result = runner.invoke(app, [*path, "--help"])
    out[" ".join(path)] = result.output if result.exit_code == 0 else ""
    section = result.output.partition("\nCommands:\n")[2].split("\n\n")[0]
    todo += [[*path, m] for m in re.findall(r"^  ([a-z][a-z0-9-]*)(?:\s{2,}|$)", section, re.M)]
json.dump(out, sys.stdout)
"""
    env = {**os.environ, "TYPER_USE_RICH": "0", "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def help_options(help_text: str) -> set[str]:
    heads = re.findall(r"^  (-.*?)(?:\s{2,}|$)", help_text, re.M)  # "  -i, --index <path>  ..."
    return {o for h in heads for o in re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", h.split("<")[0])}


def shell_snippets(text: str) -> list[str]:
    """Shell code of fenced shell blocks (continuation lines joined) and inline code spans."""
    out = []
    for lang, body in fences(text):
        if lang in SHELL:
            out += body.replace("\\\n", " ").splitlines()
    out += [span.replace("\n", " ") for span in INLINE.findall(FENCE.sub("", text))]
    return out


def searchain_commands(snippet: str) -> list[list[str]]:
    """The argument lists of every ``searchain ...`` command in a line of shell."""
    try:
        tokens = shlex.split(snippet, comments=True)
    except ValueError:  # an unbalanced quote in prose: words are enough here
        tokens = snippet.split()
    commands, segment = [], []
    for token in [*tokens, ";"]:
        if token not in SEPARATORS:
            segment.append(token)
            continue
        while segment and re.match(r"^[A-Za-z_]\w*=", segment[0]):  # VAR=value prefixes
            segment.pop(0)
        if segment and (segment[0] == "searchain" or segment[0].endswith("/searchain")):
            commands.append(segment[1:])
        segment = []
    return commands


def documented_commands() -> list[tuple[str, str, list[str]]]:
    out = []
    for page in PAGES:
        for snippet in shell_snippets(page.read_text(encoding="utf-8")):
            out += [(name(page), snippet.strip(), args) for args in searchain_commands(snippet)]
    return out


def test_the_docs_show_searchain_commands() -> None:
    # The parser finds what it checks: a regression here would make the next test vacuous.
    found = {tuple(args[:2]) for _, _, args in documented_commands()}
    for command in ("ask", "index", "search", "eval", "report", "serve", "serve-index"):
        assert any(c[0] == command for c in found if c), command
    assert ("mirror", "serve") in found


def test_every_documented_option_is_in_the_commands_help() -> None:
    helps = cli_help()
    groups = {path for path, text in helps.items() if "\nCommands:\n" in text}
    wrong = []
    for page, snippet, args in documented_commands():
        path: list[str] = []
        options = []
        for arg in args:
            arg = arg.strip("[]")
            if arg == "--":
                break
            if re.match(r"^--?[A-Za-z][\w-]*(=|$)", arg):
                options.append(arg.split("=")[0])
            elif " ".join(path) in groups and (not path or arg.islower()):
                path.append(arg)  # a command, or a group's sub-command
        command = " ".join(path)
        if not path or path[0].isupper():  # `searchain --help`, `searchain COMMAND --help`
            continue
        if command not in helps or not helps[command]:
            wrong.append(f"{page}: `searchain {command}` is not a command ({snippet})")
            continue
        known = help_options(helps[command])
        wrong += [
            f"{page}: `searchain {command} {o}` is not in its --help ({snippet})"
            for o in options
            if o not in known
        ]
    assert not wrong, "\n".join(wrong)


def test_help_parsing_reads_real_options() -> None:
    ask = help_options(cli_help()["ask"])
    assert {"--index", "-i", "-k", "-O", "--no-verification", "--verification"} <= ask
    assert "--no-such-option" not in ask


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_python_examples_import(page: Path) -> None:
    for lang, body in fences(page.read_text(encoding="utf-8")):
        if lang != "python":
            continue
        for module, names in re.findall(r"^from ([\w.]+) import ([\w, ]+)$", body, re.M):
            mod = importlib.import_module(module)
            for attr in names.split(","):
                assert hasattr(mod, attr.strip()), f"{name(page)}: {module}.{attr.strip()}"


def test_readme_starts_with_the_two_setup_commands() -> None:
    lang, block = fences(README.read_text(encoding="utf-8"))[0]
    first, second = block.splitlines()  # exactly two commands
    assert lang == "bash"
    # The second is what CI runs on a clean checkout.
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not re.match(r"^\s*(#|set |cd )", line)
    ]
    assert ci == [second]
    assert second.startswith("scripts/install.sh test && ")
    # The first installs an extra that exists into the .venv the installer makes, then asks
    # a question with the installed command (its options are checked against --help above).
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    m = re.match(r"^scripts/install\.sh ([\w,]+) && \.venv/bin/searchain ask ", first)
    assert m, first
    assert set(m.group(1).split(",")) <= set(extras)
    install = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    assert "-m venv .venv" in install and os.access(ROOT / "scripts" / "install.sh", os.X_OK)
    assert project["scripts"]["searchain"].startswith("searchain.cli:")
