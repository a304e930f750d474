"""Pages whose rows cross a wide gap without a leader or a rule: a form's questions with boxes to
tick for the answers, and, to be left as tesseract reads them, a list of words set in two
columns, a page of prose in two columns and a column of prose beside a list. Read as they came, tesseract read the form's
questions, then every "Yes", then every "No" (54 % of the page wrong, ocrmypdf alike), and its
empty boxes as letters and signs.

300 DPI; each builder returns the page and its text a row to a line (the lists and the prose
column by column, as they are read). Deterministic for a seed.
"""

from __future__ import annotations

import random
import textwrap

from PIL import Image, ImageDraw

from app.pdf.samples import DPI, PAGE_INCHES, SENTENCES, font


def checkbox_form_image(seed: int = 2, *, points: float = 12.0) -> tuple[Image.Image, str]:
    """20 questions, each with two empty boxes to tick, "Yes" and "No", 5.7 and 6.5 inches in.
    Each box is "\u2610" in the text (what the engine puts back for an empty box: _tick_boxes);
    tesseract reads them as "L]", "[]", "OO" and the like."""
    rng = random.Random(seed)
    page, draw = _page()
    face = font(points)
    lines = []
    for row in range(20):
        y = DPI + row * round(points * 2.8 * DPI / 72)
        question = " ".join(rng.choice(SENTENCES).split()[:5]).rstrip(".,") + "?"
        draw.text((DPI, y), question, font=face, fill=0)
        for x, answer in ((1700, "Yes"), (1950, "No")):
            box = round(points * 0.8 * DPI / 72)
            draw.rectangle((x, y + box // 4, x + box, y + box // 4 + box), outline=0, width=3)
            draw.text((x + 1.5 * box, y), answer, font=face, fill=0)
        lines.append(f"{question} \u2610 Yes \u2610 No")
    return page, "\n".join(lines)


def two_column_list_image(seed: int = 3, *, points: float = 11.0) -> tuple[Image.Image, str]:
    """A list of 48 words, set in two columns on the same rows."""
    rng = random.Random(seed)
    page, draw = _page()
    face = font(points)
    columns: list[list[str]] = [[], []]
    for column, x in enumerate((DPI, 4.5 * DPI)):
        for row in range(24):
            item = max(rng.choice(SENTENCES).split(), key=len).rstrip(".,")
            draw.text((x, DPI + row * round(points * 1.6 * DPI / 72)), item, font=face, fill=0)
            columns[column].append(item)
    return page, "\n".join(columns[0] + columns[1])


def two_column_prose_image(seed: int = 4, *, points: float = 10.0) -> tuple[Image.Image, str]:
    """Two columns of prose, 3.1 inches wide, their lines on the same rows."""
    rng = random.Random(seed)
    page, draw = _page()
    face = font(points)
    columns: list[list[str]] = []
    for x in (DPI, 4.4 * DPI):
        text = " ".join(rng.choice(SENTENCES) for _ in range(30))
        lines = textwrap.wrap(text, width=44)[:40]
        for row, line in enumerate(lines):
            draw.text((x, DPI + row * round(points * 1.4 * DPI / 72)), line, font=face, fill=0)
        columns.append(lines)
    return page, "\n".join(columns[0] + columns[1])


def prose_beside_list_image(seed: int = 5, *, points: float = 10.0) -> tuple[Image.Image, str]:
    """A column of prose, 3.1 inches wide, beside a list of 30 items of a word or two on the same
    rows."""
    rng = random.Random(seed)
    page, draw = _page()
    face = font(points)
    step = round(points * 1.4 * DPI / 72)
    text = " ".join(rng.choice(SENTENCES) for _ in range(30))
    prose = textwrap.wrap(text, width=42)[:30]
    items = [" ".join(rng.choice(SENTENCES).split()[: rng.randrange(1, 3)]) for _ in prose]
    for row, (line, item) in enumerate(zip(prose, items, strict=True)):
        draw.text((DPI, DPI + row * step), line, font=face, fill=0)
        draw.text((4.6 * DPI, DPI + row * step), item, font=face, fill=0)
    return page, "\n".join(prose + items)


def _page() -> tuple[Image.Image, ImageDraw.ImageDraw]:
    page = Image.new("L", (round(PAGE_INCHES[0] * DPI), round(PAGE_INCHES[1] * DPI)), 255)
    return page, ImageDraw.Draw(page)
