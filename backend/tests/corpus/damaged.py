"""Damaged files as real downloads and real writers leave them, with what each page should give.

Written object by object, so the damage lands exactly where it does in the
wild: a download cut after page 1 that takes with it the ICC profile and the
font program page 1 shares with the pages after it; a download that loses the
page tree written at the end, as TeX writes it; a page tree one of whose
kids is gone, or that counts more pages than it holds; a file whose page
objects are packed in object streams compressed with a filter nobody decodes.

Each DamagedFixture says which pages are lost (placeholders), which are kept
with substitutes, and, for a file that must be refused, the error code. The
expected text of a page comes from its text layer (born-digital pages) or from
the text drawn into its scan.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont, TTFontFile

from app.pdf.samples import DPI, page_text, render_scan, wrapped
from tests.corpus import Fixture
from tests.corpus.pdf_objects import (
    classic_pdf,
    grey_profile,
    srgb_profile,
    stream_object,
    with_object_stream,
)

_LETTER = (612, 792)
_VERA = Path(pdfmetrics.__file__).parent.parent / "fonts" / "Vera.ttf"


@dataclass(frozen=True, slots=True)
class DamagedFixture:
    fixture: Fixture
    lost_pages: tuple[int, ...]  # pages the repair must replace by marked placeholders
    repaired_pages: tuple[int, ...] = ()  # pages kept with a substitute (a lost ICC profile, font, ...)
    error_code: str | None = None  # set when the file must be refused, with this code


def build_all(directory: Path) -> list[DamagedFixture]:
    directory.mkdir(parents=True, exist_ok=True)
    return [
        truncated_shared_resources(directory / "truncated-shared-resources.pdf"),
        truncated_shared_resources(directory / "truncated-first-page-table.pdf", first_page_table=True),
        truncated_scan_colour_space(directory / "truncated-scan-colour-space.pdf"),
        truncated_page_tree(directory / "truncated-page-tree.pdf"),
        broken_page_tree(directory / "broken-page-tree.pdf"),
        overcounted_page_tree(directory / "overcounted-page-tree.pdf"),
        looping_page_tree(directory / "looping-page-tree.pdf"),
        unsupported_filter(directory / "unsupported-filter.pdf"),
        page_in_unsupported_filter(directory / "page-in-unsupported-filter.pdf"),
    ]


# -- truncated files -----------------------------------------------------------------------------


def truncated_shared_resources(
    path: Path, pages: int = 6, seed: int = 11, *, first_page_table: bool = False
) -> DamagedFixture:
    """Pages sharing one ICCBased colour space and one embedded TrueType font; the download stops
    right after page 1's objects, inside the ICC profile that follows them.

    Page 1's content and image survive; the profile and the font program (written after page 1,
    where writers put shared objects on first use) do not, nor do pages 2 on. With
    first_page_table the cross-reference table follows page 1's objects, as in a linearized
    ("fast web view") file: PDFium then opens the cut file by itself.
    """
    texts = [_lines(page_text(i, seed, sentences=3)) for i in range(pages)]
    font = _vera_font(descriptor=4, program=10)
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: font.dictionary,
        4: font.descriptor,
        8: b"[/ICCBased 9 0 R]",
        9: stream_object(b"/N 3", srgb_profile(), compress=True),
        10: stream_object(b"/Length1 %d" % len(font.program), font.program, compress=True),
    }
    kids = []
    order = [1, 2, 3, 4, 8]
    for index in range(pages):
        page, content, image = 11 + 3 * index, 12 + 3 * index, 13 + 3 * index
        kids.append(page)
        objects[page] = _page(content, b"/Font << /F1 3 0 R >> /XObject << /Im0 %d 0 R >>" % image)
        objects[content] = stream_object(b"", _text_and_image(texts[index], "/F1", "/Im0"), compress=True)
        objects[image] = _image(_picture(index), b"/ColorSpace 8 0 R")
        order += [page, content, image] + ([9, 10] if index == 0 else [])
    objects[2] = _tree(kids)
    data, offsets = classic_pdf(objects, order, table_after=13 if first_page_table else None)
    path.write_bytes(data[: offsets[9] + 200])  # a few bytes into the ICC profile
    expected = (texts[0], *("",) * (pages - 1))
    note = "cut after page 1 inside the shared ICC profile; the shared font program is lost too"
    name = "truncated-first-page-table" if first_page_table else "truncated-shared-resources"
    return DamagedFixture(Fixture(name, path, expected, note), tuple(range(2, pages + 1)), (1,))


def truncated_scan_colour_space(path: Path, seed: int = 12) -> DamagedFixture:
    """Two scanned pages (grey JPEGs) sharing a colour space object written after page 1's image;
    the file is cut there, so page 1's scan survives without the colour space it names."""
    texts = [page_text(i, seed, sentences=6) for i in range(2)]
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        7: b"[/ICCBased 8 0 R]",
        8: stream_object(b"/N 1", grey_profile(), compress=True),
    }
    order = [1, 2]
    kids = []
    for index, text in enumerate(texts):
        page, content, image = 10 + 3 * index, 11 + 3 * index, 12 + 3 * index
        kids.append(page)
        objects[page] = _page(content, b"/XObject << /Im0 %d 0 R >>" % image)
        objects[content] = stream_object(b"", b"q 612 0 0 792 0 0 cm /Im0 Do Q", compress=False)
        objects[image] = _jpeg(render_scan(text), b"/ColorSpace 7 0 R")
        order += [page, content, image] + ([7, 8] if index == 0 else [])
    objects[2] = _tree(kids)
    data, offsets = classic_pdf(objects, order)
    path.write_bytes(data[: offsets[7] + 10])
    expected = (wrapped(texts[0]), "")
    note = "page 1 is a scan whose colour space object is cut off: without a substitute it draws blank"
    return DamagedFixture(Fixture("truncated-scan-colour-space", path, expected, note), (2,), (1,))


def truncated_page_tree(path: Path, pages: int = 4, seed: int = 17) -> DamagedFixture:
    """Pages written as TeX writes them (each page's content, then its page object; the page tree
    and the catalog last); the download stops inside the page tree, so every page survives but
    nothing says their order except where they are in the file."""
    texts = [_lines(page_text(i, seed, sentences=2)) for i in range(pages)]
    tree = 3 + 2 * pages
    objects: dict[int, bytes] = {2: _helvetica()}
    order = [2]
    for index, text in enumerate(texts):
        content, page = 3 + 2 * index, 4 + 2 * index
        objects[content] = stream_object(b"", _text(text, "/F1"), compress=True)
        objects[page] = _page(content, b"/Font << /F1 2 0 R >>", parent=tree)
        order += [content, page]
    objects[tree] = _tree([4 + 2 * i for i in range(pages)])
    objects[1] = b"<< /Type /Catalog /Pages %d 0 R >>" % tree
    data, offsets = classic_pdf(objects, [*order, tree, 1])
    path.write_bytes(data[: offsets[tree] + 20])
    note = "the page tree and catalog, written last, are cut off; the pages are in file order"
    return DamagedFixture(Fixture("truncated-page-tree", path, tuple(texts), note), ())


# -- broken page trees ---------------------------------------------------------------------------


def broken_page_tree(path: Path, seed: int = 13) -> DamagedFixture:
    """Five text pages in two branches; the third page's object is freed in the xref (a bad edit).

    PDFium opens the file and counts five pages but cannot find the third; pdftotext reads the
    other four.
    """
    texts = [_lines(page_text(i, seed, sentences=3)) for i in range(5)]
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 5 >>",
        3: b"<< /Type /Pages /Parent 2 0 R /Kids [6 0 R 8 0 R] /Count 2 >>",
        4: b"<< /Type /Pages /Parent 2 0 R /Kids [10 0 R 12 0 R 14 0 R] /Count 3 >>",
        5: _helvetica(),
    }
    for index, text in enumerate(texts):
        page, content = 6 + 2 * index, 7 + 2 * index
        objects[page] = _page(content, b"/Font << /F1 5 0 R >>", parent=3 if index < 2 else 4)
        objects[content] = stream_object(b"", _text(text, "/F1"), compress=True)
    del objects[10]  # page 3: freed
    data, _ = classic_pdf(objects, size=16)
    path.write_bytes(data)
    expected = (texts[0], texts[1], "", texts[3], texts[4])
    return DamagedFixture(Fixture("broken-page-tree", path, expected, "page 3's object is freed"), (3,))


def overcounted_page_tree(path: Path, seed: int = 14) -> DamagedFixture:
    """Three text pages under a page tree whose /Count says four (a page removed by hand)."""
    texts = [_lines(page_text(i, seed, sentences=3)) for i in range(3)]
    objects: dict[int, bytes] = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 3: _helvetica()}
    for index, text in enumerate(texts):
        objects[4 + 2 * index] = _page(5 + 2 * index, b"/Font << /F1 3 0 R >>")
        objects[5 + 2 * index] = stream_object(b"", _text(text, "/F1"), compress=True)
    objects[2] = b"<< /Type /Pages /Kids [4 0 R 6 0 R 8 0 R] /Count 4 >>"
    data, _ = classic_pdf(objects)
    path.write_bytes(data)
    expected = (*texts, "")
    return DamagedFixture(Fixture("overcounted-page-tree", path, expected, "/Count 4 over 3 kids"), (4,))


def looping_page_tree(path: Path, seed: int = 18) -> DamagedFixture:
    """Two text pages under a branch of the page tree whose first kid leads back up to it.

    PDFium counts two pages but finds neither (it refused the file: "none of its 2 pages can be
    found"); pdftotext reads both. The repair walks the tree once: the loop is a lost page where
    it stands (first), then the two pages in the tree's order.
    """
    texts = [_lines(page_text(i, seed, sentences=3)) for i in range(2)]
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 2 >>",
        3: b"<< /Type /Pages /Parent 2 0 R /Kids [4 0 R 10 0 R] /Count 2 >>",
        4: b"<< /Type /Pages /Parent 3 0 R /Kids [5 0 R 8 0 R] /Count 1 >>",
        5: b"<< /Type /Pages /Parent 4 0 R /Kids [3 0 R] /Count 0 >>",
        6: _helvetica(),
    }
    for (page, parent), text in zip(((8, 4), (10, 3)), texts, strict=True):
        objects[page] = _page(page + 1, b"/Font << /F1 6 0 R >>", parent=parent)
        objects[page + 1] = stream_object(b"", _text(text, "/F1"), compress=True)
    data, _ = classic_pdf(objects)
    path.write_bytes(data)
    expected = ("", *texts)
    return DamagedFixture(Fixture("looping-page-tree", path, expected, "a branch loops back up"), (1,))


# -- compression nobody decodes ------------------------------------------------------------------


def unsupported_filter(path: Path, seed: int = 15) -> DamagedFixture:
    """Page tree and pages packed in an object stream compressed with /LZMADecode (no PDF filter)."""
    texts = [_lines(page_text(i, seed, sentences=2)) for i in range(2)]
    packed = {
        2: b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        3: _page(5, b"/Font << /F1 7 0 R >>"),
        4: _page(6, b"/Font << /F1 7 0 R >>"),
        7: _helvetica(),
    }
    plain = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        5: stream_object(b"", _text(texts[0], "/F1"), compress=True),
        6: stream_object(b"", _text(texts[1], "/F1"), compress=True),
    }
    path.write_bytes(with_object_stream(plain, packed, b"/LZMADecode"))
    note = "the page tree is in an object stream whose filter no reader knows"
    return DamagedFixture(
        Fixture("unsupported-filter", path, ("", ""), note), (), error_code="unsupported_compression"
    )


def page_in_unsupported_filter(path: Path, seed: int = 16) -> DamagedFixture:
    """Three text pages; the second page's object alone sits in an object stream compressed with
    /JBIG2Decode (an image codec): PDFium opens the file and cannot find that page."""
    texts = [_lines(page_text(i, seed, sentences=2)) for i in range(3)]
    plain = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>",
        3: _page(6, b"/Font << /F1 9 0 R >>"),
        5: _page(8, b"/Font << /F1 9 0 R >>"),
        6: stream_object(b"", _text(texts[0], "/F1"), compress=True),
        7: stream_object(b"", _text(texts[1], "/F1"), compress=True),
        8: stream_object(b"", _text(texts[2], "/F1"), compress=True),
        9: _helvetica(),
    }
    packed = {4: _page(7, b"/Font << /F1 9 0 R >>")}
    path.write_bytes(with_object_stream(plain, packed, b"/JBIG2Decode"))
    expected = (texts[0], "", texts[2])
    note = "page 2's object is in an object stream compressed with an image codec"
    return DamagedFixture(Fixture("page-in-unsupported-filter", path, expected, note), (2,))


# -- writing -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Font:
    dictionary: bytes
    descriptor: bytes
    program: bytes


def _vera_font(descriptor: int, program: int) -> _Font:
    """Bitstream Vera (shipped with reportlab) as a simple TrueType font in WinAnsiEncoding."""
    if "Vera" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("Vera", str(_VERA)))
    widths = b" ".join(b"%d" % round(pdfmetrics.stringWidth(chr(c), "Vera", 1000)) for c in range(32, 127))
    info = TTFontFile(str(_VERA))
    box = b" ".join(b"%d" % round(v) for v in info.bbox)
    return _Font(
        b"<< /Type /Font /Subtype /TrueType /BaseFont /BitstreamVeraSans-Roman /FirstChar 32 /LastChar 126 "
        b"/Widths [%s] /Encoding /WinAnsiEncoding /FontDescriptor %d 0 R >>" % (widths, descriptor),
        b"<< /Type /FontDescriptor /FontName /BitstreamVeraSans-Roman /Flags 32 /FontBBox [%s] "
        b"/ItalicAngle 0 /Ascent %d /Descent %d /CapHeight %d /StemV %d /FontFile2 %d 0 R >>"
        % (box, round(info.ascent), round(info.descent), round(info.capHeight), info.stemV, program),
        _VERA.read_bytes(),
    )


def _helvetica() -> bytes:
    return b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"


def _page(content: int, resources: bytes, parent: int = 2) -> bytes:
    return b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Resources << %s >> /Contents %d 0 R >>" % (
        parent,
        *_LETTER,
        resources,
        content,
    )


def _tree(kids: list[int]) -> bytes:
    return b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))


def _lines(text: str) -> str:
    return "\n".join(wrapped(text).replace("\n\n", "\n").split("\n"))


def _text(text: str, font: str) -> bytes:
    shown = b" T*\n".join(b"(%s) Tj" % _escape(line) for line in text.split("\n"))
    return b"BT\n%s 11 Tf 13.2 TL 72 720 Td\n%s\nET\n" % (font.encode(), shown)


def _text_and_image(text: str, font: str, image: str) -> bytes:
    return b"q 240 0 0 120 72 80 cm %s Do Q\n" % image.encode() + _text(text, font)


def _escape(line: str) -> bytes:
    return line.encode("cp1252").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _picture(seed: int) -> Image.Image:
    """A small colour drawing: bands and a disc, so a page that lost it is easy to tell apart."""
    image = Image.new("RGB", (160, 80), (250, 240, 200))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 159, 20), fill=(30 + 20 * seed, 90, 160))
    draw.ellipse((60, 25, 110, 75), fill=(200, 40, 40))
    return image


def _image(picture: Image.Image, colour_space: bytes) -> bytes:
    header = b"/Type /XObject /Subtype /Image /Width %d /Height %d /BitsPerComponent 8 " % picture.size
    return stream_object(header + colour_space, picture.tobytes(), compress=True)


def _jpeg(scan: Image.Image, colour_space: bytes) -> bytes:
    encoded = io.BytesIO()
    scan.save(encoded, "JPEG", quality=60, dpi=(DPI, DPI))
    header = b"/Type /XObject /Subtype /Image /Width %d /Height %d /BitsPerComponent 8 " % scan.size
    return stream_object(header + colour_space + b" /Filter /DCTDecode", encoded.getvalue(), compress=False)
