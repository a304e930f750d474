"""PDF generators only the tests need: mixed, stamped and hostile files, and the cer score.

The good samples (make_scanned_pdf, make_born_digital_pdf) ship in the app, app.pdf.samples,
where `chunk-ocr sample` uses them with the app's own dependencies. These use the dev group
(reportlab for a text layer over a scan and for pages of odd sizes, rapidfuzz for cer) or
write the bad inputs the service must refuse or repair: encrypted, owner-locked, zero pages,
truncated, broken xref, empty, not a PDF, a page tesseract refuses and a page too large to
render.
"""

from __future__ import annotations

import io
from pathlib import Path

from pypdf import PdfReader, PdfWriter
from pypdf.constants import UserAccessPermissions
from rapidfuzz.distance import Levenshtein
from reportlab.lib.pagesizes import letter
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

from app.pdf.samples import DPI, make_born_digital_pdf, page_text, render_scan, wrapped


def make_mixed_pdf(path: Path, kinds: str, seed: int = 0) -> list[str]:
    """Pages by kind, one letter each: 'd' born-digital, 's' scanned. E.g. 'dsd'."""
    writer = PdfWriter()
    texts = []
    for i, kind in enumerate(kinds):
        single = io.BytesIO()
        if kind == "d":
            tmp = path.with_suffix(f".part{i}.pdf")
            texts += make_born_digital_pdf(tmp, 1, seed * 1000 + i)
            single.write(tmp.read_bytes())
            tmp.unlink()
        elif kind == "s":
            text = page_text(i, seed)
            render_scan(text).save(single, "PDF", resolution=DPI)
            texts.append(wrapped(text))
        else:
            raise ValueError(f"page kind must be 'd' or 's', not {kind!r}")
        writer.append(PdfReader(io.BytesIO(single.getvalue())))
    with path.open("wb") as handle:
        writer.write(handle)
    return texts


def make_scan_with_text_layer(path: Path, overlay: str, *, invisible: bool, seed: int = 0) -> str:
    """One scanned page with a text layer drawn over it; returns the scan's text.

    invisible=True is an OCR layer as scanners write it (render mode 3); False
    is a visible stamp in the bottom margin, as a Bates number is added.
    """
    text = page_text(0, seed)
    pdf = canvas.Canvas(str(path), pagesize=letter, pageCompression=1)
    pdf.drawImage(ImageReader(render_scan(text)), 0, 0, width=letter[0], height=letter[1])
    layer = pdf.beginText(72, 36)
    layer.setFont("Helvetica", 9)
    if invisible:
        layer.setTextRenderMode(3)
    for line in overlay.split("\n"):
        layer.textLine(line)
    pdf.drawText(layer)
    pdf.showPage()
    pdf.save()
    return wrapped(text)


def make_empty_file(path: Path) -> None:
    path.write_bytes(b"")


def make_not_a_pdf(path: Path) -> None:
    """A PNG signature and nothing else: what a wrong upload looks like."""
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))


def make_encrypted_pdf(path: Path, password: str = "secret") -> None:
    source = path.with_suffix(".plain.pdf")
    make_born_digital_pdf(source, 1)
    writer = PdfWriter(clone_from=str(source))
    writer.encrypt(user_password=password, owner_password=password + "-owner")
    with path.open("wb") as handle:
        writer.write(handle)
    source.unlink()


def make_owner_locked_pdf(path: Path, pages: int = 1, seed: int = 0) -> list[str]:
    """Encrypted with an owner password only ("no copying"): opens without a password."""
    source = path.with_suffix(".plain.pdf")
    texts = make_born_digital_pdf(source, pages, seed)
    writer = PdfWriter(clone_from=str(source))
    writer.encrypt(
        user_password="",
        owner_password="owner",
        algorithm="AES-256",
        permissions_flag=UserAccessPermissions(0),
    )
    with path.open("wb") as handle:
        writer.write(handle)
    source.unlink()
    return texts


def make_wide_page_pdf(path: Path) -> None:
    """A 194-inch banner: 58,000 pixels wide at 300 DPI, more than tesseract accepts (32,767)."""
    pdf = canvas.Canvas(str(path), pagesize=(14000, 72))
    pdf.setFont("Helvetica", 40)
    pdf.drawString(10, 20, "A banner far too wide for tesseract")
    pdf.showPage()
    pdf.save()


def make_oversized_page_pdf(path: Path) -> None:
    """A 200 x 200 inch page (the largest PDF 1.7 allows without UserUnit): 3.6 gigapixels at
    300 DPI, so it is OCR'd at the resolution that fits the pixel cap (63 DPI)."""
    pdf = canvas.Canvas(str(path), pagesize=(14400, 14400))
    pdf.setFont("Helvetica", 400)
    pdf.drawString(100, 100, "A poster nobody can render at 300 DPI")
    pdf.showPage()
    pdf.save()


def make_huge_page_pdf(path: Path) -> None:
    """A 2,778 x 1,389 inch page: past PDF's own size limit, but PDFium opens it; too large to OCR
    at any resolution worth it (50 DPI is 9.6 gigapixels)."""
    pdf = canvas.Canvas(str(path), pagesize=(200_000, 100_000))
    pdf.setFont("Helvetica", 4000)
    pdf.drawString(1000, 1000, "HUGE")
    pdf.showPage()
    pdf.save()


def make_zero_page_pdf(path: Path) -> None:
    """A syntactically valid PDF whose page tree is empty."""
    with path.open("wb") as handle:
        PdfWriter().write(handle)


def make_truncated_pdf(path: Path, pages: int, keep: float = 0.6, seed: int = 0) -> list[str]:
    """A born-digital PDF cut short (as an interrupted download is)."""
    texts = make_born_digital_pdf(path, pages, seed)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return texts


def make_broken_xref_pdf(path: Path, pages: int, seed: int = 0) -> list[str]:
    """A born-digital PDF whose startxref points at the wrong offset (readers must rebuild it)."""
    texts = make_born_digital_pdf(path, pages, seed)
    data = path.read_bytes()
    head, _, tail = data.rpartition(b"startxref")
    offset = tail.split()[0]
    path.write_bytes(head + b"startxref" + tail.replace(offset, str(int(offset) // 2).encode(), 1))
    return texts


def between_text_pages(
    path: Path, middle: Path, *, repeat: int = 1, seeds: tuple[int, int] = (5, 6)
) -> list[str]:
    """At path: a born-digital page, middle's pages `repeat` times, another born-digital page (a
    hostile page among sound ones); returns the two text pages' texts."""
    before, after = path.with_name(f"{path.stem}-before.pdf"), path.with_name(f"{path.stem}-after.pdf")
    texts = make_born_digital_pdf(before, pages=1, seed=seeds[0])
    texts += make_born_digital_pdf(after, pages=1, seed=seeds[1])
    writer = PdfWriter()
    for part in (before, *[middle] * repeat, after):
        writer.append(PdfReader(part))
    writer.write(path)
    return texts


def cer(reference: str, hypothesis: str) -> float:
    """Character error rate: edit distance over reference length, whitespace runs collapsed."""
    ref, hyp = " ".join(reference.split()), " ".join(hypothesis.split())
    if not ref:
        return 0.0 if not hyp else 1.0
    return Levenshtein.distance(ref, hyp) / len(ref)
