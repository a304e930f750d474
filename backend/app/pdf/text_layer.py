"""The invisible text layer of a chunk: one PDF page per chunk page, its OCR words as text
that is never drawn (render mode 3) but is found, selected and copied where the word is seen.

A layer page has its source page's media box, crop box and /Rotate, and its words in the
source page's user space, so laid over the source page (graft.py) each word covers its image.
The content works in the pixels of the image OCR read: one `cm` (page_space.ocr_to_page, with
y turned up) takes them to the page, so every position in the text itself is a whole pixel or
a tenth of one, and a dense page compresses to a few kilobytes.

Words of one line (next in reading order, overlapping vertically and going on in the line's
direction) share one font size, the line's height (from its highest word's top to its lowest
word's bottom), and one baseline, a fifth of that above the line's bottom (glyphless.DESCENT),
so each word's glyphs cover its box's width (stretched by Tz) and its line's height. A space
stretched over the gap between two words separates them, so extractors join them with one
space, and lines are apart, so extractors break them. Lines come in the engine's reading order.
"""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

import pikepdf
from pikepdf import Name

from app.models.results import PageText, WordBox
from app.pdf import glyphless
from app.pdf._writer import write_pdf
from app.pdf.errors import TextLayerError
from app.pdf.page_space import DEFAULT_DPI, Affine, inherited, ocr_to_page, page_geometry
from app.pdf.shown_text import ShownText, shown_text

FONT_RESOURCE = b"/GL"  # the name a layer page's resources give the glyphless font
_SAME_LINE_OVERLAP = 0.5  # of the smaller height: words that share less are on different lines
_RIGHT_TO_LEFT = frozenset({"R", "AL"})
_MIN_STRETCH = 0.01  # Tz of a space between words that touch or overlap: there, but no width


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    x0: int
    y0: int
    x1: int
    y1: int
    rtl: bool  # written right to left: its line goes on to the left

    @property
    def height(self) -> int:
        return max(1, self.y1 - self.y0)


def render_text_layer(source_pdf: bytes, pages: Sequence[PageText]) -> bytes:
    """The text layer of a chunk: a PDF of as many pages as source_pdf, page i carrying the
    words of pages[i] (an OCR'd page; a text-layer page, a failed page or one without words
    gives an empty page).

    Page i has the media box, crop box and /Rotate of source_pdf's page i, and each word lies in
    its user space where the word is seen on the displayed page, read from the word's pixel box
    with the page's dpi (300 when None), skew and rotation. A word the page shows itself as
    text where the word lies (a stamp, a born-digital page's words) is left out (shown_text).
    The same inputs give the same bytes. Raises TextLayerError when source_pdf cannot be read
    or its page count is not len(pages)."""
    try:
        source = pikepdf.open(io.BytesIO(source_pdf))
    except pikepdf.PdfError as exc:
        raise TextLayerError(f"the chunk's PDF cannot be read for its text layer: {exc}") from None
    with source:
        if len(source.pages) != len(pages):
            raise TextLayerError(f"the chunk has {len(source.pages)} pages but {len(pages)} results")
        codes = glyphless.Codes()
        shown = shown_text(source_pdf, [index for index, text in enumerate(pages) if _has_words(text)])
        # Objects 1 catalog, 2 page tree, then the font, then each page and its content.
        font = 3
        objects: list[bytes] = [b"", b""] + [b""] * glyphless.FONT_OBJECTS
        kids = []
        for index, (page, text) in enumerate(zip(source.pages, pages, strict=True)):
            kids.append(b"%d 0 R" % (len(objects) + 1))
            objects += _page_objects(
                page.obj, text, codes, number=len(objects) + 1, font=font, shown=shown.get(index)
            )
        objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
        objects[1] = b"<< /Type /Pages /Kids [ %s ] /Count %d >>" % (b" ".join(kids), len(kids))
        objects[font - 1 : font - 1 + glyphless.FONT_OBJECTS] = glyphless.font_objects(font, codes.astral)
    return write_pdf(objects, root=1)


def page_content(
    words: Iterable[WordBox], to_page: Affine, image_height: int, codes: glyphless.Codes
) -> bytes:
    """The content stream of one page's words (empty when none can be written): boxes in pixels
    of an image image_height pixels high, to_page taking those pixels to user space."""
    out = _Content(codes)
    for line in _lines(words):
        out.line(line, image_height)
    if not out.ops:
        return b""
    # y turned up: the text space's y is image_height - the pixel row.
    place = Affine(1, 0, 0, -1, 0, image_height).then(to_page)
    matrix = b" ".join(_number(value, 6) for value in (place.a, place.b, place.c, place.d, place.e, place.f))
    return b"q\n%s cm\nBT\n3 Tr\n%s\nET\nQ\n" % (matrix, b"\n".join(out.ops))


def _has_words(text: PageText) -> bool:
    """Whether the page is OCR'd with words to lay over it."""
    return bool(text.words) and text.source == "ocr" and text.error is None


def _page_objects(
    page: pikepdf.Dictionary,
    text: PageText,
    codes: glyphless.Codes,
    number: int,
    font: int,
    shown: ShownText | None,
) -> list[bytes]:
    """The layer page's dictionary (object `number`) and its content stream, if it has words
    the page does not show itself (shown: the text it does, shown_text)."""
    geometry = page_geometry(page)
    boxes = b"/MediaBox %s" % _array(inherited(page, Name.MediaBox), geometry.media_box)
    if inherited(page, Name.CropBox) is not None:
        boxes += b" /CropBox %s" % _array(inherited(page, Name.CropBox), geometry.crop_box)
    if geometry.rotate:
        boxes += b" /Rotate %d" % geometry.rotate
    content = b""
    if _has_words(text):
        dpi, rotation = text.dpi or DEFAULT_DPI, text.rotation or 0
        if rotation not in (0, 90, 180, 270):
            raise TextLayerError(f"page {text.page_number} was turned {rotation} degrees, not a quarter turn")
        width, height = geometry.render_size(dpi)
        if width < 1 or height < 1:
            raise TextLayerError(f"page {text.page_number} has words but no area to put them on")
        image_height = width if rotation in (90, 270) else height
        to_page = ocr_to_page(geometry, dpi, text.skew or 0.0, rotation)
        words = text.words or ()
        if shown is not None:
            words = tuple(word for word in words if not shown.says(word, to_page))
        content = page_content(words, to_page, image_height, codes)
    if not content:
        return [b"<< /Type /Page /Parent 2 0 R %s /Resources << >> >>" % boxes]
    return [
        b"<< /Type /Page /Parent 2 0 R %s /Resources << /Font << %s %d 0 R >> >> /Contents %d 0 R >>"
        % (boxes, FONT_RESOURCE, font, number + 1),
        glyphless.stream(b"", content),
    ]


def _lines(words: Iterable[WordBox]) -> list[list[_Word]]:
    """The words that can be written, in order, cut into lines."""
    lines: list[list[_Word]] = []
    for box in words:
        text = "".join(char for char in box.text if glyphless.is_writable(char)).strip()
        if not text:
            continue
        x0, y0, x1, y1 = box.bbox
        word = _Word(text, min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1), _is_rtl(text))
        if lines and _goes_on(lines[-1][-1], word):
            lines[-1].append(word)
        else:
            lines.append([word])
    return lines


def _goes_on(previous: _Word, word: _Word) -> bool:
    """Whether word is on previous's line: they share most of their height and word lies on in
    the line's direction (a word back at the left margin starts a new line, or a new column)."""
    overlap = min(previous.y1, word.y1) - max(previous.y0, word.y0)
    if overlap < _SAME_LINE_OVERLAP * min(previous.height, word.height):
        return False
    if previous.rtl and word.rtl:
        return word.x1 <= previous.x1
    return word.x0 >= previous.x0


def _is_rtl(text: str) -> bool:
    return any(unicodedata.bidirectional(char) in _RIGHT_TO_LEFT for char in text)


class _Content:
    """Text operators in tenths of a pixel (exact integers), relative to the line matrix.

    A right-to-left word is written from its right end with the text space mirrored, so its
    characters, in logical order in the string, run leftwards on the page as they are read
    (tesseract's renderer does the same), and extractors give them back in logical order."""

    def __init__(self, codes: glyphless.Codes) -> None:
        self.codes = codes
        self.ops: list[bytes] = []
        self._at = (0, 0)  # the text line matrix's origin, in tenths of a pixel
        self._mirrored = False
        self._size = 0

    def line(self, words: list[_Word], image_height: int) -> None:
        # One size and one baseline for the whole line, from the top of its highest word to
        # the bottom of its lowest: poppler only joins words of one font size into a line, and
        # viewers select a line best when its baseline does not wander.
        top, bottom = min(word.y0 for word in words), max(word.y1 for word in words)
        size = max(1, bottom - top)
        baseline = 10 * (image_height - bottom) + 2 * size  # DESCENT: a fifth of the size
        for index, word in enumerate(words):
            self._move(10 * (word.x1 if word.rtl else word.x0), baseline, mirrored=word.rtl)
            if size != self._size:
                self.ops.append(b"%s %d Tf" % (FONT_RESOURCE, size))
                self._size = size
            self._show(self.codes.encode(word.text), width=word.x1 - word.x0, size=size)
            if index + 1 == len(words):
                continue
            following = words[index + 1]
            if word.rtl and following.rtl:  # the pen is at the word's left end, the gap beyond
                gap = word.x0 - following.x1
            else:  # the gap runs from the word's right end
                if word.rtl:
                    self._move(10 * word.x1, baseline, mirrored=False)
                gap = following.x0 - word.x1
            self._show(glyphless.SPACE_CODE, width=gap, size=size)

    def _move(self, x: int, y: int, *, mirrored: bool) -> None:
        if mirrored != self._mirrored:
            self.ops.append(b"%s 0 0 1 %s %s Tm" % (b"-1" if mirrored else b"1", _tenths(x), _tenths(y)))
            self._mirrored = mirrored
        else:
            dx, dy = x - self._at[0], y - self._at[1]
            self.ops.append(b"%s %s Td" % (_tenths(-dx if mirrored else dx), _tenths(dy)))
        self._at = (x, y)

    def _show(self, encoded: bytes, *, width: int, size: int) -> None:
        """Show encoded stretched to width pixels at font size size."""
        glyphs = len(encoded) // 2
        stretch = max(_MIN_STRETCH, 100 * width / (glyphs * size * glyphless.ADVANCE / 1000))
        self.ops.append(b"%s Tz <%s> Tj" % (_number(stretch, 2), encoded.hex().upper().encode()))


def _tenths(value: int) -> bytes:
    whole, tenth = divmod(abs(value), 10)
    sign = b"-" if value < 0 else b""
    return sign + (b"%d.%d" % (whole, tenth) if tenth else b"%d" % whole)


def _number(value: float, places: int) -> bytes:
    text = f"{value:.{places}f}".rstrip("0").rstrip(".")
    return (text if text not in ("", "-0") else "0").encode()


def _array(value: pikepdf.Object | None, box: tuple[float, ...]) -> bytes:
    """A box as the source writes it, when that is four numbers; else box, as PDFium read it."""
    if isinstance(value, pikepdf.Array) and all(isinstance(number, int | Decimal) for number in value):
        return value.unparse(resolved=True) if len(value) == 4 else _array(None, box)
    return b"[ %s ]" % b" ".join(_number(number, 4) for number in box)
