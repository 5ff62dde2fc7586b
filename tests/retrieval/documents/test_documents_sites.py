"""Blocks repeated across the pages of one site, when the markup does not say they are
navigation: left out of the passages, named in the manifest, and kept consistent when an
index is built again incrementally."""

from __future__ import annotations

import json
from pathlib import Path

from searchain.retrieval.documents import index_documents, read_document_passages
from searchain.retrieval.documents import repeated as rp
from searchain.retrieval.documents.text_formats import parse_html

BAR = '<div><a href="/">Home</a></div><div><a href="/docs">Docs</a></div>'
FOOTER = "<p>Copyright 2024 Example Corp. All rights reserved.</p>"


def page(topic: str, bar: str = BAR, footer: str = FOOTER) -> str:
    """A page of a site whose generator marks nothing as navigation."""
    body = " ".join(f"The {topic} chapter explains {topic} in step {i}." for i in range(12))
    return (
        f"<html><body>{bar}<h1>{topic.title()}</h1><p>{body}</p>"
        "<p>Note</p><p>Back up first, always, before you change anything at all.</p>"
        "<table><tr><th>Package</th><th>Size</th></tr>"
        f"<tr><td>{topic}-tools</td><td>12</td></tr></table>"
        f"<p>{body}</p>{footer}</body></html>"
    )


def write_site(folder: Path, topics: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for topic in topics:
        (folder / f"{topic}.html").write_text(page(topic))


def test_edge_blocks_are_the_short_ones_before_the_first_heading_and_at_the_end() -> None:
    doc = parse_html(page("install"), Path("install.html"))
    edges = set(rp.edge_prints(doc).values())
    assert edges == {"Home", "Docs", FOOTER[3:-4]}  # not the "Note" nor the table rows


def test_a_block_repeated_on_half_the_pages_and_three_goes() -> None:
    prints = {"a": ["x", "y"], "b": ["x"], "c": ["x", "z"], "d": ["y"]}
    assert rp.repeated_prints(prints) == {"x": 3}  # y: 2 pages, under MIN_PAGES
    assert rp.repeated_prints({"a": ["x"], "b": ["x"]}) == {}


def test_a_sites_repeated_blocks_are_left_out_and_named(tmp_path: Path) -> None:
    write_site(tmp_path / "site", ["install", "upgrade", "remove", "backup"])
    index, report = index_documents([tmp_path / "site"], tmp_path / "idx")
    texts = [p.text for p in index.rows(0, len(index))]
    assert not any("Copyright 2024" in t or t.startswith("Home") for t in texts)
    # Inside a page, a short block repeated on every page is content: an admonition's label.
    assert sum(t.split("\n\n").count("Note") for t in texts) == 4
    assert sum("Package | Size" in t for t in texts) == 4  # a table's header row too
    manifest = json.loads((tmp_path / "idx" / "documents.json").read_text())
    blocks = manifest["repeated_blocks"][""]
    assert sorted((b["text"], b["pages"]) for b in blocks.values()) == [
        ("Copyright 2024 Example Corp. All rights reserved.", 4),
        ("Docs", 4),
        ("Home", 4),
    ]
    assert manifest["files"]["install.html"]["dropped"] == {rp.WHY: 3}
    assert report.left_out == {rp.WHY: 12}


def test_a_new_page_that_makes_a_block_repeated_rereads_its_site(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_site(site, ["install", "upgrade"])  # two pages: too few for a rule
    out = tmp_path / "idx"
    index, _ = index_documents([site], out)
    assert any("Copyright 2024" in p.text for p in index.rows(0, len(index)))
    (site / "remove.html").write_text(page("remove"))
    index, report = index_documents([site], out)
    assert report.added == ["remove.html"] and report.unchanged == []
    assert report.resited == ["install.html", "upgrade.html"]
    assert "2 read again (their site's repeated blocks changed)" in report.summary()
    assert not any("Copyright 2024" in p.text for p in index.rows(0, len(index)))
    # A page with its own footer changes nothing for the others: they stay as they were.
    (site / "about.html").write_text(page("about", footer="<p>Written by Ann.</p>"))
    _, report = index_documents([site], out)
    assert report.added == ["about.html"] and not report.resited
    assert sorted(report.unchanged) == ["install.html", "remove.html", "upgrade.html"]


def test_a_dense_read_leaves_the_same_blocks_out(tmp_path: Path) -> None:
    write_site(tmp_path / "site", ["install", "upgrade", "remove"])
    passages, report = read_document_passages([tmp_path / "site"])
    texts = [p.text for p in passages]
    assert texts and not any("Copyright 2024" in t for t in texts)
    assert report.left_out == {rp.WHY: 9}
