"""The rules that turn PDFium's page text into what a reader sees: word spaces from the
glyphs' places, page furniture, slide steps, hyphens at line ends. Real PDFs from Debian's
packages exercise them in ``test_documents_real.py``; here each rule meets its own cases."""

from __future__ import annotations

import numpy as np

from searchain.retrieval.documents import pdf_spacing, pdf_text


def boxes(*spans: tuple[float, float], bottom: float = 0.0, top: float = 9.0) -> np.ndarray:
    """Loose glyph boxes (left, top, right, bottom) on one line, from (left, right) spans."""
    return np.array([(a, top, b, bottom) for a, b in spans], dtype=np.float32)


def test_a_word_gap_without_a_space_gets_one() -> None:
    # "anyother": y ends at 15, o starts 3.35 later (a word space at 10 pt); in "any" the
    # glyphs touch. PDFium wrote no space: one goes after the y (place 2).
    glyphs = boxes((0, 5), (5, 10), (10, 15), (18.35, 23.35), (23.35, 28), (28, 33))
    insert, join, uneven = pdf_spacing._gaps(glyphs, np.arange(6), np.zeros(6, dtype=int))
    assert insert == [2] and join == [] and uneven == []


def test_letter_spaced_capitals_are_read_by_their_own_spacing() -> None:
    # "AG NU MANU": letters 3.8 apart, a word space of 9 between A and G and between U and
    # M; PDFium made up a space between G and N (place 2) over a letter gap: it goes, and
    # spaces go where the gap exceeds the line's letter spacing.
    text = "AG NU MANU"
    spans = [(0, 10), (19, 29), (32.8, 42.8), (46.6, 56.6)]
    spans += [(65.6, 75.6), (79.4, 89.4), (93.2, 103.2), (107, 117)]
    pos = np.array([i for i, c in enumerate(text) if c != " "])
    insert, join, _ = pdf_spacing._gaps(boxes(*spans), pos, np.zeros(len(pos), dtype=int))
    assert insert == [0] and join == [2]


def test_running_text_keeps_its_spaces_and_kerning() -> None:
    # Kerned pairs (-0.3) and small gaps (0.2) inside words are no word gaps.
    glyphs = boxes((0, 5), (4.7, 9.7), (9.9, 14.9), (15.1, 20.1), (19.8, 24.8))
    insert, join, _ = pdf_spacing._gaps(glyphs, np.arange(5), np.zeros(5, dtype=int))
    assert insert == [] and join == []


def test_a_raised_smaller_glyph_is_asked_about_and_a_new_line_is_not_a_gap() -> None:
    # A footnote number (raised, smaller) touching its first word: a superscript maybe
    # (PDFium's font sizes decide); the next line's first glyph is no neighbour at all.
    raised = np.array(
        [(0, 11, 3, 4.1), (3, 11, 6, 4.1), (6, 9, 11, 0), (11, 9, 16, 0), (0, -3, 5, -12)],
        dtype=np.float32,
    )
    insert, join, uneven = pdf_spacing._gaps(raised, np.arange(5), np.array([0, 0, 0, 0, 1]))
    assert uneven == [1] and insert == [] and join == []


def test_letter_spacing_is_measured_per_line() -> None:
    gap = np.array([3.8, 3.8, 3.8, 3.8, 0.0, 0.1, 0.0, 3.0, 0.0])
    tight = np.ones(9, dtype=bool)
    line = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
    spacing = pdf_spacing._letter_spacing(gap, tight, line)
    assert list(spacing) == [3.8] * 4 + [0.0] * 5


def page(*lines: str) -> list[str]:
    return list(lines)


def test_running_headers_page_numbers_and_contents_are_dropped_and_said() -> None:
    pages = [
        page("Guide", "Chapter 1 Setup", "Install it with the script.", "1"),
        page("Guide", "1.1 Prepare . . . . . . 3", "Body text two.", "2"),
        page("Guide", "Body text three.", "abs . . . . . . 25, 26, 69", "More text.", "- iii -"),
        page("Guide", "Body text four.", "4"),
    ]
    kept, dropped = pdf_text.clean_pages(pages, ["Chapter 1 Setup"], {1: ["Chapter 1 Setup"]})
    assert kept[0] == ["Chapter 1 Setup", "Install it with the script."]
    assert kept[1] == ["Body text two."] and kept[2] == ["Body text three.", "More text."]
    why = {(n, line): w for n, w, line in dropped}
    assert why[(1, "Guide")] == pdf_text.HEADER and why[(3, "- iii -")] == pdf_text.PAGE_NUMBER
    assert why[(2, "1.1 Prepare . . . . . . 3")] == pdf_text.CONTENTS
    assert why[(3, "abs . . . . . . 25, 26, 69")] == pdf_text.CONTENTS  # a book's index


def test_a_title_heads_only_its_own_page() -> None:
    # "Setup" opens a page of its section: kept; at the top of a later page, a line made
    # of outline titles is a running header.
    pages = [page("Setup", "Text one."), page("Setup", "Text two.")]
    kept, _ = pdf_text.clean_pages(pages, ["Setup"], {1: ["Setup"]})
    assert kept == [["Setup", "Text one."], ["Text two."]]


def test_a_heading_found_inside_pages_too_is_no_running_header() -> None:
    # R's manuals: "Arguments" opens three pages but stands inside four more.
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()

    def text(n: int, part: str) -> str:
        return f"{part} of {words[n]}."

    pages = [page("Arguments", text(n, "x"), text(n, "y"), text(n, "z")) for n in range(3)]
    pages += [
        page(text(n, "a"), text(n, "b"), "Arguments", text(n, "c"), text(n, "d"), text(n, "e"))
        for n in range(3, 7)
    ]
    kept, dropped = pdf_text.clean_pages(pages, [])
    assert all(p[0] == "Arguments" for p in kept[:3]) and not dropped


def test_the_steps_of_a_slide_are_one_page() -> None:
    pages = [
        page("Slides", "PDF slides", "Differences:"),
        page("Slides", "PDF slides", "Differences:", "• two aspect ratios"),
        page("Slides", "PDF slides", "Differences:", "• two aspect ratios", "• centred type"),
        page("Slides", "Next slide", "Other text."),
    ]
    kept, dropped = pdf_text.clean_pages(pages, [])
    assert kept[:2] == [[], []] and kept[2][-1] == "• centred type"
    assert {n for n, why, _ in dropped if why == pdf_text.OVERLAY} == {1, 2}
    assert {n for n, why, _ in dropped if why == pdf_text.HEADER} == {1, 2, 3, 4}  # "Slides"


def test_hyphens_at_line_ends() -> None:
    texts = [
        "Run dpkg-buildpackage here.",
        "then dpkg\ufffe\r\nbuildpackage and dis\ufffe\r\ntribution",
    ]
    compounds = pdf_text.compounds(texts)
    assert "dpkg-buildpackage" in compounds
    assert pdf_text.page_lines(texts[1], compounds) == ["then dpkg-buildpackage and distribution"]
    assert pdf_text.page_lines("the \ufb01le") == ["the file"]  # a ligature is its letters
    text = pdf_text.paragraphs_of(["see /usr/share/-", "doc/guide and a pack-", "age"])
    assert text == "see /usr/share/doc/guide and a package"
