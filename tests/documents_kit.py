"""Real documents for the indexing tests, written by real writers: PDFs by fpdf2 (pages, an
outline, RC4 encryption), Word files by python-docx, Parquet by pyarrow; and the hostile
ones a folder can hold (a truncated PDF, a PDF whose stream inflates to 1 GiB, a .docx zip
bomb, a binary file named .txt)."""

from __future__ import annotations

import io
import shutil
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GUIDE_PAGES = [
    (
        "Installation",
        "Install the Frobnicator with the bundled setup script. The setup script "
        "asks for the licence key printed on the yellow card inside the box.",
    ),
    (
        "Calibration",
        "Calibrate the Frobnicator every ninety days. Calibration takes eleven "
        "minutes and needs the blue calibration weight.",
    ),
    (
        "Troubleshooting",
        "If the display shows error E42, the quartz crystal is cold: wait "
        "until the room reaches eighteen degrees before switching it on again.",
    ),
]


def write_guide_pdf(path: Path, password: str | None = None) -> Path:
    """A three-page manual, one outline section per page."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title("Frobnicator Guide")
    if password:
        pdf.set_encryption(owner_password="owner-" + password, user_password=password)
    pdf.set_font("Helvetica", size=12)
    for heading, body in GUIDE_PAGES:
        pdf.add_page()
        pdf.start_section(heading)
        pdf.multi_cell(0, 8, heading)
        pdf.ln(4)
        pdf.multi_cell(0, 8, body)
    pdf.output(str(path))
    return path


def write_docx(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.add_heading("Warranty", level=1)
    d.add_paragraph("The warranty covers the Frobnicator for thirty-one months from purchase.")
    d.add_heading("Returns", level=2)
    d.add_paragraph("Returns are accepted within fourteen days with the original receipt.")
    d.save(str(path))
    return path


def write_docx_bomb(path: Path, inflated: int = 1 << 30) -> Path:
    """A zip named .docx whose one part inflates to ``inflated`` bytes of zeros."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as f:
            block = b"\0" * (1 << 20)
            for _ in range(inflated >> 20):
                f.write(block)
    return path


def write_pdf_bomb(path: Path, inflated: int = 1 << 30) -> Path:
    """A hand-made PDF whose page content stream is ``inflated`` bytes deflated (~1 MB)."""
    c = zlib.compressobj(9)
    chunk = b"0" * (1 << 20)
    data = b"".join(c.compress(chunk) for _ in range(inflated >> 20)) + c.flush()
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + obj + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    )
    path.write_bytes(out.getvalue())
    return path


# Fault injection for the sandbox (importable by its worker processes).
def hang(job: object) -> object:
    import time

    if job == "hang":
        time.sleep(3600)
    if job == "crash":
        import os

        os._exit(7)
    if job == "hog":
        return bytearray(4 << 30)  # 4 GiB, past the worker's memory bound
    return f"parsed {job}"


def docs_with_manuals(parent: Path, word: bool = True) -> Path:
    """``parent/docs``: the project's own docs (Markdown) beside a real PDF manual and, with
    ``word``, a Word file."""
    root = parent / "docs"
    shutil.copytree(ROOT / "docs", root / "project", ignore=shutil.ignore_patterns("*.png"))
    (root / "manuals").mkdir()
    write_guide_pdf(root / "manuals" / "guide.pdf")
    if word:
        write_docx(root / "manuals" / "warranty.docx")
    return root
