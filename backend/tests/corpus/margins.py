"""Pages with something down the left margin: a pleading's line numbers (1 to 28, one beside
each line of its text), which tesseract read as a line of vertical writing ("ON DH FF WwW NY"
for 2 to 7, the rest lost); and a label set up the margin, turned a quarter, which it reads
well as vertical writing.

300 DPI, DejaVu; each builder returns the page and its text as it should be read: the margin's
numbers (or label) first, then the prose. Deterministic for a seed.
"""

from __future__ import annotations

import random
import textwrap

from PIL import Image, ImageDraw, ImageFont

from app.pdf.samples import DPI, PAGE_INCHES, SENTENCES
from tests.corpus.leaders import FACES


def _prose(
    draw: ImageDraw.ImageDraw,
    font: ImageFont.FreeTypeFont,
    seed: int,
    x: float,
    width: float,
    step: int,
    lines: int,
) -> list[str]:
    """Paragraphs of prose from x inches in, width inches wide, a line every step pixels."""
    rng = random.Random(seed)
    characters = int(0.95 * width * DPI / draw.textlength("n", font=font))
    out: list[str] = []
    while len(out) < lines:
        text = " ".join(rng.choice(SENTENCES) for _ in range(rng.randint(1, 3)))
        out += textwrap.wrap(text, characters)[: lines - len(out)]
    for index, line in enumerate(out):
        draw.text((x * DPI, DPI + index * step), line, font=font, fill=0)
    return out


def pleading_image(seed: int = 12, *, points: float = 11.0, face: str = "serif") -> tuple[Image.Image, str]:
    """28 lines of prose, double spaced, each numbered flush right 0.4 inches to its left."""
    page = Image.new("L", (round(PAGE_INCHES[0] * DPI), round(PAGE_INCHES[1] * DPI)), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(FACES[face], size=round(points * DPI / 72))
    step = round(points * 2.0 * DPI / 72)
    prose = _prose(draw, font, seed, 1.5, 5.8, step, 28)
    for index in range(28):
        number = str(index + 1)
        draw.text(
            (1.1 * DPI - draw.textlength(number, font=font), DPI + index * step), number, font=font, fill=0
        )
    return page, "\n".join([*(str(index + 1) for index in range(28)), *prose])


def margin_label_image(
    seed: int = 17, *, points: float = 10.0, face: str = "serif"
) -> tuple[Image.Image, str]:
    """40 lines of prose and a label turned a quarter anticlockwise up the left margin."""
    page = Image.new("L", (round(PAGE_INCHES[0] * DPI), round(PAGE_INCHES[1] * DPI)), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(FACES[face], size=round(points * DPI / 72))
    prose = _prose(draw, font, seed, 1.5, 6.0, round(points * 1.4 * DPI / 72), 40)
    label = "Downloaded from the county archive on 14 March 2026"
    strip = Image.new(
        "L", (round(draw.textlength(label, font=font)) + 20, round(points * 1.6 * DPI / 72)), 255
    )
    ImageDraw.Draw(strip).text((10, 5), label, font=font, fill=0)
    page.paste(strip.rotate(90, expand=True), (DPI // 2, 3 * DPI))
    return page, "\n".join([label, *prose])
