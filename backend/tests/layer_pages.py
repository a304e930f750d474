"""Pages to lay text layers over, made the way the engines read them, and words read back out.

`to_pixel` is this module's own model of how an engine makes the image OCR reads from a page:
PDFium renders the page as displayed (crop box, /Rotate) at its DPI, PIL straightens it by its
skew, then it is turned clockwise by its rotation. It is written forward, step by step, apart
from the code under test; tests check it against the real pipeline on ink and then use it to
say where each word must lie on the page. `scanned_page` draws words on the image OCR would
read and puts that image on a page through the model's inverse, so the page, read by the real
pipeline, shows each word where its pixel box says.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pdfminer.converter import PDFPageAggregator
from pdfminer.layout import LTChar, LTContainer, LTItem, LTPage
from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
from pdfminer.pdfpage import PDFPage
from PIL import Image, ImageDraw, ImageFont, ImageOps
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from app.models.results import PageText, WordBox

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
Box = tuple[float, float, float, float]

# Lines of words of several scripts: Latin, Cyrillic, Chinese, an emoji and a CJK character
# of Extension B (beyond the BMP), a number.
LINES = (
    "The harbour accounts for March were reviewed",
    "Отчёт комиссии о состоянии порта",  # noqa: RUF001 (Russian, on purpose)
    "中文 测试 文字 and 𠀋字 rare",
    "smile 😀 ok 1234 done",
    "Last line gypsy quay",
)


@dataclass(frozen=True)
class Setup:
    """A page's geometry and how OCR read it."""

    name: str
    media_box: Box = (0.0, 0.0, 612.0, 792.0)
    crop_box: Box | None = None
    rotate: int = 0
    dpi: int = 300
    skew: float = 0.0
    rotation: int = 0

    @property
    def shown(self) -> Box:
        return self.crop_box or self.media_box

    @property
    def render_size(self) -> tuple[int, int]:
        """Pixels of the page rendered at dpi, computed as pypdfium2's PdfPage.render does: the
        ceiling of the displayed size times the scale dpi / 72, in floating point (792 points at
        300 DPI are 3301 pixels: 792 * (300 / 72) is a hair over 3300)."""
        left, bottom, right, top = self.shown
        width, height = right - left, top - bottom
        if self.rotate in (90, 270):
            width, height = height, width
        return math.ceil(width * (self.dpi / 72)), math.ceil(height * (self.dpi / 72))

    @property
    def image_size(self) -> tuple[int, int]:
        """Pixels of the image OCR read (after the turn)."""
        width, height = self.render_size
        return (height, width) if self.rotation in (90, 270) else (width, height)

    def page_text(self, words: Sequence[tuple[str, tuple[int, int, int, int]]]) -> PageText:
        return PageText(
            page_number=1,
            text=" ".join(text for text, _ in words),
            confidence=0.9,
            source="ocr",
            words=tuple(WordBox(text=text, confidence=0.9, bbox=box) for text, box in words),
            rotation=self.rotation,
            skew=self.skew,
            dpi=None if self.dpi == 300 else self.dpi,
        )


SETUPS = (
    Setup("letter"),
    Setup("a4-cropped", media_box=(0.0, 0.0, 595.28, 841.89), crop_box=(36.0, 50.5, 560.0, 800.0)),
    Setup("rotate-90", rotate=90),
    Setup("rotate-180", rotate=180),
    Setup("rotate-270", rotate=270, crop_box=(20.0, 30.0, 600.0, 780.0)),
    Setup("turned-90", rotation=90),
    Setup("skewed", skew=2.0),
    Setup("150-dpi", dpi=150),
    Setup(
        "everything",
        media_box=(0.0, 0.0, 595.28, 841.89),
        crop_box=(30.0, 40.0, 580.0, 820.0),
        rotate=90,
        dpi=200,
        skew=-1.5,
        rotation=270,
    ),
)


def _quarter_turns(a: float, b: float, width: float, height: float, turns: int) -> tuple[float, float]:
    """A point of a width x height picture (y down) after the picture is turned clockwise a
    quarter turn `turns` times: each sends (a, b) to (height - b, a) and swaps the sides."""
    for _ in range(turns % 4):
        a, b, width, height = height - b, a, height, width
    return a, b


def to_pixel(setup: Setup, x: float, y: float) -> tuple[float, float]:
    """Where the page point (x, y) (user space) lands in the image OCR read (x right, y down)."""
    left, bottom, right, top = setup.shown
    # the page seen upright before /Rotate: points from the crop box's top-left corner, y down
    a, b = _quarter_turns(x - left, top - y, right - left, top - bottom, setup.rotate // 90)
    shown_width, shown_height = right - left, top - bottom
    if setup.rotate in (90, 270):
        shown_width, shown_height = shown_height, shown_width
    pixels_wide, pixels_high = setup.render_size
    a, b = a * pixels_wide / shown_width, b * pixels_high / shown_height
    # straightened: turned clockwise by skew (PIL's rotate(-skew)) about the image's centre
    t = math.radians(setup.skew)
    cx, cy = pixels_wide / 2, pixels_high / 2
    da, db = a - cx, b - cy
    a, b = cx + da * math.cos(t) - db * math.sin(t), cy + da * math.sin(t) + db * math.cos(t)
    return _quarter_turns(a, b, pixels_wide, pixels_high, setup.rotation // 90)


@dataclass(frozen=True)
class _Linear:
    a: float
    b: float
    c: float
    d: float
    e: float
    f: float

    def apply(self, x: float, y: float) -> tuple[float, float]:
        return self.a * x + self.c * y + self.e, self.b * x + self.d * y + self.f

    def inverse(self) -> _Linear:
        det = self.a * self.d - self.b * self.c
        a, b, c, d = self.d / det, -self.b / det, -self.c / det, self.a / det
        return _Linear(a, b, c, d, -(a * self.e + c * self.f), -(b * self.e + d * self.f))


def _forward(setup: Setup) -> _Linear:
    """to_pixel as a matrix (it is affine), read off three points."""
    ox, oy = to_pixel(setup, 0, 0)
    xx, xy = to_pixel(setup, 1, 0)
    yx, yy = to_pixel(setup, 0, 1)
    return _Linear(xx - ox, xy - oy, yx - ox, yy - oy, ox, oy)


def to_page(setup: Setup, u: float, v: float) -> tuple[float, float]:
    """The page point whose pixel is (u, v): to_pixel solved backwards."""
    return _forward(setup).inverse().apply(u, v)


def expected_box(setup: Setup, box: tuple[int, int, int, int]) -> Box:
    """The page box a word of pixel box `box` must cover: the bounds of its corners on the page."""
    x0, y0, x1, y1 = box
    corners = [to_page(setup, u, v) for u, v in ((x0, y0), (x1, y0), (x0, y1), (x1, y1))]
    return (
        min(x for x, _ in corners),
        min(y for _, y in corners),
        max(x for x, _ in corners),
        max(y for _, y in corners),
    )


@dataclass
class Scan:
    """A page built from an OCR image: the page's PDF, the image, and its words' pixel boxes."""

    setup: Setup
    pdf: bytes
    image: Image.Image
    words: list[tuple[str, tuple[int, int, int, int]]] = field(default_factory=list)
    line_of: list[int] = field(default_factory=list)  # each word's line

    @property
    def cells(self) -> list[tuple[int, int, int, int]]:
        """The pixels each word's text must cover: its box's width and its line's height (from
        the top of the line's highest word to the bottom of its lowest), as the layer promises."""
        tops: dict[int, int] = {}
        bottoms: dict[int, int] = {}
        for (_, (_, y0, _, y1)), line in zip(self.words, self.line_of, strict=True):
            tops[line] = min(tops.get(line, y0), y0)
            bottoms[line] = max(bottoms.get(line, y1), y1)
        return [
            (box[0], tops[line], box[2], bottoms[line])
            for (_, box), line in zip(self.words, self.line_of, strict=True)
        ]


def ocr_image(
    setup: Setup, lines: Sequence[str] = LINES, spacing: float = 2.0
) -> tuple[Image.Image, list[tuple[str, tuple[int, int, int, int]]], list[int]]:
    """The image OCR reads, with lines of 12-point words, each word's ink box and its line."""
    width, height = setup.image_size
    size = round(12 * setup.dpi / 72)
    font = ImageFont.truetype(str(DEJAVU), size)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    words, line_of = [], []
    top = round(1.2 * setup.dpi)
    for number, line in enumerate(lines):
        left = round(1.0 * setup.dpi)
        for word in line.split():
            draw.text((left, top), word, font=font, fill=0)
            layout = draw.textbbox((left, top), word, font=font)
            piece = image.crop(layout)
            ink = ImageOps.invert(piece).getbbox()
            assert ink is not None, word
            words.append(
                (word, (layout[0] + ink[0], layout[1] + ink[1], layout[0] + ink[2], layout[1] + ink[3]))
            )
            line_of.append(number)
            left = layout[2] + round(0.5 * size)
        top += round(spacing * size)
    return image, words, line_of


def scanned_page(setup: Setup, lines: Sequence[str] = LINES, spacing: float = 2.0) -> Scan:
    """A page whose only content is an image of the words, placed so the engines' pipeline
    (render at dpi, straighten, turn) gives back that image."""
    image, words, line_of = ocr_image(setup, lines, spacing)
    width, height = image.size
    # the image's unit square (y up) -> its pixels (y down) -> the page
    origin = to_page(setup, 0, height)
    right = to_page(setup, width, height)
    up = to_page(setup, 0, 0)
    matrix = (right[0] - origin[0], right[1] - origin[1], up[0] - origin[0], up[1] - origin[1], *origin)
    media_left, media_bottom, media_right, media_top = setup.media_box
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=(media_right - media_left, media_top - media_bottom), pageCompression=1)
    pdf.saveState()
    pdf.transform(*matrix)
    pdf.drawImage(ImageReader(image), 0, 0, 1, 1)
    pdf.restoreState()
    pdf.showPage()
    pdf.save()
    return Scan(setup, _with_geometry(out.getvalue(), setup), image, words, line_of)


def vector_page(setup: Setup, lines: Sequence[str] = LINES[:2] + LINES[4:], mode: int = 0) -> Scan:
    """A born-digital page: DejaVu text drawn upright on the page in text render mode `mode`;
    each word's pixel box is where to_pixel sends its box (font ascent to descent, advance wide)."""
    assert (setup.rotate, setup.skew, setup.rotation) == (0, 0.0, 0), "words are drawn upright"
    pdfmetrics.registerFont(TTFont("DejaVuSans", str(DEJAVU)))
    face = pdfmetrics.getFont("DejaVuSans").face
    size = 12.0
    out = io.BytesIO()
    left, bottom, right, top = setup.media_box
    pdf = canvas.Canvas(out, pagesize=(right - left, top - bottom), pageCompression=1)
    pdf.setFont("DejaVuSans", size)
    words, line_of = [], []
    y = setup.shown[3] - 90
    for number, line in enumerate(lines):
        x = setup.shown[0] + 72
        for word in line.split():
            text = pdf.beginText(x, y)
            text.setTextRenderMode(mode)
            text.textOut(word)
            pdf.drawText(text)
            advance = pdfmetrics.stringWidth(word, "DejaVuSans", size)
            box = (x, y + face.descent * size / 1000, x + advance, y + face.ascent * size / 1000)
            corners = [to_pixel(setup, px, py) for px in (box[0], box[2]) for py in (box[1], box[3])]
            pixels = (
                round(min(u for u, _ in corners)),
                round(min(v for _, v in corners)),
                round(max(u for u, _ in corners)),
                round(max(v for _, v in corners)),
            )
            words.append((word, pixels))
            line_of.append(number)
            x += advance + pdfmetrics.stringWidth(" ", "DejaVuSans", size)
        y -= 2 * size
    pdf.showPage()
    pdf.save()
    return Scan(setup, _with_geometry(out.getvalue(), setup), Image.new("L", (1, 1)), words, line_of)


def _with_geometry(data: bytes, setup: Setup) -> bytes:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        page = pdf.pages[0]
        page.obj.MediaBox = pikepdf.Array(list(setup.media_box))
        if setup.crop_box is not None:
            page.obj.CropBox = pikepdf.Array(list(setup.crop_box))
        if setup.rotate:
            page.obj.Rotate = setup.rotate
        out = io.BytesIO()
        pdf.save(out)
    return out.getvalue()


def read_by_pipeline(page: pdfium.PdfPage, setup: Setup) -> Image.Image:
    """The image the engines read from page: their own render, straighten and turn."""
    from app.engines._orientation import straighten, turn
    from app.engines._pages import render_gray

    image = render_gray(page, 1, setup.dpi)
    if setup.skew:
        image = straighten(image, setup.skew)
    return turn(image, setup.rotation)


def ink_box(
    image: Image.Image, around: tuple[int, int, int, int], margin: int = 5
) -> tuple[int, int, int, int] | None:
    """The box of dark pixels of image within `around` widened by margin."""
    x0, y0, x1, y1 = around
    region = (max(0, x0 - margin), max(0, y0 - margin), x1 + margin, y1 + margin)
    piece = image.crop(region).point(lambda value: 255 if value < 128 else 0)
    found = piece.getbbox()
    if found is None:
        return None
    return (region[0] + found[0], region[1] + found[1], region[0] + found[2], region[1] + found[3])


# -- reading words back ---------------------------------------------------------------------------

_BREAKS = {0x20, 0x0D, 0x0A, 0x02, 0xFFFE}


def _union(box: Box | None, other: Box) -> Box:
    if box is None:
        return other
    return (min(box[0], other[0]), min(box[1], other[1]), max(box[2], other[2]), max(box[3], other[3]))


def pdfium_words(page: pdfium.PdfPage) -> list[tuple[str, Box]]:
    """The page's words as PDFium reads them (split at spaces and line breaks), each with the
    union of its characters' loose boxes, in user space."""
    textpage = page.get_textpage()
    words: list[tuple[str, Box]] = []
    units: list[int] = []
    box: Box | None = None
    for index in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(textpage, index)
        if code in _BREAKS:
            if units and box is not None:
                words.append((_utf16(units), box))
            units, box = [], None
            continue
        units.append(code)
        box = _union(box, textpage.get_charbox(index, loose=True))
    if units and box is not None:
        words.append((_utf16(units), box))
    textpage.close()
    return words


def _utf16(units: list[int]) -> str:
    return b"".join(unit.to_bytes(2, "big") for unit in units).decode("utf-16-be")


def pdfminer_words(pdf: bytes, index: int = 0) -> list[tuple[str, Box]]:
    """The page's words as pdfminer reads them (characters in content order, split at spaces),
    boxes taken back from pdfminer's page space (media box corner at 0, /Rotate applied) to
    user space."""
    page = _pdfminer_page(pdf, index)
    with pikepdf.open(io.BytesIO(pdf)) as opened:
        raw = opened.pages[index]
        media = [float(value) for value in raw.mediabox]
        rotate = int(raw.obj.get("/Rotate", 0)) % 360
    back = _pdfminer_page_matrix(media, rotate).inverse()
    words: list[tuple[str, Box]] = []
    text, box = "", None
    previous: Box | None = None
    for item in _chars(page):
        # a space ends a word; so does a jump (pdfminer unanalysed puts nothing between lines)
        if item.get_text() == " " or (previous is not None and _gap(previous, item.bbox) > 1.0):
            if text and box is not None:
                words.append((text, box))
            text, box = "", None
        previous = item.bbox
        if item.get_text() == " ":
            continue
        text += item.get_text()
        corners = [back.apply(x, y) for x in (item.x0, item.x1) for y in (item.y0, item.y1)]
        box = _union(
            box,
            (
                min(c[0] for c in corners),
                min(c[1] for c in corners),
                max(c[0] for c in corners),
                max(c[1] for c in corners),
            ),
        )
    if text and box is not None:
        words.append((text, box))
    return words


def _gap(box: Box, other: Box) -> float:
    """How far apart two boxes are (0 when they touch or overlap)."""
    return max(0.0, other[0] - box[2], box[0] - other[2], other[1] - box[3], box[1] - other[3])


def _pdfminer_page(pdf: bytes, index: int) -> LTPage:
    """pdfminer's layout of one page without its layout analysis (extract_pages always runs one)."""
    resources = PDFResourceManager()
    device = PDFPageAggregator(resources, laparams=None)
    interpreter = PDFPageInterpreter(resources, device)
    for number, page in enumerate(PDFPage.get_pages(io.BytesIO(pdf))):
        if number == index:
            interpreter.process_page(page)
            layout = device.get_result()
            assert isinstance(layout, LTPage)
            return layout
    raise IndexError(index)


def _chars(container: LTContainer[LTItem]) -> Iterator[LTChar]:
    """The characters in a pdfminer layout, in content order (a form's inside the form)."""
    for item in container:
        if isinstance(item, LTChar):
            yield item
        elif isinstance(item, LTContainer):
            yield from _chars(item)


def _pdfminer_page_matrix(media: list[float], rotate: int) -> _Linear:
    """pdfminer's PDFPageInterpreter.process_page: user space -> its page space."""
    x0, y0, x1, y1 = media
    if rotate == 90:
        return _Linear(0, -1, 1, 0, -y0, x1)
    if rotate == 180:
        return _Linear(-1, 0, 0, -1, x1, y1)
    if rotate == 270:
        return _Linear(0, 1, -1, 0, y1, -x0)
    return _Linear(1, 0, 0, 1, -x0, -y0)


def distance(box: Box, other: Box) -> float:
    """The largest difference between two boxes' edges, in points."""
    return max(abs(a - b) for a, b in zip(box, other, strict=True))
