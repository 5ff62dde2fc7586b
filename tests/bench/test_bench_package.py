"""bench/ is a package that runs from a fresh clone: every module answers ``python -m
bench.<name> --help`` from the repository root (searchain imported as installed), none edits
the import path, and no test imports one (a test runs a bench as its user does; what both
need lives in ``src/searchain``)."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
TESTS = ROOT / "tests"
NOT_RUN = {"__init__", "kit"}  # the package and what the benches share
MODULES = sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in NOT_RUN)

# What ``python -m bench.<name> --help`` does (runpy, the module as __main__, its argv), for
# several modules in one process: each process imports searchain once, not once a module.
HELP = r"""
import contextlib, io, json, runpy, sys
out = {}
for name in sys.argv[1:]:
    sys.argv, said, err, code = [name, "--help"], io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(err):
        try:
            runpy.run_module(f"bench.{name}", run_name="__main__", alter_sys=True)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else int(e.code is not None)
        except BaseException as e:  # an import that fails, a module that breaks
            code = 1
            print(f"{type(e).__name__}: {e}", file=err)
    out[name] = {"rc": code, "stdout": said.getvalue(), "stderr": err.getvalue()}
json.dump(out, sys.__stdout__)
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, dict]:
    """Every module's ``--help``: its exit status and what it printed, from a handful of
    processes started in the repository root, as many at once as there are cores."""
    workers = max(2, os.cpu_count() or 2)
    chunks = [MODULES[i :: 2 * workers] for i in range(2 * workers)]

    def run(names: list[str]) -> dict[str, dict]:
        done = subprocess.run(
            [sys.executable, "-c", HELP, *names],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "COLUMNS": "100"},
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)

    found: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for part in pool.map(run, [c for c in chunks if c]):
            found.update(part)
    return found


def test_the_benches_are_found() -> None:
    assert {"quality", "reliability", "real_docs_answers", "tune"} <= set(MODULES)
    assert (BENCH / "__init__.py").is_file()


@pytest.mark.parametrize("name", MODULES)
def test_every_bench_module_answers_help(name: str, helps: dict[str, dict]) -> None:
    done = helps[name]
    assert done["rc"] == 0, done["stderr"][-2000:]
    assert done["stdout"].startswith("usage:"), done["stdout"][:500]


def _bench_sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted(BENCH.rglob("*.py"))}


def test_no_bench_edits_the_import_path() -> None:
    """A bench imports searchain as installed and other benches as ``bench.<name>``."""
    edits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path, text in _bench_sources().items()
        for n, line in enumerate(text.splitlines(), 1)
        if re.search(r"\bsys\.path\b|PYTHONPATH", line)
    ]
    assert not edits, "\n".join(edits)


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, module)`` of every import in a file, at any depth (relative ones skipped)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.lineno, node.module))
    return out


def bench_imports(path: Path, text: str, bench_names: set[str]) -> list[str]:
    """Where a test file imports a bench: ``bench``/``bench.x``, a bench module by its bare
    name, or a bench file loaded by its path."""
    found = [
        f"{path.name}:{line}: imports {module}"
        for line, module in _imported(ast.parse(text))
        if module.split(".")[0] in {"bench", *bench_names}
    ]
    for n, line in enumerate(text.splitlines(), 1):
        if re.search(r"spec_from_file_location|sys\.path\.(insert|append)", line) and re.search(
            r"['\"]bench['\"/]", line
        ):
            found.append(f"{path.name}:{n}: loads a bench by path: {line.strip()}")
    return found


def test_no_test_imports_a_bench() -> None:
    names = {p.stem for p in BENCH.glob("*.py")} - {"__init__"}
    found = [
        hit
        for path in sorted(TESTS.rglob("*.py"))
        if path != Path(__file__)  # the examples of the check below
        for hit in bench_imports(path, path.read_text(encoding="utf-8"), names)
    ]
    assert not found, "\n".join(found)


def test_the_import_check_sees_each_way_in() -> None:
    names = {"quality", "kit"}
    ways = [
        "from bench.quality import table\n",
        "import bench\n",
        "def f():\n    import quality\n",
        "from kit import ROOT\n",
        "spec = importlib.util.spec_from_file_location('q', ROOT / 'bench' / 'quality.py')\n",
        "sys.path.insert(0, str(ROOT / 'bench'))\n",
    ]
    for source in ways:
        assert bench_imports(Path("t.py"), source, names), source
    clean = "import subprocess\nsubprocess.run([sys.executable, '-m', 'bench.quality'])\n"
    assert bench_imports(Path("t.py"), clean, names) == []
