"""REBEL's recursion tree in the terminal (``searchain ask --method rebel --show-tree``)."""

from __future__ import annotations

import json

from rich.markup import escape
from rich.tree import Tree

from searchain.types import Node, Trace


def _short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return escape(text if len(text) <= n else text[: n - 1] + "…")


def _label(node: Node) -> str:
    meta = node.meta
    answer = _short(node.answer) if node.answer else "[dim](no answer)[/]"
    line = f"[bold]{escape(node.query)}[/] → {answer}"
    check = meta.get("memory_check", {})
    tool = meta.get("tool") or {}
    if tool.get("name") and not tool.get("error"):
        line += f"  [cyan]tool {escape(tool['name'])}[/]"
        line += f"\n[dim]input: {_short(json.dumps(tool.get('input', {}), ensure_ascii=False))}[/]"
        out = tool.get("output", "")
        cut = " (truncated)" if tool.get("truncated") else ""
        line += f"\n[dim]output{cut}: {_short(out)}[/]"
    else:
        line += f"  [green]{'memory' if check.get('decision') == 'memory' else 'LLM'}[/]"
    if tool.get("error"):
        line += f"\n[red]tool error: {escape(tool['error'])}[/]"
    for removed in (meta.get("split") or {}).get("removed", []):
        line += f"\n[dim]dropped subquestion: {escape(removed['text'])} ({removed['reason']})[/]"
    if meta.get("note"):
        line += f"\n[yellow]{escape(meta['note'])}[/]"
    return line


def recursion_tree(trace: Trace) -> Tree:
    """Question, subquestions (recursively), how each was answered, and the facts."""
    children: dict[str | None, list[Node]] = {}
    for n in trace.nodes:
        children.setdefault(n.parent, []).append(n)
    tree = Tree(f"[bold]REBEL[/] — {escape(trace.question)}")

    def grow(branch: Tree, node: Node) -> None:
        sub = branch.add(_label(node))
        for child in children.get(node.id, []):
            grow(sub, child)

    for root in children.get(None, []):
        grow(tree, root)
    facts = trace.meta.get("facts") or []
    if facts:
        memory = tree.add("[bold]facts[/]")
        for q, a in facts:
            memory.add(f"{escape(q)} → {_short(a)}")
    for note in trace.meta.get("limits") or []:
        tree.add(f"[yellow]limit: {escape(note)}[/]")
    return tree
