"""Where a PDF ends: a file cut short is rebuilt (app.pdf.repair), and bytes after a complete file's
last %%EOF that are not the PDF's (padding, a server's error page) are skipped as readers skip
them. Taking them for a cut rebuilt the whole file in memory and warned it was truncated."""

from __future__ import annotations

import random
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest

from app.pdf.inspect import inspect_pdf
from app.pdf.repair import _highest_object_number, repair_pdf
from app.pdf.samples import make_born_digital_pdf
from app.pdf.source import is_cut_short, is_truncated, readable_source

HTML = (
    b"\r\n<!DOCTYPE html><html><head><title>502</title></head><body><object data='x'></object>"
    + (b"<p>Bad gateway</p>" * 300)
    + b"</body></html>\n"
)


def _page_words(path: Path) -> list[list[str]]:
    document = pdfium.PdfDocument(path)
    try:
        return [document[i].get_textpage().get_text_bounded().split() for i in range(len(document))]
    finally:
        document.close()


def _junk(kind: str) -> bytes:
    if kind == "zeros":
        return b"\0" * 8192
    if kind == "html":
        return HTML
    # bytes of no format, more than the 2 KiB the end used to be looked for in (seeded: the same
    # bytes every run, none of which happen to spell a PDF keyword)
    return random.Random(5).randbytes(300_000)


@pytest.mark.parametrize("kind", ["zeros", "html", "random"])
def test_what_follows_a_complete_file_is_skipped_and_the_file_read_as_it_is(
    tmp_path: Path, kind: str
) -> None:
    whole, padded = tmp_path / "whole.pdf", tmp_path / "padded.pdf"
    texts = make_born_digital_pdf(whole, pages=6, seed=2)
    padded.write_bytes(whole.read_bytes() + _junk(kind))

    assert not is_truncated(padded)
    info = inspect_pdf(padded)
    assert info.page_count == 6
    assert info.warnings == ()
    assert info.readable is None  # no directory to keep a copy in: PDFium reads the file itself
    assert _page_words(padded) == [text.split() for text in texts]
    # Planning reads the PDF without what follows it, which PDFium would parse at every open.
    kept = tmp_path / "kept"
    kept.mkdir()
    planned = inspect_pdf(padded, keep_repair_in=kept)
    assert planned.warnings == ()
    assert planned.readable is not None
    assert planned.readable.read_bytes().rstrip() == whole.read_bytes().rstrip()
    source = readable_source(padded, tmp_path)
    assert source.report is None  # no rebuild: a copy of the file's own bytes
    assert source.path.read_bytes() == planned.readable.read_bytes()
    assert _page_words(source.path) == [text.split() for text in texts]


def test_a_few_bytes_after_the_end_are_left_where_they_are(tmp_path: Path) -> None:
    """PDFium finds the file's end past 2 KiB of them: no copy is made."""
    padded = tmp_path / "padded.pdf"
    make_born_digital_pdf(padded, pages=2, seed=2)
    padded.write_bytes(padded.read_bytes() + b"\0" * 2000)
    assert inspect_pdf(padded, keep_repair_in=tmp_path).readable is None
    assert readable_source(padded, tmp_path).path == padded


def test_an_update_cut_short_after_a_complete_revision_is_a_cut(tmp_path: Path) -> None:
    """An incremental update appends objects, a table and a %%EOF after the first revision's: cut
    before its own %%EOF, the file ends in objects after a %%EOF."""
    path = tmp_path / "update.pdf"
    make_born_digital_pdf(path, pages=3, seed=1)
    update = (
        b"\n40 0 obj\n<< /Length 44 >>\nstream\nBT /F1 12 Tf 72 700 Td (UPDATED) Tj ET\nendstream\nendobj\n"
    )
    path.write_bytes(path.read_bytes() + update)
    assert is_truncated(path)
    path.write_bytes(path.read_bytes() + b"xref\n0 1\n0000000000 65535 f \n")
    assert is_truncated(path)
    (warning,) = inspect_pdf(path).warnings
    assert warning.startswith("the file is truncated")


def test_a_linearized_file_cut_after_its_first_page_is_a_cut(tmp_path: Path) -> None:
    """A linearized file has a %%EOF after its first page's objects, near its start: the rest of the
    file follows it, and a download cut anywhere in the rest is cut short."""
    plain, linear = tmp_path / "plain.pdf", tmp_path / "linear.pdf"
    make_born_digital_pdf(plain, pages=12, seed=3)
    with pikepdf.open(plain) as pdf:
        pdf.save(linear, linearize=True)
    data = linear.read_bytes()
    first_eof = data.find(b"%%EOF")
    assert 0 < first_eof < data.rfind(b"%%EOF")  # linearized: two ends
    linear.write_bytes(data[: int(len(data) * 0.7)])
    assert first_eof < int(len(data) * 0.7)
    assert is_truncated(linear)
    (warning,) = inspect_pdf(linear).warnings
    assert "truncated" in warning


@pytest.mark.parametrize(
    ("tail", "cut"),
    [
        (b"trailer\n<< /Size 9 >>\nstartxref\n123\n%%EOF\n", False),
        (b"startxref\n123\n%%EOF\r\n\0\0\0\0", False),
        (b"startxref\n123\n%%EOF" + HTML, False),
        (b"startxref\n123\n%%EOF\n%%EOF\n", False),
        (b"endobj\nxref\n0 9\n", True),  # no %%EOF at all
        (b"startxref\n123\n", True),
        (b"%%EOF\n12 0 obj\n<< /Length 5 >>", True),
        (b"%%EOF\r\n12\r\n0\r\nobj", True),
        (b"%%EOF\nxref\n0 1\n", True),
        (b"%%EOF\n<< /Root 1 0 R >>\ntrailer", True),
        (b"", True),
    ],
)
def test_cut_short_is_no_eof_or_more_pdf_after_the_last(tail: bytes, cut: bool) -> None:
    assert is_cut_short(tail) is cut


def test_an_eof_however_far_from_the_end_is_found(tmp_path: Path) -> None:
    """Megabytes of junk after a complete file (a transfer that appended another file's bytes) are
    skipped too: the file was rebuilt, and warned truncated, past 1 MiB of them."""
    path = tmp_path / "far.pdf"
    texts = make_born_digital_pdf(path, pages=2, seed=1)
    path.write_bytes(path.read_bytes() + b"\0" * (3 << 20) + random.Random(9).randbytes(3 << 20))
    assert not is_truncated(path)
    info = inspect_pdf(path)
    assert info.warnings == ()
    assert _page_words(path) == [text.split() for text in texts]
    cut = tmp_path / "cut.pdf"  # and the same junk after a file cut short is no end either
    cut.write_bytes(path.read_bytes()[: path.read_bytes().rfind(b"%%EOF") - 40] + b"\0" * (3 << 20))
    assert is_truncated(cut)


@pytest.mark.parametrize(
    ("data", "highest"),
    [
        (b"1 0 obj\n<<>>\nendobj\n12 0 obj\n<<>>\nendobj\n3 0 obj", 12),
        (b"%PDF-1.7\r\n7\r\n0\r\nobj<</Type/Catalog>>endobj", 7),
        (b"\x00\xff9 0 objects 4 0 obj", 4),  # "objects" is no keyword
        (b"endobj endobj obj 5 obj", 0),  # no number pair before either
        (b"1234567 0 obj", 1234567),
        (b"random \x89\x13 5 5 5 digits 99 0 objx", 0),
    ],
)
def test_the_highest_object_number_is_read_from_the_headers(data: bytes, highest: int) -> None:
    assert _highest_object_number(data, len(data)) == highest
    assert _highest_object_number(data + b"\n88 0 obj", len(data)) == highest  # stop is respected


def test_a_file_cut_through_its_pages_is_rebuilt_with_every_surviving_page(tmp_path: Path) -> None:
    """qpdf writes the page tree first and the pages' content last: cut at 30 %, every page object
    is there and most contents are gone. Each lost content is a reference to nothing, answered from
    the table pypdf rebuilt (it searched the whole file again for each: 10 s for this 1.9 MB file)."""
    source, cut = tmp_path / "plain.pdf", tmp_path / "cut.pdf"
    texts = make_born_digital_pdf(source, pages=400, seed=3)
    with pikepdf.open(source) as pdf:
        pdf.save(cut, object_stream_mode=pikepdf.ObjectStreamMode.disable)
    data = cut.read_bytes()
    cut.write_bytes(data[: int(len(data) * 0.3)])
    report = repair_pdf(cut, tmp_path / "fixed.pdf")
    assert report.page_count == 400
    kept = [number for number in range(1, 401) if number not in report.lost_pages]
    assert kept == list(range(1, len(kept) + 1))
    assert 0 < len(kept) < 400
    words = _page_words(tmp_path / "fixed.pdf")
    assert [words[number - 1] for number in kept] == [texts[number - 1].split() for number in kept]
