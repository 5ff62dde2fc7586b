"""What issue 48 asked to hold in ``src/``, checked on every run so it keeps holding: the
server runs what ``assemble`` returns (it keeps no method of its own and applies no
abstention itself), no surface names a method, the method tables come from functions (no
module ``__getattr__``), and the dead code stays gone."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "searchain"
METHODS = SRC / "methods"
DEAD = (
    "build_methods",
    "with_options",
    "items_from",
    "check_task",
    "running_mirror",
    "cancel_event",
    "ascore",
    "excludes_zero",
    "MODEL_HELP",
)


def _sources(under: Path = SRC) -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted(under.rglob("*.py"))}


def _found(pattern: str, *, outside: Path | None = None) -> list[str]:
    where = []
    for path, text in _sources().items():
        if outside is not None and path.is_relative_to(outside):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(pattern, line):
                where.append(f"{path.relative_to(SRC)}:{n}: {line.strip()}")
    return where


def test_the_server_runs_what_assemble_returns() -> None:
    assert _found(r"assemble\(.*\)\.method\b") == []
    own = METHODS / "assembly.py"
    # assembly.answering, not another object's method of that name (QuestionPools.answering)
    calls = r"(?<![.\w])(?<!def )answering\(|\babstention\.apply\(|\babstention_for\b"
    assert [w for w in _found(calls) if not w.startswith(str(own.relative_to(SRC)))] == []
    engine = SRC / "server" / "engine.py"
    assert len(engine.read_text(encoding="utf-8").splitlines()) <= 200


def test_no_surface_names_a_method() -> None:
    assert _found(r"""==\s*["'](thinkcite|rebel)["']""", outside=METHODS) == []
    assert _found(r"getattr\(registry") == []


def test_no_module_getattr_under_methods() -> None:
    found = [
        str(path.relative_to(SRC))
        for path, text in _sources(METHODS).items()
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
    ]
    assert found == []


def test_the_dead_code_stays_gone() -> None:
    assert _found(r"\b(" + "|".join(DEAD) + r")\b") == []
    assert not (SRC / "eval" / "metrics.py").exists()


# Issue 63: outside methods/, no method name is compared as a string; code asks for the fact it
# needs (what the trace records, or a capability of the method's record). Allowed: the quality
# bench's recipes, which list the methods to run and pin the paper preset on SearChain's names
# (data), and the remote retrieval API that is also called "searchain" (not a method).
NAME_COMPARES_ALLOWED = {
    "eval/recipes.py": "recipes list the methods they run",
    "retrieval/remote.py": 'the remote index API "searchain" (its own service), not a method',
}
STRING_TESTS = ("startswith", "endswith", "removeprefix", "removesuffix")


def _method_names() -> set[str]:
    from searchain.methods.catalog import method_names

    return set(method_names())


def _names_in(node: ast.AST, names: set[str], constants: dict[str, set[str]]) -> set[str]:
    """The method names ``node`` holds as string literals (or as a module constant of them);
    a literal that begins names at a "-" (``"searchain-"``) stands for them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
        return {n for n in names if n == text or (text.endswith("-") and n.startswith(text))}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {n for e in node.elts for n in _names_in(e, names, constants)}
    if isinstance(node, ast.Name):
        return constants.get(node.id, set())
    return set()


def _name_compares(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every comparison or string test of a method name in ``tree``."""
    constants = {
        t.id: _names_in(node.value, names, {})
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        operands: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in STRING_TESTS
        ):
            operands = list(node.args)
        found += [(node.lineno, n) for o in operands for n in _names_in(o, names, constants)]
    return found


def test_no_method_name_is_compared_as_a_string_outside_methods() -> None:
    names = _method_names()
    assert {"searchain", "searchain-no-ir", "retrieve-read", "direct-retrieval"} <= names
    found = []
    for path, text in _sources().items():
        where = str(path.relative_to(SRC))
        if path.is_relative_to(METHODS) or where in NAME_COMPARES_ALLOWED:
            continue
        found += [f"{where}:{n}: {name!r}" for n, name in _name_compares(ast.parse(text), names)]
    assert found == []


def test_the_name_compare_check_finds_each_kind() -> None:
    """The check above sees ==, in, startswith and a module constant of names."""
    names = {"searchain", "searchain-no-ir", "retrieve-read"}
    code = (
        'RANKED = ("retrieve-read",)\n'
        'a = m == "searchain"\n'
        'b = "searchain" in traces\n'
        'c = m.startswith("searchain")\n'
        "d = m in RANKED\n"
        'e = m == "colbert"\n'
        'f = m.startswith("searchain-")\n'
    )
    assert [n for n, _ in _name_compares(ast.parse(code), names)] == [2, 3, 4, 5, 7]


# Issue 63: outside methods/, code reads a trace's meta through the typed views of
# trace_extras.py (each says once what an older trace without a key means), not by its string
# keys. Writers (``meta[key] = ...``, ``setdefault``) are not reads. What is left, per file (held
# exactly: a new read fails, and one made through a view lowers its count here):
META_READS_ALLOWED = {
    "render.py": (6, "the trace's own renderer: a node's status, reader, check and LLM answer"),
    "eval/setup.py": (1, "an Example's dataset fields (its gold paragraphs), not a trace"),
    "eval/recipes.py": (1, "an Example's dataset fields (a celebrity's term), not a trace"),
}
VIEWS = SRC / "trace_extras.py"


def _meta_reads(tree: ast.AST) -> list[int]:
    """Lines that read ``<x>.meta`` by a key: ``.meta[k]`` (loaded), ``.meta.get(k)``,
    ``k in <x>.meta``."""

    def is_meta(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "meta"

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_meta(node.value):
            found += [node.lineno] if isinstance(node.ctx, ast.Load) else []
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            found += [node.lineno] if node.func.attr == "get" and is_meta(node.func.value) else []
        elif isinstance(node, ast.Compare):
            tests = zip(node.ops, node.comparators, strict=True)
            found += [
                node.lineno for op, c in tests if isinstance(op, ast.In | ast.NotIn) and is_meta(c)
            ]
    return found


def test_trace_meta_is_read_through_its_views_outside_methods() -> None:
    counts: dict[str, int] = {}
    for path, text in _sources().items():
        if path.is_relative_to(METHODS) or path == VIEWS:
            continue
        if lines := _meta_reads(ast.parse(text)):
            counts[str(path.relative_to(SRC))] = len(lines)
    assert counts == {where: most for where, (most, _) in META_READS_ALLOWED.items()}


def test_the_meta_read_check_finds_each_kind() -> None:
    code = (
        'a = t.meta["path"]\n'
        'b = t.meta.get("route")\n'
        'c = "template" in t.meta\n'
        't.meta["maxprob"] = {}\n'
        't.meta.setdefault("corpus", "x")\n'
        'd = meta.get("value")\n'
    )
    assert _meta_reads(ast.parse(code)) == [1, 2, 3]
