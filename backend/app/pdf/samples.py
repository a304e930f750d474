"""Sample PDFs the project makes itself, for `chunk-ocr sample`, the tests and the benchmarks.

Scans are real English prose drawn with a TrueType font onto 300 DPI
letter-size pages and stored as images only (no text layer); born-digital
pages are Helvetica text in a PDF written here by hand. Both return the text
of each page as a reader gets it back, so OCR output can be scored against it.

Only the app's own dependencies are used (Pillow; the born-digital writer
needs nothing but the standard library), so `chunk-ocr sample` works in a
plain install. The generators of bad and odd inputs the tests need
(encrypted, truncated, a page too wide for tesseract, ...) live with the
tests, in tests/pdf_factories.py; the scan put through a simulated office
scanner that the benchmarks score OCR on lives with them, in bench/_samples.py.
"""

from __future__ import annotations

import base64
import random
import textwrap
import zlib
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from app.core.errors import ConfigurationError
from app.pdf._writer import write_pdf

SENTENCES = (
    "The committee met on a wet Tuesday morning to review the harbour accounts.",
    "Most of the ledgers had been kept by hand until the old clerk retired last spring.",
    "A careful reader will notice that the totals for March do not match the summary.",
    "The difference was traced to a shipment of timber that arrived two days late.",
    "Nobody disputed the facts, although several members questioned the delay.",
    "The report recommends that every invoice be scanned on the day it is received.",
    "Our lawyers asked for copies of the correspondence with the insurance company.",
    "The warehouse roof was repaired in August at a cost of eleven thousand pounds.",
    "During the winter the ferry ran twice a day, weather permitting.",
    "The town council agreed to extend the lease for another five years.",
    "A short walk along the river brings you to the mill and the old stone bridge.",
    "She wrote the letter in pencil and signed it with her full name.",
    "The inspector found no evidence of damage to the northern wall.",
    "Payment is due within thirty days of the date shown on the statement.",
    "Witnesses described a grey van parked outside the office that evening.",
    "The library keeps the original maps in a locked cabinet on the second floor.",
    "Each tenant is responsible for clearing snow from the path in front of the house.",
    "The contract was signed in duplicate and one copy was sent by registered post.",
    "He remembered the smell of bread from the bakery at the corner of the square.",
    "The meeting closed at half past four with a vote of thanks to the chairman.",
    "Records from the previous decade were moved to the county archive.",
    "The engineer recommended replacing the pumps before the summer season.",
    "A receipt must be attached to every claim for travel expenses.",
    "The farm has belonged to the same family for more than a hundred years.",
    "Our auditors will visit the branch offices during the first week of May.",
    "The museum reopened after the floods with a new exhibition of local pottery.",
    "Please return the signed form together with a copy of your passport.",
    "The garden is planted with roses, lavender and a row of young apple trees.",
    "Traffic on the coast road was slow because of repairs near the lighthouse.",
    "The board approved the budget subject to a review of the staffing costs.",
    "A new school will be built on the field behind the church.",
    "The captain logged the position of the vessel every hour during the storm.",
    "Tickets for the concert may be collected from the box office after noon.",
    "The survey shows that most residents would welcome a weekly market.",
    "All visitors must sign the book at the front desk and wear a badge.",
    "The tenant reported a leak under the kitchen sink on the fourth of June.",
    "Heavy rain in the hills caused the stream to overflow its banks.",
    "The minutes of the last meeting were read and approved without changes.",
    "An independent valuation put the property at slightly less than expected.",
    "The bakery opens at seven and closes when the last loaf is sold.",
)

FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf",
)
DPI = 300
PAGE_INCHES = (8.5, 11)


def page_text(page_index: int, seed: int, sentences: int = 14) -> str:
    """Deterministic prose for one page: a few paragraphs of sentences from the bank."""
    rng = random.Random(seed * 100_003 + page_index)
    chosen = [rng.choice(SENTENCES) for _ in range(sentences)]
    paragraphs = [" ".join(chosen[i : i + 4]) for i in range(0, len(chosen), 4)]
    return "\n\n".join(paragraphs)


def font(points: float) -> ImageFont.FreeTypeFont:
    """The sample pages' serif at points, at the samples' 300 DPI."""
    for candidate in FONT_CANDIDATES:
        if Path(candidate).is_file():
            return ImageFont.truetype(candidate, size=round(points * DPI / 72))
    raise ConfigurationError("no TrueType font found; install fonts-dejavu-core")


def render_scan(text: str, *, points: float = 11.5) -> Image.Image:
    """A 300 DPI grayscale page with text laid out in a 6.5-inch column."""
    width, height = (round(x * DPI) for x in PAGE_INCHES)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    face = font(points)
    line_height = round(points * 1.45 * DPI / 72)
    y = DPI  # one-inch top margin
    for paragraph in text.split("\n\n"):
        for line in textwrap.wrap(paragraph, width=78):
            draw.text((DPI, y), line, font=face, fill=0)
            y += line_height
        y += line_height // 2
    return image


def wrapped(text: str) -> str:
    """The text as laid out on the page (line breaks where the renderer wrapped)."""
    return "\n\n".join("\n".join(textwrap.wrap(p, width=78)) for p in text.split("\n\n"))


def make_scanned_pdf(path: Path, pages: int, seed: int = 0) -> list[str]:
    """An image-only PDF of `pages` prose pages at 300 DPI; returns each page's text."""
    texts = [page_text(i, seed) for i in range(pages)]
    images = (render_scan(t) for t in texts)
    first = next(images)
    first.save(path, "PDF", resolution=DPI, save_all=True, append_images=images)
    return [wrapped(t) for t in texts]


def make_born_digital_pdf(path: Path, pages: int, seed: int = 0, *, blank: bool = False) -> list[str]:
    """A text PDF of `pages` letter-size pages of prose; with blank=True, pages with nothing on
    them. Returns each page's text, lines broken where the page breaks them."""
    texts = ["" if blank else wrapped(page_text(i, seed, sentences=8)) for i in range(pages)]
    path.write_bytes(_text_pdf(texts))
    return texts


# The born-digital layout: 11-point Helvetica, one-inch margins, 1.2 line spacing.
_LETTER_POINTS = (612, 792)
_FONT_SIZE = 11
_LEADING = 13.2
_LEFT, _TOP = 72, 720


def _text_pdf(texts: list[str]) -> bytes:
    """A PDF with one page per text, each line of a text one line of Helvetica.

    Objects are laid out as reportlab lays them out, so a file cut short loses its last pages
    (not its page tree): 1 the font resources, 2 the font, then the pages, the catalog, the
    page tree, and last each page's content stream. Streams are Flate-compressed and ASCII85
    encoded, which keeps the whole file 7-bit text.
    """
    count = len(texts)
    first_page = 3
    catalog, tree = first_page + count, first_page + count + 1
    first_content = tree + 1
    objects = [
        b"<< /F1 2 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /Name /F1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    objects += [
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Resources << /Font 1 0 R >> "
        b"/Contents %d 0 R >>" % (tree, *_LETTER_POINTS, first_content + i)
        for i in range(count)
    ]
    objects.append(b"<< /Type /Catalog /Pages %d 0 R >>" % tree)
    kids = b" ".join(b"%d 0 R" % (first_page + i) for i in range(count))
    objects.append(b"<< /Type /Pages /Count %d /Kids [%s] >>" % (count, kids))
    for text in texts:
        encoded = base64.a85encode(zlib.compress(_content(text)), wrapcol=76) + b"~>"
        objects.append(
            b"<< /Filter [/ASCII85Decode /FlateDecode] /Length %d >>\nstream\n%s\nendstream"
            % (len(encoded), encoded)
        )
    return write_pdf(objects, catalog, version=b"1.4")


def _content(text: str) -> bytes:
    """The content stream of one page: the text's lines top down, an empty line a blank one."""
    if not text:
        return b""
    lines = text.split("\n")
    if len(lines) * _LEADING > _TOP - 72:
        raise ValueError(f"{len(lines)} lines do not fit on a letter page")
    shown = b" T*\n".join(b"(%s) Tj" % _pdf_string(line) if line else b"" for line in lines)
    return b"BT\n/F1 %d Tf %.1f TL %d %d Td\n%s\nET\n" % (_FONT_SIZE, _LEADING, _LEFT, _TOP, shown)


def _pdf_string(line: str) -> bytes:
    """A line as the body of a PDF literal string in WinAnsiEncoding."""
    data = line.encode("cp1252")
    return data.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
