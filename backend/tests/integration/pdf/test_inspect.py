"""Validation on real files: every kind of bad input has its own error class and code."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest

from app.core.errors import InvalidInputError
from app.engines._pages import image_coverage
from app.pdf import object_scan
from app.pdf.errors import (
    DamagedPdfError,
    EmptyFileError,
    EncryptedPdfError,
    NoPagesError,
    NotAPdfError,
    ObjectsTooLargeError,
    PdfError,
    PdfNotFoundError,
)
from app.pdf.inspect import PdfInfo, inspect_pdf
from app.pdf.repair import repair_pdf
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from tests.pdf_factories import (
    make_broken_xref_pdf,
    make_empty_file,
    make_encrypted_pdf,
    make_not_a_pdf,
    make_owner_locked_pdf,
    make_truncated_pdf,
    make_zero_page_pdf,
)


def page_texts(path: Path) -> list[str]:
    document = pdfium.PdfDocument(path)
    try:
        return [str(document[i].get_textpage().get_text_bounded()) for i in range(len(document))]
    finally:
        document.close()


def test_a_good_pdf(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "a.pdf", pages=7)
    data = (tmp_path / "a.pdf").read_bytes()
    with pikepdf.open(tmp_path / "a.pdf") as pdf:
        objects = len(pdf.objects)
    assert inspect_pdf(tmp_path / "a.pdf") == PdfInfo(
        tmp_path / "a.pdf", 7, hashlib.sha256(data).hexdigest(), len(data), (), objects=objects
    )


def test_the_hash_streams_over_blocks(tmp_path: Path) -> None:
    path = tmp_path / "big.pdf"
    make_born_digital_pdf(path, pages=1)
    with path.open("ab") as handle:  # bytes after %%EOF are ignored by readers, not by the hash
        handle.write(b"%" + bytes(3 * 2**20))
    assert inspect_pdf(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_that_names_no_font_has_no_text_to_read(tmp_path: Path) -> None:
    make_scanned_pdf(tmp_path / "scan.pdf", pages=2)
    make_born_digital_pdf(tmp_path / "born.pdf", pages=2)
    assert not inspect_pdf(tmp_path / "scan.pdf").may_have_text  # an image a page: OCR only
    assert inspect_pdf(tmp_path / "born.pdf").may_have_text


def test_a_font_named_anywhere_in_the_file_is_found(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    make_scanned_pdf(path, pages=1)
    with path.open("ab") as handle:  # "/Font" across the first mebibyte, after the scan's image
        handle.write(b"%" + b" " * ((1 << 20) - path.stat().st_size - 4) + b"/Font\n")
    assert inspect_pdf(path).may_have_text


BAD_INPUTS: list[tuple[str, Callable[[Path], object], type[PdfError], str]] = [
    ("empty", make_empty_file, EmptyFileError, "empty_file"),
    ("text", lambda p: p.write_text("plain text, not a PDF"), NotAPdfError, "not_a_pdf"),
    ("png", make_not_a_pdf, NotAPdfError, "not_a_pdf"),
    ("encrypted", make_encrypted_pdf, EncryptedPdfError, "encrypted_pdf"),
    ("zero-pages", make_zero_page_pdf, NoPagesError, "no_pages"),
    ("header-only", lambda p: p.write_bytes(b"%PDF-1.7\n" + bytes(5000)), DamagedPdfError, "damaged_pdf"),
    # cut before the catalog: nothing says which objects are pages
    ("cut-early", lambda p: make_truncated_pdf(p, 20, keep=0.1), DamagedPdfError, "damaged_pdf"),
]


@pytest.mark.parametrize(
    ("make", "error", "code"), [b[1:] for b in BAD_INPUTS], ids=[b[0] for b in BAD_INPUTS]
)
def test_bad_input_has_its_own_error(
    tmp_path: Path, make: Callable[[Path], object], error: type[PdfError], code: str
) -> None:
    path = tmp_path / "bad.pdf"
    make(path)
    with pytest.raises(error) as raised:
        inspect_pdf(path)
    assert type(raised.value) is error
    assert isinstance(raised.value, InvalidInputError)
    assert raised.value.code == code
    assert not raised.value.retryable
    assert str(raised.value)
    assert "\n" not in str(raised.value)


def test_codes_are_distinct() -> None:
    codes = [b[3] for b in BAD_INPUTS]
    assert len(set(codes)) == len({b[2] for b in BAD_INPUTS})


def test_encrypted_then_empty_page_tree_are_told_apart(tmp_path: Path) -> None:
    """PDFium's last-error code is process-wide; a stale one must not mislabel the next file."""
    make_encrypted_pdf(tmp_path / "e.pdf")
    make_zero_page_pdf(tmp_path / "z.pdf")
    with pytest.raises(EncryptedPdfError):
        inspect_pdf(tmp_path / "e.pdf")
    with pytest.raises(NoPagesError):
        inspect_pdf(tmp_path / "z.pdf")


def test_an_encryption_no_reader_here_opens_is_encrypted_not_damaged(tmp_path: Path) -> None:
    """A security handler other than the standard one: neither PDFium nor pypdf opens the file,
    and its repair found nothing readable, so it was said to be "damaged beyond repair"."""
    make_owner_locked_pdf(tmp_path / "locked.pdf")
    data = (tmp_path / "locked.pdf").read_bytes()
    assert b"/Filter /Standard" in data
    (tmp_path / "odd.pdf").write_bytes(data.replace(b"/Filter /Standard", b"/Filter /Xtandard", 1))
    with pytest.raises(EncryptedPdfError):
        inspect_pdf(tmp_path / "odd.pdf")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PdfNotFoundError):
        inspect_pdf(tmp_path / "nope.pdf")
    with pytest.raises(PdfNotFoundError):
        inspect_pdf(tmp_path)  # a directory


def test_owner_password_only_is_read_with_a_warning(tmp_path: Path) -> None:
    texts = make_owner_locked_pdf(tmp_path / "locked.pdf", pages=2)
    info = inspect_pdf(tmp_path / "locked.pdf")
    assert info.page_count == 2
    assert len(info.warnings) == 1
    assert "owner password" in info.warnings[0]
    assert [t.split() for t in page_texts(tmp_path / "locked.pdf")] == [t.split() for t in texts]


def test_broken_xref_is_rebuilt_silently(tmp_path: Path) -> None:
    make_broken_xref_pdf(tmp_path / "x.pdf", pages=5)
    info = inspect_pdf(tmp_path / "x.pdf")
    assert info.page_count == 5
    assert info.warnings == ()


def test_a_truncated_file_is_repaired_and_the_lost_pages_named(tmp_path: Path) -> None:
    texts = make_truncated_pdf(tmp_path / "cut.pdf", pages=20, keep=0.6, seed=4)
    info = inspect_pdf(tmp_path / "cut.pdf")
    report = repair_pdf(tmp_path / "cut.pdf", tmp_path / "fixed.pdf")
    # Numbering is kept: 20 pages, the lost ones blank, named in one warning.
    assert info.page_count == report.page_count == 20
    assert 0 < len(report.lost_pages) < 20
    assert len(info.warnings) == 1
    assert "truncated" in info.warnings[0]
    first_lost, last_lost = report.lost_pages[0], report.lost_pages[-1]
    assert report.lost_pages == tuple(range(first_lost, 21))  # a cut file loses its tail
    assert f"pages {first_lost}-{last_lost}" in info.warnings[0]
    for number, text in enumerate(page_texts(tmp_path / "fixed.pdf"), start=1):
        if number in report.lost_pages:
            assert text.strip() == ""
        else:
            assert text.split() == texts[number - 1].split()


def test_a_truncated_scan_keeps_its_page_numbers(tmp_path: Path) -> None:
    """PIL writes page after page: the cut loses whole page objects, not just their contents."""
    path = tmp_path / "scan.pdf"
    make_scanned_pdf(path, pages=3, seed=1)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.5)])
    info = inspect_pdf(path)
    report = repair_pdf(path, tmp_path / "fixed.pdf")
    assert info.page_count == report.page_count == 3
    assert report.lost_pages == (2, 3)  # page 1's image survives the cut at half the file
    assert "2 of 3 pages lost (pages 2-3, left blank)" in info.warnings[0]
    document = pdfium.PdfDocument(tmp_path / "fixed.pdf")
    try:
        for number in range(1, 4):
            has_image = image_coverage(document[number - 1]) > 0.9
            assert has_image is (number not in report.lost_pages)
    finally:
        document.close()


def test_a_header_after_the_first_kilobyte_is_refused_saying_where_it_was_looked_for(tmp_path: Path) -> None:
    path = tmp_path / "late.pdf"
    make_scanned_pdf(tmp_path / "scan.pdf", pages=1)
    path.write_bytes(b"x" * 5000 + (tmp_path / "scan.pdf").read_bytes())
    with pytest.raises(NotAPdfError, match=r"^not a PDF \(no %PDF- header in its first 1024 bytes\)$"):
        inspect_pdf(path)


def test_attached_files_are_named_in_one_line(tmp_path: Path) -> None:
    """A portfolio's documents, or an email's attachments, are files behind the pages: not read,
    and said so. Names come from the file: printable only, cut short, the first five."""
    path = tmp_path / "attached.pdf"
    make_born_digital_pdf(path, 1)
    hostile = "evil\nname\x1b[31m" + "x" * 500
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        for name in ["contract.docx", hostile, "c.xlsx", "d.eml", "e.pdf", "f.pdf", "g.pdf"]:
            pdf.attachments[name] = pikepdf.AttachedFileSpec(pdf, b"data", filename=name)
        pdf.save(path)

    (warning,) = [w for w in inspect_pdf(path).warnings if "attached" in w]

    assert warning.startswith("the PDF carries 7 attached files (")
    assert "contract.docx" in warning
    assert "and 2 more): only its own pages are read, not them" in warning
    assert warning.isprintable()  # one line: no newline or escape from the file
    assert len(warning) < 400


@pytest.mark.parametrize("needs_rendering", [True, False])
def test_a_dynamic_xfa_form_is_said_to_be_unread(tmp_path: Path, needs_rendering: bool) -> None:
    """Dynamic XFA: the pages are a placeholder a viewer without XFA shows ("Please wait...").
    A static XFA form (NeedsRendering unset) has its AcroForm pages: they are the document."""
    path = tmp_path / "xfa.pdf"
    make_born_digital_pdf(path, 1)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        pdf.Root.AcroForm = pikepdf.Dictionary(Fields=pikepdf.Array(), XFA=pdf.make_stream(b"<xdp:xdp/>"))
        if needs_rendering:
            pdf.Root.NeedsRendering = True
        pdf.save(path)

    said = [w for w in inspect_pdf(path).warnings if "XFA" in w]

    assert len(said) == int(needs_rendering)


def test_a_plain_file_has_no_such_warning(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "plain.pdf", 2)
    assert inspect_pdf(tmp_path / "plain.pdf").warnings == ()


def test_a_catalog_in_an_object_stream_bomb_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    """PDFium inflates a whole object stream to read one object of it: 1 MB whose catalog sat in
    an object stream of 1 GiB took 2 GB to open, in the API's planning."""
    path = tmp_path / "bomb.pdf"
    data = zlib.compress(b"1 0 " + b" " * (object_scan.MAX_OBJECT_STREAM_BYTES + 1), 9)
    head = b"1 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length " + str(len(data)).encode()
    tail = b"\nendstream\nendobj\ntrailer << /Root 2 0 R >>\n%%EOF\n"
    path.write_bytes(b"%PDF-1.7\n" + head + b" >>\nstream\n" + data + tail)

    with pytest.raises(ObjectsTooLargeError, match="decompression bomb") as raised:
        inspect_pdf(path)
    assert raised.value.code == "objects_too_large"
