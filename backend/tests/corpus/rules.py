"""Scans whose text touches thin rules: lines underlined at the letters' feet, a pixel below
them, twice, or struck through; and a ruled table whose rules stay clear of its text. Read as
they came, tesseract lost every underlined line (100 % of such a page wrong, 21 % with a pixel
between rule and letters), and a third of a page with every third line struck through.

Pages of 11-point lines, 110 pixels apart at 300 DPI; every `every`-th line (from the first)
has its rule, 3 pixels thick. Deterministic for a seed.
"""

from __future__ import annotations

import random
from pathlib import Path

from PIL import Image, ImageDraw

from app.pdf.samples import DPI, PAGE_INCHES, SENTENCES, font

KINDS = ("underlined", "a_pixel_below", "double", "struck")  # and "clear_below"
LINES = 22
LEFT = 300
TOP = 300
STEP = 110


def ruled_lines_image(kind: str, *, every: int = 1, seed: int = 3) -> tuple[Image.Image, str]:
    """The page (KINDS says how its lines meet their rules) and its text, a line to a line."""
    rng = random.Random(seed)
    page = Image.new("L", (round(PAGE_INCHES[0] * DPI), round(PAGE_INCHES[1] * DPI)), 255)
    draw = ImageDraw.Draw(page)
    face = font(11)
    ascent = face.getmetrics()[0]
    lines = []
    for index in range(LINES):
        line = rng.choice(SENTENCES)[:60]
        top = TOP + STEP * index
        draw.text((LEFT, top), line, font=face, fill=0)
        lines.append(line)
        if index % every:
            continue
        right = round(draw.textlength(line, font=face)) + LEFT
        base = top + ascent  # the letters' feet
        if kind == "underlined":
            rows = [(base, base + 2)]
        elif kind == "a_pixel_below":
            rows = [(base + 1, base + 3)]
        elif kind == "clear_below":  # three pixels below: clear of them, until a scan blurs it
            rows = [(base + 3, base + 5)]
        elif kind == "double":
            rows = [(base + 1, base + 2), (base + 5, base + 6)]
        elif kind == "struck":
            rows = [(top + ascent * 2 // 3, top + ascent * 2 // 3 + 2)]
        else:
            raise ValueError(f"no rule called {kind!r}")
        for first, last in rows:
            draw.rectangle((LEFT, first, right, last), fill=0)
    return page, "\n".join(lines)


def ruled_table_image(seed: int = 5, *, on_rules: bool = False) -> tuple[Image.Image, str]:
    """A table of 20 rows of three cells, ruled 3 pixels thick all round each cell, its text
    25 pixels clear of the rules, or with on_rules its letters' feet on each row's lower rule;
    the text a row to a line, its cells one after another."""
    rng = random.Random(seed)
    page = Image.new("L", (round(PAGE_INCHES[0] * DPI), round(PAGE_INCHES[1] * DPI)), 255)
    draw = ImageDraw.Draw(page)
    face = font(11)
    ascent = face.getmetrics()[0]
    columns, height, rows = (300, 900, 1500, 2250), 100, 20
    lines = []
    for row in range(rows):
        cells = []
        for column in range(3):
            words = rng.choice(SENTENCES).split()
            start = rng.randrange(len(words) - 3)
            cell = " ".join(words[start : start + 3])
            top = TOP + (row + 1) * height - ascent if on_rules else TOP + row * height + 25
            draw.text((columns[column] + 20, top), cell, font=face, fill=0)
            cells.append(cell)
        lines.append(" ".join(cells))
    for row in range(rows + 1):
        draw.rectangle((columns[0], TOP + row * height, columns[-1], TOP + row * height + 2), fill=0)
    for x in columns:
        draw.rectangle((x, TOP, x + 2, TOP + rows * height + 2), fill=0)
    return page, "\n".join(lines)


def save_scan(image: Image.Image, path: Path) -> Path:
    """A one-page 300 DPI scan of image at path."""
    image.save(path, "PDF", resolution=DPI)
    return path
