"""Validation and splitting on real files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from app.core.errors import InvalidInputError
from app.pdf.errors import (
    DamagedPdfError,
    EmptyFileError,
    EncryptedPdfError,
    NoPagesError,
    NotAPdfError,
    PdfNotFoundError,
)
from app.pdf.inspect import inspect_pdf
from app.pdf.plan import plan_chunks
from app.pdf.samples import (
    make_born_digital_pdf,
    make_broken_xref_pdf,
    make_encrypted_pdf,
    make_truncated_pdf,
    make_zero_page_pdf,
)
from app.pdf.split import split_pdf


def test_good_pdf(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "a.pdf", pages=7)
    info = inspect_pdf(tmp_path / "a.pdf")
    assert info.page_count == 7
    assert info.sha256 == hashlib.sha256((tmp_path / "a.pdf").read_bytes()).hexdigest()
    assert info.warnings == ()


@pytest.mark.parametrize(
    ("make", "error", "code"),
    [
        (lambda p: p.write_bytes(b""), EmptyFileError, "empty_file"),
        (lambda p: p.write_text("plain text, not a PDF"), NotAPdfError, "not_a_pdf"),
        (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100)), NotAPdfError, "not_a_pdf"),
        (make_encrypted_pdf, EncryptedPdfError, "encrypted_pdf"),
        (make_zero_page_pdf, NoPagesError, "no_pages"),
        (lambda p: make_truncated_pdf(p, 20, keep=0.6), DamagedPdfError, "damaged_pdf"),
        (lambda p: p.write_bytes(b"%PDF-1.7\n" + bytes(5000)), DamagedPdfError, "damaged_pdf"),
    ],
    ids=["empty", "text", "png", "encrypted", "zero-pages", "truncated", "garbage"],
)
def test_bad_input_has_its_own_error(tmp_path: Path, make, error: type[InvalidInputError], code: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.pdf"
    make(path)
    with pytest.raises(error) as raised:
        inspect_pdf(path)
    assert raised.value.code == code
    assert not raised.value.retryable
    assert "\n" not in str(raised.value)


def test_encrypted_then_empty_page_tree_are_told_apart(tmp_path: Path) -> None:
    """PDFium's last-error code is process-wide; a stale one must not mislabel the next file."""
    make_encrypted_pdf(tmp_path / "e.pdf")
    make_zero_page_pdf(tmp_path / "z.pdf")
    with pytest.raises(EncryptedPdfError):
        inspect_pdf(tmp_path / "e.pdf")
    with pytest.raises(NoPagesError):
        inspect_pdf(tmp_path / "z.pdf")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PdfNotFoundError):
        inspect_pdf(tmp_path / "nope.pdf")


def test_broken_xref_is_rebuilt(tmp_path: Path) -> None:
    make_broken_xref_pdf(tmp_path / "x.pdf", pages=5)
    assert inspect_pdf(tmp_path / "x.pdf").page_count == 5


def test_split_keeps_every_page_in_order(tmp_path: Path) -> None:
    texts = make_born_digital_pdf(tmp_path / "a.pdf", pages=11, seed=3)
    ranges = plan_chunks(11, 4, 2, "auto")
    pieces = list(split_pdf(tmp_path / "a.pdf", ranges))
    assert [r for r, _ in pieces] == ranges
    for page_range, data in pieces:
        document = pdfium.PdfDocument(data)
        assert len(document) == page_range.page_count
        for k in range(len(document)):
            text = document[k].get_textpage().get_text_bounded()
            assert text.split() == texts[page_range.page_start - 1 + k].split()
        document.close()
