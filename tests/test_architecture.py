"""The layering of src/searchain, as docs/architecture.md writes it, and the size of its files.

The layer table of docs/architecture.md is the one place the order lives: this test parses
it, maps every import under src/searchain (found with ``ast``, so imports inside functions
count) to the unit it names, and fails on an import from a lower layer to a higher one (or
sideways within a layer), on a circle between units and on any source file over 400 lines.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "searchain"
DOC = ROOT / "docs" / "architecture.md"
MAX_LINES = 400

# A row of the layer table: "| 5 | `scoring` | ... |" (units are the backticked names).
_ROW = re.compile(r"^\|\s*(\d+)\s*\|([^|]*)\|")


def parse_layers(text: str) -> dict[str, int]:
    """``{unit: layer}`` from the table under "## Layers" of docs/architecture.md."""
    section = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    layers: dict[str, int] = {}
    for line in section.splitlines():
        m = _ROW.match(line.strip())
        if not m:
            continue
        for unit in re.findall(r"`([a-z_]+)`", m.group(2)):
            if unit in layers:
                raise ValueError(f"{unit} is listed in layers {layers[unit]} and {m.group(1)}")
            layers[unit] = int(m.group(1))
    return layers


def units_on_disk(package: Path = PACKAGE) -> set[str]:
    """The top-level modules and packages of the package (``data`` is one, without code)."""
    out = set()
    for child in package.iterdir():
        if child.name.startswith(("_", ".")) or child.name.endswith(".egg-info"):
            continue
        if child.suffix == ".py" or (
            child.is_dir() and any("__pycache__" not in f.parts for f in child.rglob("*.*"))
        ):
            out.add(child.stem)
    return out


def _module_name(path: Path, package: Path) -> tuple[str, bool]:
    """Dotted name of a source file, and whether it is a package's ``__init__``."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    is_init = parts[-1] == "__init__"
    if is_init:
        parts = parts[:-1]
    return ".".join(parts), is_init


def imported_modules(source: str, module: str, is_init: bool) -> Iterator[tuple[int, str]]:
    """``(line, dotted name)`` of every import in ``source``, at any depth; relative imports
    resolved; ``from pkg import name`` yields ``pkg.name`` (name may be a submodule)."""
    package = module if is_init else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def unit_of(dotted: str, units: set[str]) -> str | None:
    """The unit an imported name belongs to (None: not this package, or the root itself)."""
    parts = dotted.split(".")
    if parts[0] != "searchain" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in units else None


def import_edges(package: Path = PACKAGE) -> tuple[list[str], dict[tuple[str, str], list[str]]]:
    """Imports of the root ``__init__`` (should be none), and ``{(from unit, to unit):
    ["file:line", ...]}`` for every import between two different units."""
    units = units_on_disk(package)
    root_imports: list[str] = []
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        module, is_init = _module_name(path, package)
        where = path.relative_to(package.parent.parent).as_posix()
        for line, dotted in imported_modules(path.read_text(encoding="utf-8"), module, is_init):
            target = unit_of(dotted, units)
            if target is None:
                continue
            if module == "searchain":
                root_imports.append(f"{where}:{line} imports {dotted}")
                continue
            source = module.split(".")[1]
            places = edges.setdefault((source, target), []) if source != target else None
            if places is not None and f"{where}:{line}" not in places:
                places.append(f"{where}:{line}")
    return root_imports, edges


def eager_root_imports(package: Path = PACKAGE) -> list[str]:
    """Imports of the package that the root ``__init__`` runs when it is imported (those at
    module level, outside any function)."""
    tree = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    out = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("searchain"):
            out.append(node.module or "")
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("searchain")]
    return out


def find_cycle(edges: set[tuple[str, str]]) -> list[str] | None:
    """One circle in the directed graph, as ``[a, b, ..., a]``, or None."""
    graph: dict[str, list[str]] = {}
    for a, b in sorted(edges):
        graph.setdefault(a, []).append(b)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def layer_violations(edges: dict[tuple[str, str], list[str]], layers: dict[str, int]) -> list[str]:
    """Every import whose target is not in a strictly lower layer than its source."""
    out = []
    for (a, b), places in sorted(edges.items()):
        if layers[b] >= layers[a]:
            way = "up" if layers[b] > layers[a] else "sideways"
            out.append(
                f"{a} (layer {layers[a]}) imports {b} (layer {layers[b]}, {way}): "
                + ", ".join(places[:5])
                + (f" and {len(places) - 5} more" if len(places) > 5 else "")
            )
    return out


# -- the tests on this code base ------------------------------------------------------------


@pytest.fixture(scope="module")
def layers() -> dict[str, int]:
    return parse_layers(DOC.read_text(encoding="utf-8"))


def test_every_unit_has_a_layer(layers: dict[str, int]) -> None:
    on_disk = units_on_disk()
    assert not on_disk - set(layers), f"not in docs/architecture.md: {on_disk - set(layers)}"
    assert not set(layers) - on_disk, f"listed but not in src: {set(layers) - on_disk}"


def test_the_picture_shows_every_unit(layers: dict[str, int]) -> None:
    text = DOC.read_text(encoding="utf-8")
    picture = text.split("## The picture", 1)[1].split("```")[1]
    drawn = {}
    for line in picture.splitlines():
        m = re.match(r"\s*(\d+)\s+(.*)", line)
        if m:
            for unit in re.findall(r"[a-z_]+", m.group(2).split("....")[0]):
                drawn[unit] = int(m.group(1))
    assert drawn == layers, "the picture and the table of docs/architecture.md disagree"


def test_imports_only_run_downward(layers: dict[str, int]) -> None:
    root_imports, edges = import_edges()
    # The root is the API: it hands out searchain.api's names, imported when first asked for
    # (inside __getattr__), never when the package is imported.
    assert all(i.endswith("imports searchain.api") for i in root_imports), root_imports
    assert not eager_root_imports(), "searchain/__init__.py must import nothing at load time"
    violations = layer_violations(edges, layers)
    assert not violations, "imports against the layers of docs/architecture.md:\n" + "\n".join(
        violations
    )


def test_no_circle_between_units() -> None:
    _, edges = import_edges()
    cycle = find_cycle(set(edges))
    assert cycle is None, "a circle of imports: " + " -> ".join(cycle or [])


def test_no_source_file_is_over_400_lines() -> None:
    sizes = sorted(
        ((len(p.read_text(encoding="utf-8").splitlines()), p) for p in PACKAGE.rglob("*.py")),
        reverse=True,
    )
    over = [(n, p) for n, p in sizes if n > MAX_LINES]
    biggest = "\n".join(f"{n:6d} {p.relative_to(ROOT)}" for n, p in sizes[:10])
    assert not over, f"{len(over)} file(s) over {MAX_LINES} lines; the biggest:\n{biggest}"


MAX_FUNCTION_LINES = 80


def long_functions(package: Path = PACKAGE) -> list[tuple[int, str]]:
    """``(lines, "file:line name")`` of every function over :data:`MAX_FUNCTION_LINES`,
    from its ``def`` to its last line (a CLI command's option declarations count)."""
    out = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    where = (
                        f"{path.relative_to(package.parent).as_posix()}:{node.lineno} {node.name}"
                    )
                    out.append((n, where))
    return sorted(out, reverse=True)


def test_no_function_is_over_80_lines() -> None:
    """Functions a reader can hold: split by meaning, not packed."""
    over = long_functions()
    listed = "\n".join(f"{n:6d} {where}" for n, where in over)
    assert not over, f"{len(over)} function(s) over {MAX_FUNCTION_LINES} lines:\n{listed}"


def test_no_code_is_packed_past_the_formatter() -> None:
    """``# fmt: skip`` kept lines packed so files stayed under 400 lines; files are split by
    concept instead, and ruff formats every line."""
    packed = [
        f"{p.relative_to(ROOT).as_posix()}:{i}"
        for p in sorted(PACKAGE.rglob("*.py"))
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "fmt: skip" in line or "fmt: off" in line
    ]
    assert not packed, "formatter turned off at: " + ", ".join(packed)


def test_the_checks_see_long_and_packed_code(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(85))
    package = _fake_package(tmp_path, {"long.py": f"def long():\n{body}", "ok.py": "x = 1\n"})
    assert [w.split(" ")[1] for _, w in long_functions(package)] == ["long"]
    assert eager_root_imports(package) == []
    (package / "__init__.py").write_text("from searchain import api\n")
    assert eager_root_imports(package) == ["searchain"]


def test_old_import_paths_re_export_the_new_homes() -> None:
    import searchain.eval as ev

    for name in ("cover_em", "citation_scores", "skc", "efficiency", "load_dataset"):
        assert getattr(ev, name) is not None


# -- the checker itself, on a made-up package -----------------------------------------------


def _fake_package(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "src" / "searchain"
    for name, source in {"__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return package


def test_checker_catches_what_main_had(tmp_path: Path) -> None:
    """The circle cli <-> server (server/command.py took cli's helpers inside a function)
    and scoring run upward from methods, in the shapes main had them."""
    package = _fake_package(
        tmp_path,
        {
            "types.py": "",
            "cli.py": "from searchain.server.command import serve\n",
            "server/__init__.py": "",
            "server/command.py": "def serve():\n    from searchain.cli import _fail\n",
            "methods/__init__.py": "",
            "methods/searchain.py": "from searchain import types\n",
            "eval/__init__.py": "",
            "eval/metrics.py": "def skc():\n    from ..methods.searchain import skc\n",
            "methods/thinkcite/__init__.py": "",
            "methods/thinkcite/reward.py": "from ...eval.metrics import NLI\n",
        },
    )
    layers = {"types": 0, "methods": 8, "eval": 9, "server": 10, "cli": 11}
    root_imports, edges = import_edges(package)
    assert not root_imports
    assert set(edges) == {
        ("cli", "server"),
        ("server", "cli"),
        ("methods", "types"),
        ("eval", "methods"),
        ("methods", "eval"),
    }
    assert edges[("server", "cli")] == ["src/searchain/server/command.py:2"]
    violations = layer_violations(edges, layers)
    assert [v.split(" imports ")[0] for v in violations] == [
        "methods (layer 8)",
        "server (layer 10)",
    ]
    cycle = find_cycle(set(edges))
    assert cycle is not None and cycle[0] == cycle[-1] and len(cycle) == 3


def test_checker_sees_sideways_imports_and_root_imports(tmp_path: Path) -> None:
    package = _fake_package(
        tmp_path,
        {"__init__.py": "from searchain import text\n", "text.py": "import searchain.types\n",
         "types.py": ""},
    )  # fmt: skip
    root_imports, edges = import_edges(package)
    assert root_imports == ["src/searchain/__init__.py:1 imports searchain.text"]
    assert layer_violations(edges, {"text": 0, "types": 0}) == [
        "text (layer 0) imports types (layer 0, sideways): src/searchain/text.py:1"
    ]
    assert find_cycle(set(edges)) is None


def test_parse_layers_reads_the_table() -> None:
    doc = "# x\n\n## Layers\n\n| layer | units |\n|---|---|\n| 1 | `a`, `b` | x |\n| 0 | `c` |\n"
    assert parse_layers(doc + "\n## Next\n| 9 | `z` |\n") == {"a": 1, "b": 1, "c": 0}
    with pytest.raises(ValueError, match="listed in layers"):
        parse_layers(doc + "| 2 | `a` |\n")
