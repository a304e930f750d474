"""Unevenly lit scans: a page of 10-point prose whose paper darkens over part of it, as light
falls on a page photographed under a lamp, on a book's gutter, or around a stain; and pages
whose lines sit on shaded bands, as a table's shaded rows do (banded_image). Read as it came,
tesseract lost the shaded text (its one threshold for the page turns shaded paper black): 56 %
of the characters wrong on the lamp-lit page, 5 % on the gutter, 10 % under the stain.

Each lit page is the app's clean sample page multiplied by a map of the light (255: as it
came); the darkest paper is LIGHT_LEFT of white. Deterministic for a seed.
"""

from __future__ import annotations

import random
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFilter

from app.pdf.samples import DPI, PAGE_INCHES, SENTENCES, font, page_text, render_scan, wrapped

LIGHT_LEFT = 0.35  # the darkest paper, as a share of white
KINDS = ("lamp", "gutter", "stain")


def light(size: tuple[int, int], kind: str, darkest: float = LIGHT_LEFT) -> Image.Image:
    """The share of the light each point of a page of size gets, 0-255."""
    width, height = size
    if kind == "lamp":  # darkest at the left edge, full light at the right
        falloff = Image.linear_gradient("L").rotate(90).resize(size)
    elif kind == "gutter":  # a dark band down the left quarter of the page
        falloff = Image.new("L", size, 255)
        falloff.paste(Image.linear_gradient("L").rotate(90).resize((width // 4, height)), (0, 0))
    elif kind == "stain":  # a soft blot over the middle of the page
        falloff = Image.new("L", size, 255)
        ImageDraw.Draw(falloff).ellipse((width * 0.3, height * 0.3, width * 0.7, height * 0.6), fill=0)
        falloff = falloff.filter(ImageFilter.GaussianBlur(80))
    else:
        raise ValueError(f"no light called {kind!r}")
    low = round(255 * darkest)
    return falloff.point(lambda level: low + level * (255 - low) // 255)


def shaded_image(kind: str, seed: int = 5, *, darkest: float = LIGHT_LEFT) -> tuple[Image.Image, str]:
    """The page's image, unevenly lit, and its text as laid out."""
    text = page_text(seed, 3)
    page = render_scan(text, points=10)
    return ImageChops.multiply(page, light(page.size, kind, darkest)), wrapped(text)


def shaded_scan_pdf(path: Path, kind: str, seed: int = 5) -> str:
    """A one-page 300 DPI scan at path lit as kind says (KINDS); returns its text."""
    image, text = shaded_image(kind, seed)
    image.save(path, "PDF", resolution=DPI)
    return text


BAND_LINES = 28


def banded_image(
    band: int | None, *, text: int = 0, every: int = 3, seed: int = 3, header: int | None = None
) -> tuple[Image.Image, str]:
    """A page of 11-point lines 90 pixels apart, every `every`-th one on a band of grey `band`
    (2,000 by 70 pixels: a table's shaded row) in grey `text`, the others black on white; with
    header, the first line in white on a band of that grey instead. Returns the image and its
    text. Read as it came, black text on bands of grey 100-160 was lost (35 % of the page's
    characters wrong; ocrmypdf lost it too), and on rows shaded one after another all of it."""
    rng = random.Random(seed)
    lines = [rng.choice(SENTENCES)[:70] for _ in range(BAND_LINES)]
    page = Image.new("L", (round(PAGE_INCHES[0] * DPI), round(PAGE_INCHES[1] * DPI)), 255)
    draw = ImageDraw.Draw(page)
    face = font(11)
    for index, line in enumerate(lines):
        top = 300 + 90 * index
        fill = 0
        if header is not None and index == 0:
            draw.rectangle((280, top - 10, 2270, top + 60), fill=header)
            fill = 255
        elif band is not None and index % every == 0:
            draw.rectangle((280, top - 10, 2270, top + 60), fill=band)
            fill = text
        draw.text((300, top), line, font=face, fill=fill)
    return page, "\n".join(lines)


def banded_scan_pdf(path: Path, band: int, **options: int) -> str:
    """banded_image as a one-page 300 DPI scan at path; returns its text."""
    image, text = banded_image(band, **options)
    image.save(path, "PDF", resolution=DPI)
    return text
