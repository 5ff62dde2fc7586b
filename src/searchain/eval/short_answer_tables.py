"""The tables of answers over real documentation by the short-answer golds (issue 62,
``python -m bench.real_docs_answers table --golds answers``): each arm right by its whole
answer, its short answer and the short answer derived from its whole answer, with bootstrap
CIs; by kind (one-passage, two-passage, bridge: the kinds the records hold); paired with
chosen arms, over all and by kind; its citations (the git-doc set's rule and the stricter
one); SearChain's routes; seconds a question. The evidence-quote golds' tables are
:mod:`searchain.eval.document_answers_tables`, whose helpers these share."""

from __future__ import annotations

from typing import Any

from searchain.eval.document_answers_tables import (
    median_seconds,
    paired,
    pct,
    seconds_ratio,
    value,
)

RIGHT = (
    ("right_whole", "whole answer"),
    ("right_short", "short answer"),
    ("right_derived", "short, derived"),
)
KINDS = (("one-passage", "one-passage"), ("two-passages", "two-passage"), ("bridge", "bridge"))


def kinds_in(records: dict[str, dict[str, dict]]) -> list[tuple[str, str]]:
    """The kinds some record holds (the 53 have no bridge questions; git-doc has all three)."""
    held = {r.get("kind") for rows in records.values() for r in rows.values()}
    return [(kind, name) for kind, name in KINDS if kind in held]


def count_pct(values: list[float]) -> str:
    """``right/items, % [95 % CI]``."""
    return f"{sum(values):.0f}/{len(values)}, {pct(values)}" if values else "–"


def short_of(rows: dict[str, dict]) -> str:
    """Where an arm's short answer comes from: recorded, or its whole reply (none recorded)."""
    ok = [r for r in rows.values() if r["status"] == "ok"]
    if ok and all(r.get("short_answer") is None for r in ok):
        return "= whole reply"
    return "recorded"


def alias_rows(records: dict[str, dict[str, dict]], quotes: bool = True) -> list[str]:
    head = "| arm | items | " + " | ".join(f"right, {name} % (95 % CI)" for _, name in RIGHT)
    head += " | short answer |"
    if quotes:
        head += " cover-EM of the quote % (old) | cover-EM of the quote, short % |"
    lines = [head, "|---|" + "---:|" * (len(RIGHT) + 2 + 2 * quotes)]
    for arm, rows in records.items():
        rs = list(rows.values())
        cells = [arm, str(len(rs)), *(pct([value(r, key) for r in rs]) for key, _ in RIGHT)]
        cells.append(short_of(rows))
        if quotes:
            cells.append(pct([value(r, "cover_em") for r in rs]))
            recorded = any("cover_em_short" in r for r in rs)  # LlamaIndex's records have none
            cells.append(pct([value(r, "cover_em_short") for r in rs]) if recorded else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def alias_kind_rows(records: dict[str, dict[str, dict]]) -> list[str]:
    keys = (("right_whole", "whole"), ("right_short", "short"), ("right_derived", "short, derived"))
    kinds = kinds_in(records)
    names = [f"{name}: {k}" for _, name in kinds for _, k in keys]
    lines = ["| arm | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for arm, rows in records.items():
        cells = [arm]
        for kind, _ in kinds:
            rs = [r for r in rows.values() if r["kind"] == kind]
            cells += [count_pct([value(r, key) for r in rs]) for key, _ in keys]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def delta_cell(d: Any) -> str:
    """A paired difference as a cell: the difference and its interval, * when the interval
    excludes 0, then the items won and lost."""
    return f"{d}{' *' if d.significant else ''} ({d.wins} / {d.losses})"


def alias_paired_rows(
    records: dict[str, dict[str, dict]], against: str, quotes: bool = True
) -> list[str]:
    keys = (*RIGHT, *([("cover_em", "cover-EM of the quote")] if quotes else []))
    head = f"| arm − {against} | items | " + " | ".join(
        f"{name} Δ (won / lost)" for _, name in keys
    )
    lines = [head + " |", "|---|---:|" + "---:|" * len(keys)]
    for arm in (a for a in records if a != against):
        diffs = [paired(records, arm, against, key) for key, _ in keys]
        if diffs[0] is None:
            continue
        cells = [arm, str(diffs[0].items)]
        cells += [delta_cell(d) for d in diffs]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def of_kind(records: dict[str, dict[str, dict]], kind: str) -> dict[str, dict[str, dict]]:
    return {a: {i: r for i, r in rows.items() if r["kind"] == kind} for a, rows in records.items()}


def kind_paired_rows(records: dict[str, dict[str, dict]], against: str) -> list[str]:
    """``arm − against`` within each kind, whole and short answer, with the 95 % interval: a
    target on one kind (issue 62: bridge questions) is read here, not from two marginals."""
    keys = (("right_whole", "whole answer"), ("right_short", "short answer"))
    head = f"| arm − {against} | kind | items | "
    head += " | ".join(f"{n} Δ (won / lost)" for _, n in keys)
    lines = [head + " |", "|---|---|---:|" + "---:|" * len(keys)]
    for kind, name in kinds_in(records):
        within = of_kind(records, kind)
        for arm in (a for a in within if a != against):
            diffs = [paired(within, arm, against, key) for key, _ in keys]
            if diffs[0] is None:
                continue
            cells = [arm, name, str(diffs[0].items)]
            cells += [delta_cell(d) for d in diffs]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def citation_rows(records: dict[str, dict[str, dict]]) -> list[str]:
    """Per arm: how often a cited passage is from a source file (the git-doc set's rule,
    ``cite_source``), how often the short answer is right and so cited, and how often every
    file that holds an answer part is cited (``cite_file``, stricter)."""
    lines = [
        "| arm | items | cites a source file % | right (short) and cites a source file % "
        "| cites every answer file % |",
        "|---|---:|---:|---:|---:|",
    ]
    for arm, rows in records.items():
        rs = list(rows.values())
        if not any("cite_source" in r for r in rs):
            continue
        both = [value(r, "right_short") * value(r, "cite_source") for r in rs]
        cells = [arm, str(len(rs)), pct([value(r, "cite_source") for r in rs]), pct(both)]
        cells.append(pct([value(r, "cite_file") for r in rs]))
        lines.append("| " + " | ".join(cells) + " |")
    return lines if len(lines) > 2 else []


RIGHT_KEYS = ("right_whole", "right_short")


def route_rows(records: dict[str, dict[str, dict]]) -> list[str]:
    """SearChain reading first (issue 62), per arm that records its route: how often each route
    was taken and how often it was right (whole / short answer), and on the chained questions
    the right answers the chain added over the first read and those it lost."""
    lines = [
        "| arm | route | items | right, whole | right, short | chain added / lost (short) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for arm, rows in records.items():
        routed = [r for r in rows.values() if r.get("status") == "ok" and r.get("route")]
        for taken in ("read", "chain"):
            rs = [r for r in routed if r["route"].get("taken") == taken]
            if not rs:
                continue
            gained = lost = 0
            for r in rs if taken == "chain" else []:
                first = float((r["route"].get("first_read") or {}).get("right_short") or 0.0)
                gained += value(r, "right_short") > first
                lost += value(r, "right_short") < first
            delta = f"{gained} / {lost}" if taken == "chain" else "–"
            cells = [arm, taken, str(len(rs))]
            cells += [count_pct([value(r, k) for r in rs]) for k in RIGHT_KEYS]
            lines.append("| " + " | ".join([*cells, delta]) + " |")
        if routed:  # what never chaining would have answered: the first read of every question
            firsts = [r["route"].get("first_read") or {} for r in routed]
            cells = [arm, "first read, every question", str(len(routed))]
            cells += [count_pct([float(f.get(k) or 0.0) for f in firsts]) for k in RIGHT_KEYS]
            lines.append("| " + " | ".join([*cells, "–"]) + " |")
    return lines if len(lines) > 2 else []


def seconds_rows(records: dict[str, dict[str, dict]], against: str) -> list[str]:
    """Median seconds a question of each arm (items with no cached call), and its ratio to
    ``against``'s on the items both timed (fair only when the arms ran interleaved)."""
    lines = [f"| arm | median seconds (items) | × {against} |", "|---|---:|---:|"]
    for arm, rows in records.items():
        ratio = seconds_ratio(rows, records[against]) if against in records else "–"
        lines.append(f"| {arm} | {median_seconds(rows)} | {ratio} |")
    return lines


def alias_markdown(
    records: dict[str, dict[str, dict]],
    model: str,
    qset: str,
    questions: int,
    paired_with: list[str],
    quotes: bool = True,
) -> str:
    """Every arm scored by the short-answer golds (``answers``, ``scoring.match.alias_match``)
    from its recorded text, beside its old cover-EM of the evidence quotes where the set had
    quote golds (``quotes``; git-doc's were written with aliases: its quotes are evidence)."""
    parts = [
        f"Answers over real documentation ({qset} set, {questions} questions), {model}, right "
        "by the short-answer golds (`answers`, issue 62); each arm on the items it recorded",
        "",
        *alias_rows(records, quotes),
        "",
        "Short answer: `recorded` is the record's own (searchain's `trace.answer`); an arm that "
        "records none is scored on its whole reply. Short, derived: `answers.short_answer` of "
        "the recorded whole answer, every arm alike."
        + (
            " Cover-EM of the quote: the old figures (`answer`, the evidence quote)."
            if quotes
            else ""
        ),
        "",
        "By kind (right/items, % with 95 % CI):",
        "",
        *alias_kind_rows(records),
    ]
    for against in (a for a in paired_with if a in records and len(records) > 1):
        parts += [
            "",
            f"Paired with {against} on the items both answered (* the 95 % interval excludes 0):",
            "",
            *alias_paired_rows(records, against, quotes),
        ]
        if len(kinds_in(records)) > 1:
            parts += ["", f"Paired with {against} within each kind:", ""]
            parts += kind_paired_rows(records, against)
    cites = citation_rows(records)
    if cites:
        parts += ["", "Citations (% with 95 % CI; a failed item counts 0):", "", *cites]
    routes = route_rows(records)
    if routes:
        parts += ["", "By route (SearChain reading first; right/items, % with 95 % CI):", ""]
        parts += routes
    if paired_with and paired_with[0] in records:
        parts += ["", "Seconds a question:", "", *seconds_rows(records, paired_with[0])]
    return "\n".join(parts)
