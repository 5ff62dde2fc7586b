"""Spaces between words where PDFium's text and the glyphs' places disagree.

PDFium writes a space where the PDF holds one, and generates one where it guesses a word
break from the text's positioning. Its guesses miss in two ways that ``pdftotext`` (which
compares each gap with the line's own letter spacing) does not:

* words positioned apart by offsets, with no space glyph between them, come out glued:
  Ghostscript's PDFs (groff's ``pdfmark.pdf``) read ``anyother``, ``viewspecification``;
* a space it generates inside a word (``inv oke``) or inside letter-spaced capitals
  (``AG NU MANU AL`` for ``A GNU MANUAL``).

So, line by line: the gap between two neighbouring glyphs is measured on their loose boxes
(origin to advance, font ascent to descent) and compared with the line's letter spacing (the
median gap between glyphs written with nothing between them). A gap wider than that by
``WORD_GAP`` of the glyphs' height gets a space; a space PDFium generated (not one the PDF
holds) over a gap no wider than ``JOIN_GAP`` beyond the letter spacing is taken out. A
superscript or subscript is a word of its own, as in ``pdftotext``: a footnote's number
glued to its first word (``19Deciding``) is two words.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

import numpy as np

# Shares of a glyph's loose height. Measured on the bench's 134 PDFs (docs/benchmarks.md):
# where PDFium puts a space, the glyphs around it stand 0.06 or more apart (0.18 and over
# for 98 % of them); between the glyphs of a word PDFium writes, gaps stay under 0.04 but
# for a few kerned pairs.
WORD_GAP = 0.15
JOIN_GAP = 0.05
_GLYPH = re.compile(r"[^\s\ufffe]")  # U+FFFE: PDFium's mark of a soft hyphen
_BREAK = re.compile(r"[\r\n]")
# A glyph under this share of its neighbour's font size, its baseline shifted by more than
# SCRIPT_SHIFT of the larger size, is a superscript or subscript; small capitals and a
# larger initial share the baseline.
SCRIPT_SIZE = 0.85
SCRIPT_SHIFT = 0.15
# A line's letter spacing is measured when it has this many glyph pairs written together.
MIN_PAIRS = 4


def spaced_text(textpage: Any, text: str) -> str:
    """``text`` (``get_text_range()`` of the PDFium text page ``textpage``, a raw
    ``FPDF_TEXTPAGE``) with its spaces mended line by line (see the module's description).
    One loose box per glyph (about 0.5 µs each), the gaps then in NumPy."""
    import pypdfium2.raw as raw

    chars = list(text)
    # PDFium counts UTF-16 units: a character past U+FFFF takes two.
    index = (
        list(range(len(chars)))
        if len(text.encode("utf-16-le")) == 2 * len(chars)
        else list(accumulate((2 if ord(c) > 0xFFFF else 1 for c in chars), initial=0))
    )
    glyphs = [m.start() for m in _GLYPH.finditer(text)]
    if len(glyphs) < 2:
        return text
    rects = (raw.FS_RECTF * len(glyphs))()
    get_box = raw.FPDFText_GetLooseCharBox
    for m, k in enumerate(glyphs):
        get_box(textpage, index[k], rects[m])
    boxes = np.frombuffer(rects, dtype=np.float32).reshape(-1, 4)  # left, top, right, bottom
    pos = np.array(glyphs)
    breaks = np.array([m.start() for m in _BREAK.finditer(text)], dtype=int)
    line = np.searchsorted(breaks, pos)  # a glyph's line: the line breaks before it
    insert, join, uneven = _gaps(boxes, pos, line)
    insert += [k for k in uneven if _script(textpage, index[k], index[k + 1])]
    for k in insert:
        chars[k] += " "
    for k in join:  # a space between two glyphs: only one PDFium made up goes
        if chars[k] == " " and raw.FPDFText_IsGenerated(textpage, index[k]) == 1:
            chars[k] = ""
    return "".join(chars)


def _gaps(boxes: Any, pos: Any, line: Any) -> tuple[list[int], list[int], list[int]]:
    """From the glyphs' loose boxes, places and lines: after which glyphs a space goes,
    which lone spaces between glyphs may go, and after which glyphs the next, written
    together with it, stands higher or lower (a superscript or subscript, maybe)."""
    left, top, right, bottom = boxes.T
    height = np.minimum(top[:-1] - bottom[:-1], top[1:] - bottom[1:])
    overlap = np.minimum(top[:-1], top[1:]) - np.maximum(bottom[:-1], bottom[1:])
    # Side by side: one line, heights overlapping by half the smaller (a superscript
    # still does), the second glyph not before the first.
    side = (line[1:] == line[:-1]) & (height > 0) & (overlap >= 0.5 * height)
    side &= left[1:] >= left[:-1]
    gap = left[1:] - right[:-1]
    step = pos[1:] - pos[:-1]
    tight = side & (step == 1)
    excess = gap - _letter_spacing(gap, tight, line[:-1])
    insert = pos[:-1][tight & (excess > WORD_GAP * height)]
    join = pos[:-1][side & (step == 2) & (excess <= JOIN_GAP * height)] + 1
    # Boxes at other heights, not kerned into each other (the raised A of the LaTeX logo is)
    uneven = np.abs(top[1:] - top[:-1]) + np.abs(bottom[1:] - bottom[:-1]) > 0.05 * height
    uneven &= gap > -JOIN_GAP * height
    return (
        insert.tolist(),
        join.tolist(),
        pos[:-1][tight & ~(excess > WORD_GAP * height) & uneven].tolist(),
    )


def _script(textpage: Any, a: int, b: int) -> bool:
    """Whether of PDFium's characters ``a`` and ``b``, one is a superscript or subscript
    of the other: its font size under ``SCRIPT_SIZE`` of the other's, its baseline
    shifted (a footnote's number before its first word: ``19Deciding``)."""
    import ctypes

    import pypdfium2.raw as raw

    size_a, size_b = raw.FPDFText_GetFontSize(textpage, a), raw.FPDFText_GetFontSize(textpage, b)
    larger = max(size_a, size_b)
    if larger <= 0 or min(size_a, size_b) >= SCRIPT_SIZE * larger:
        return False
    x, ya, yb = ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    if not (
        raw.FPDFText_GetCharOrigin(textpage, a, ctypes.byref(x), ctypes.byref(ya))
        and raw.FPDFText_GetCharOrigin(textpage, b, ctypes.byref(x), ctypes.byref(yb))
    ):
        return False
    return abs(ya.value - yb.value) > SCRIPT_SHIFT * larger


def _letter_spacing(gap: Any, tight: Any, pair_line: Any) -> Any:
    """Per glyph pair, its line's letter spacing: the median gap of the line's pairs written
    together (``tight``), 0 where under ``MIN_PAIRS`` or negative. Wide in letter-spaced
    capitals, about 0 in running text."""
    lines, gaps = pair_line[tight], gap[tight]
    order = np.lexsort((gaps, lines))
    lines, gaps = lines[order], gaps[order]
    spacing = np.zeros_like(gap)
    if not len(lines):
        return spacing
    numbers, first, count = np.unique(lines, return_index=True, return_counts=True)
    middle = (gaps[first + (count - 1) // 2] + gaps[first + count // 2]) / 2
    middle = np.where(count >= MIN_PAIRS, np.maximum(middle, 0.0), 0.0)
    at = np.searchsorted(numbers, pair_line).clip(max=len(numbers) - 1)
    return np.where(numbers[at] == pair_line, middle[at], 0.0)
