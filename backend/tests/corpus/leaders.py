"""Pages with dotted leaders: tables of contents, a price list and a form, typeset as a word
processor or TeX sets them (each dot on a grid across the page, so the dots of one line stand
over those of the next), in a serif or a sans, close ("....") or spaced (". . ."); and one made
by reportlab in Times and rendered by PDFium. Read as they came, tesseract read such a table of
contents with 70-77 % of its characters wrong: it took the dots for letters.

A page's text is a line to an entry: the title, the dots as one word (spaced ones with a space
between each), and the number. Deterministic for a seed.
"""

from __future__ import annotations

import io
import random
from pathlib import Path

import pypdfium2 as pdfium
from PIL import Image, ImageDraw, ImageFont

from app.pdf.samples import DPI, PAGE_INCHES, SENTENCES

FACES = {
    "serif": "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
    "sans": "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
}
PITCH = {"close": 0.0, "spaced": 0.25, "wide": 0.5}  # ems of space between a leader's dots
RULED = {"underline": 1.05, "midline": 0.6}  # a rule for a leader, this many ems below the line's top
LEFT, RIGHT = 1.0, 7.5  # inches: the margins


def contents_image(
    seed: int = 1, *, points: float = 11.0, face: str = "serif", style: str = "close", dpi: int = DPI
) -> tuple[Image.Image, str]:
    """A table of contents: 24 titles, some of them indented, each with its leader out to its
    page number at the right margin (style "none": no leader, the number alone there; "dashed":
    hyphens spaced a quarter em apart instead of dots; RULED: a line drawn instead of dots,
    which the text leaves out)."""
    rng = random.Random(seed)
    entries = []
    for entry in range(1, 25):
        words = rng.choice(SENTENCES).rstrip(".").split()[: rng.randrange(2, 7)]
        indent = 0.3 if entry % 4 else 0.0
        entries.append((indent, f"{entry} " + " ".join(words), str(rng.randrange(1, 400))))
    return _leadered(entries, points=points, face=face, style=style, dpi=dpi)


def price_list_image(
    seed: int = 2, *, points: float = 12.0, face: str = "sans", style: str = "close"
) -> tuple[Image.Image, str]:
    """A menu's prices: 20 dishes, each with its leader out to a price."""
    rng = random.Random(seed)
    dishes = (
        "Soup of the day",
        "Garden salad",
        "Roast chicken",
        "Fish and chips",
        "Lentil stew",
        "Apple pie",
        "Cheese board",
        "Coffee",
        "Pot of tea",
        "Lemonade",
    )
    entries = [
        (
            0.0,
            f"{rng.choice(dishes)} {rng.choice(('small', 'large', 'with bread', 'to share'))}",
            f"{rng.randrange(2, 30)}.{rng.randrange(0, 100):02d}",
        )
        for _ in range(20)
    ]
    return _leadered(entries, points=points, face=face, style=style, dpi=DPI)


def statement_image(seed: int = 4, *, points: float = 10.0) -> tuple[Image.Image, str]:
    """An income statement: 12 items, each with its leader out to two columns of figures, this
    year's and last year's, 1.4 inches apart."""
    rng = random.Random(seed)
    items = (
        "Revenue",
        "Cost of sales",
        "Gross profit",
        "Administrative expenses",
        "Operating profit",
        "Finance costs",
        "Profit before tax",
        "Taxation",
        "Profit for the year",
        "Dividends paid",
        "Retained profit",
        "Earnings per share",
    )
    scale = DPI / 72
    page, draw = _page(DPI)
    font = ImageFont.truetype(FACES["serif"], size=round(points * scale))
    lines = []
    for index, item in enumerate(items):
        y = DPI + round(index * points * 2.2 * scale)
        figures = [f"{rng.randrange(1, 999)},{rng.randrange(100, 999)}" for _ in range(2)]
        rights = [
            (RIGHT - 1.4) * DPI - draw.textlength(figures[0], font=font),
            RIGHT * DPI - draw.textlength(figures[1], font=font),
        ]
        for figure, right in zip(figures, rights, strict=True):
            draw.text((right, y), figure, font=font, fill=0)
        dots = _dots(draw, font, LEFT * DPI, item, rights[0], y, 0.0, points * scale)
        lines.append(f"{item} {dots} {figures[0]} {figures[1]}")
    return page, "\n".join(lines)


def form_image(*, points: float = 12.0, face: str = "serif") -> tuple[Image.Image, str]:
    """A form to fill in by hand: labels, each with a dotted line to write on (one line has two,
    the second after a label of its own), and a line of prose between them."""
    scale = DPI / 72
    page, draw = _page(DPI)
    font = ImageFont.truetype(FACES[face], size=round(points * scale))
    lines = []
    y = DPI
    for label, second in (
        ("Name", None),
        ("Address", None),
        ("Telephone", None),
        ("Signed", "Date"),
        ("Witness", None),
    ):
        x = LEFT * DPI
        end = (RIGHT if second is None else 4.4) * DPI
        line = _label_and_dots(draw, font, label, x, end, y, 0.25, points * scale)
        if second is not None:
            line += " " + _label_and_dots(draw, font, second, 4.6 * DPI, RIGHT * DPI, y, 0.25, points * scale)
        lines.append(line)
        y += round(points * 2.6 * scale)
        prose = "Please write clearly and in capitals where asked."
        draw.text((LEFT * DPI, y), prose, font=font, fill=0)
        lines.append(prose)
        y += round(points * 2.6 * scale)
    return page, "\n".join(lines)


def reportlab_contents_pdf(path: Path, seed: int = 3) -> str:
    """A table of contents drawn by reportlab in Times at 11 points, with close leaders (a
    string of periods, as a word processor's tab leader), rendered by PDFium at 300 DPI and
    stored as a scan."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    rng = random.Random(seed)
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=letter)
    pdf.setFont("Times-Roman", 11)
    lines = []
    for entry in range(1, 26):
        title = f"{entry} " + " ".join(rng.choice(SENTENCES).rstrip(".").split()[: rng.randrange(2, 7)])
        number = str(rng.randrange(1, 400))
        y = 720 - entry * 24
        pdf.drawString(72, y, title)
        right = 540 - pdf.stringWidth(number, "Times-Roman", 11)
        pdf.drawString(right, y, number)
        dot = pdf.stringWidth(".", "Times-Roman", 11)
        first = int((72 + pdf.stringWidth(title + " ", "Times-Roman", 11)) / dot) + 1
        last = int((right - dot) / dot) - 1
        pdf.drawString(first * dot, y, "." * (last - first))  # on a grid, as a tab leader is
        lines.append(f"{title} {'.' * (last - first)} {number}")
    pdf.save()
    document = pdfium.PdfDocument(buffer.getvalue())
    image = document[0].render(scale=DPI / 72, grayscale=True).to_pil().convert("L")
    document.close()
    image.save(path, "PDF", resolution=DPI)
    return "\n".join(lines)


def _leadered(
    entries: list[tuple[float, str, str]], *, points: float, face: str, style: str, dpi: int
) -> tuple[Image.Image, str]:
    scale = dpi / 72
    page, draw = _page(dpi)
    font = ImageFont.truetype(FACES[face], size=round(points * scale))
    lines = []
    for index, (indent, title, number) in enumerate(entries):
        y = dpi + round(index * points * 2.0 * scale)
        right = RIGHT * dpi - draw.textlength(number, font=font)
        draw.text((right, y), number, font=font, fill=0)
        if style == "none":  # a modern table of contents: the number alone at the right margin
            draw.text(((LEFT + indent) * dpi, y), title, font=font, fill=0)
            lines.append(f"{title} {number}")
            continue
        if style in RULED:  # a line drawn from the title to the number, at its feet or its middle
            x = (LEFT + indent) * dpi
            draw.text((x, y), title, font=font, fill=0)
            space = draw.textlength(" ", font=font)
            height = RULED[style] * points * scale
            draw.line(
                (x + draw.textlength(title, font=font) + space, y + height, right - space, y + height),
                fill=0,
                width=max(1, dpi // 100),
            )
            lines.append(f"{title} {number}")
            continue
        if style == "dashed":  # "- - -", a hyphen and a quarter em of space at a time
            dots = _dots(draw, font, (LEFT + indent) * dpi, title, right, y, 0.25, points * scale, "-")
        else:
            dots = _dots(draw, font, (LEFT + indent) * dpi, title, right, y, PITCH[style], points * scale)
        lines.append(f"{title} {dots} {number}")
    return page, "\n".join(lines)


def _label_and_dots(
    draw: ImageDraw.ImageDraw,
    font: ImageFont.FreeTypeFont,
    label: str,
    x: float,
    end: float,
    y: int,
    space: float,
    em: float,
) -> str:
    return f"{label} {_dots(draw, font, x, label, end + draw.textlength(' ', font=font), y, space, em)}"


def _dots(
    draw: ImageDraw.ImageDraw,
    font: ImageFont.FreeTypeFont,
    x: float,
    title: str,
    end: float,
    y: int,
    space: float,
    em: float,
    mark: str = ".",
) -> str:
    """Draw title at x and its leader's dots (or dashes: mark "-") on the page's grid out to a
    space before end; the leader's text."""
    draw.text((x, y), title, font=font, fill=0)
    pitch = draw.textlength(mark, font=font) + space * em
    first = int((x + draw.textlength(title + " ", font=font)) / pitch) + 1
    last = int((end - draw.textlength(" ", font=font)) / pitch) - 1
    for step in range(first, last):
        draw.text((step * pitch, y), mark, font=font, fill=0)
    return (" " if space else "").join(mark * (last - first))


def _page(dpi: int) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    page = Image.new("L", (round(PAGE_INCHES[0] * dpi), round(PAGE_INCHES[1] * dpi)), 255)
    return page, ImageDraw.Draw(page)
