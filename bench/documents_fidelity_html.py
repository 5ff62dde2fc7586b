"""The HTML half of ``documents_fidelity.py``: Debian's documentation sites as the indexer
reads them, against their visible text, beside trafilatura; then the same pages with their
markup's marks taken out, read without and with the repeated-block rule."""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from bench.kit import part_of

Words = Callable[[str], Counter[str]]
BARE = re.compile(r'\s(?:class|id|role)="[^"]*"')


def visible_text(html: str) -> str:
    import lxml.html

    tree = lxml.html.fromstring(html.encode())
    for bad in tree.xpath("//script|//style|//head|//noscript"):
        bad.drop_tree()
    return tree.text_content()


def read_site(pages: dict[str, str], rule: bool) -> tuple[dict[str, list[str]], int]:
    """Each page's passages as the indexer makes them (``rule``: with the blocks repeated
    across the site left out), and how many blocks that rule left out."""
    from searchain.retrieval.documents import repeated
    from searchain.retrieval.documents.files import Parsed
    from searchain.retrieval.documents.sites import Sites
    from searchain.retrieval.documents.text_formats import parse_html

    sites = Sites(100)
    for name, html in pages.items():
        doc = parse_html(html, Path(name))
        sites.add(name, Parsed([], {}, doc))
        if not rule:
            sites.edges[name] = {}
    out, left_out = {}, 0
    for name in pages:
        got = sites.finish(name)
        out[name] = [text for _, text, _, _ in getattr(got, "passages", [])]
        left_out += getattr(got, "dropped", {}).get(repeated.WHY, 0)
    return out, left_out


def scores(pages: dict[str, str], passages: dict[str, list[str]], words: Words) -> list[float]:
    """Recall and precision of the passages' words against the visible text, the share of
    boilerplate passages (on three pages or more) and of passages under 15 words."""
    hit = got = visible = 0
    pages_of: dict[str, set[str]] = defaultdict(set)
    for name, html in pages.items():
        vis, ours = words(visible_text(html)), words("\n".join(passages[name]))
        hit += sum((vis & ours).values())
        got += sum(ours.values())
        visible += sum(vis.values())
        for text in passages[name]:
            pages_of[text].add(name)
    texts = [t for ts in passages.values() for t in ts]
    boiler = sum(len(pages_of[t]) >= 3 for t in texts) / max(1, len(texts))
    short = sum(len(t.split()) < 15 for t in texts) / max(1, len(texts))
    return [hit / visible, hit / max(1, got), boiler, short]


def html_tables(sites: dict[str, list[Path]], words: Words) -> list[str]:
    import trafilatura

    lines = [
        "| site | pages | searchain recall | searchain precision | trafilatura recall "
        "| trafilatura precision | searchain boilerplate | searchain <15 w | repeated blocks "
        "left out | files/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    bare_lines = [
        "| site, marks taken out | rule | recall | precision | boilerplate | <15 w | blocks "
        "left out |",
        "|---|---|---|---|---|---|---|",
    ]
    for site, files in sites.items():
        pages = {f.name: f.read_text(errors="replace") for f in files}
        t0 = time.perf_counter()
        passages, left_out = read_site(pages, rule=True)
        seconds = time.perf_counter() - t0
        recall, precision, boiler, short = scores(pages, passages, words)
        traf = {n: [trafilatura.extract(h, include_tables=True) or ""] for n, h in pages.items()}
        t_recall, t_precision, _, _ = scores(pages, traf, words)
        lines.append(
            f"| {site} | {len(pages)} | {recall:.1%} | {precision:.1%} | {t_recall:.1%} | "
            f"{t_precision:.1%} | {boiler:.1%} | {short:.1%} | {left_out} | "
            f"{len(pages) / seconds:.0f} |"
        )
        bare = {n: BARE.sub("", h) for n, h in pages.items()}
        for rule in (False, True):
            passages, left_out = read_site(bare, rule)
            cells = " | ".join(f"{v:.1%}" for v in scores(bare, passages, words))
            bare_lines.append(f"| {site} | {'on' if rule else 'off'} | {cells} | {left_out} |")
    return [*lines, "", *bare_lines]


if __name__ == "__main__":
    part_of(__doc__, "python -m bench.documents_fidelity")
