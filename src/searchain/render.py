"""Terminal views of a trace (rich): the Tree-of-Reasoning."""

from __future__ import annotations

from rich.markup import escape
from rich.tree import Tree

from searchain.types import Node, Trace

SOURCE_STYLE = {
    "llm": ("green", "LLM"),
    "ir-corrected": ("yellow", "corrected by IR"),
    "ir-completed": ("cyan", "completed by IR"),
    "retrieval": ("cyan", "retrieval"),
}


def _label(node: Node) -> str:
    style, source = SOURCE_STYLE.get(node.source, ("white", node.source))
    status = node.meta.get("status", "")
    answer = escape(node.answer) if node.answer else "[dim]unsolved[/]"
    line = f"[bold]{escape(node.query)}[/] → {answer}  [{style}]{source}[/]"
    if status == "unconfirmed":  # kept, but IR did not confirm it: say what the check found
        # A yes/no node checked by NLI: the judge's figures are in the check, not the span.
        reader = {} if "nli" in node.meta else node.meta.get("reader") or {}
        said = (
            f"; the reader said {escape(str(reader['answer']))!r}" if reader.get("answer") else ""
        )
        line += f" [yellow](unconfirmed: {escape(str(node.meta.get('check', '')))}{said})[/]"
    elif status and status not in ("verified",):
        line += f" [dim]({status})[/]"
    if node.meta.get("llm_answer") and node.source.startswith("ir-"):
        line += f"\n[dim]LLM said: {escape(str(node.meta['llm_answer']))}[/]"
    if node.passages:
        p = node.passages[0]
        line += f"\n[dim]passage: {escape(p.title or p.id)}[/]"
    return line


def tree_of_reasoning(trace: Trace) -> Tree:
    """The ToR as a rich tree: each round's chain is a branch hanging off the node that got
    feedback; nodes are coloured by where their answer came from."""
    by_parent: dict[str | None, list[Node]] = {}
    for n in trace.nodes:
        by_parent.setdefault(n.parent, []).append(n)
    roots = by_parent.get(None, [])
    root = Tree(f"[bold]Tree-of-Reasoning[/] — {escape(trace.question)}")

    def grow(branch: Tree, node_id: str) -> None:
        for child in by_parent.get(node_id, []):
            grow(branch.add(_label(child)), child.id)

    for r in roots:
        if r.source == "question":
            grow(root, r.id)
        else:
            grow(root.add(_label(r)), r.id)
    if not trace.nodes:  # SearChain reading first answered in one read: there is no tree
        root.add("[dim]no chain was planned: answered without a Tree-of-Reasoning[/]")
    return root
