"""Dusty scans: pages scattered with small dark specks, as a photocopy of a dusty original or a
scan through a dusty platen is; and a table of contents whose dotted leaders must not be taken
for dust. Read as they came, tesseract read a page of 11.5 point prose under 3,000 specks of
1-3 pixels with 6 % of its characters wrong, and a 200 DPI fax under 2,500 specks of 1-2 pixels
with 2-5 % wrong.

Deterministic for a seed (random.Random places the specks).
"""

from __future__ import annotations

import random

from PIL import Image, ImageDraw

from app.pdf.samples import DPI, PAGE_INCHES, SENTENCES, font, page_text, render_scan, wrapped


def dusted(image: Image.Image, seed: int, specks: int = 3000, largest: float = 3.0) -> Image.Image:
    """A copy of image with specks round dots of 1 to largest pixels across, of levels 0-59."""
    rng = random.Random(seed)
    image = image.copy()
    draw = ImageDraw.Draw(image)
    for _ in range(specks):
        x, y, across = rng.randrange(image.width), rng.randrange(image.height), rng.uniform(1, largest)
        draw.ellipse((x - across / 2, y - across / 2, x + across / 2, y + across / 2), fill=rng.randrange(60))
    return image


def dusty_page(seed: int, *, points: float = 11.5) -> tuple[Image.Image, Image.Image, str]:
    """A 300 DPI prose page under 3,000 specks, the same page clean, and its text as laid out."""
    text = page_text(0, seed)
    clean = render_scan(text, points=points)
    return dusted(clean, seed), clean, wrapped(text)


def dusty_fax(seed: int) -> tuple[Image.Image, Image.Image, str]:
    """A 200 DPI black and white page (a fax) under 2,500 specks of a pixel or two, the same page
    clean, and its text as laid out."""
    text = page_text(0, seed)
    page = render_scan(text).resize((round(PAGE_INCHES[0] * 200), round(PAGE_INCHES[1] * 200)))
    clean = page.point(lambda v: 255 if v > 128 else 0)
    rng = random.Random(seed)
    draw = ImageDraw.Draw(page)
    for _ in range(2500):
        x, y = rng.randrange(page.width), rng.randrange(page.height)
        draw.rectangle((x, y, x + rng.choice((0, 0, 1)), y + rng.choice((0, 1))), fill=0)
    return page.point(lambda v: 255 if v > 128 else 0).convert("1"), clean, wrapped(text)


def contents_page(seed: int = 1, *, leader: str = " .") -> tuple[Image.Image, str]:
    """A 300 DPI table of contents: 30 titles, each with a dotted leader (leader over and over)
    out to its page number at the right margin; and its text, a line to an entry."""
    rng = random.Random(seed)
    page = Image.new("L", (round(PAGE_INCHES[0] * DPI), round(PAGE_INCHES[1] * DPI)), 255)
    draw = ImageDraw.Draw(page)
    face = font(11.5)
    lines = []
    for entry in range(1, 31):
        title = f"{entry} " + " ".join(rng.choice(SENTENCES).split()[: rng.randrange(2, 6)]).rstrip(".")
        number = str(rng.randrange(1, 400))
        dots = leader * int(
            (2100 - DPI - draw.textlength(title + " ", font=face)) / draw.textlength(leader, font=face)
        )
        top = DPI + 95 * (entry - 1)
        draw.text((DPI, top), f"{title} {dots}", font=face, fill=0)
        draw.text((2250 - draw.textlength(number, font=face), top), number, font=face, fill=0)
        lines.append(f"{title} {dots.strip()} {number}")
    return page, "\n".join(lines)
