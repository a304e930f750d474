"""Inputs only the benchmarks need, built on the app's own sample pages."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFilter

from app.pdf.samples import DPI, PAGE_INCHES, SENTENCES, font, page_text, render_scan, wrapped


def degrade_scan(image: Image.Image, seed: int) -> Image.Image:
    """What an economy office scan does to a clean page: a slight skew, optics that resolve
    about 120 DPI (stored at 300), grey paper and ink, light sensor noise and a few specks of
    dust. Deterministic for a seed (the noise comes from random.Random, not from PIL's
    effect_noise, which uses the C library's rand())."""
    rng = random.Random(seed)
    image = image.rotate(rng.uniform(-0.7, 0.7), resample=Image.Resampling.BICUBIC, fillcolor=255)
    full = image.size
    image = image.resize((full[0] * 2 // 5, full[1] * 2 // 5), Image.Resampling.BOX)
    image = image.resize(full, Image.Resampling.BICUBIC).filter(ImageFilter.GaussianBlur(1.0))
    image = image.point(lambda v: 28 + v * 212 // 255)  # ink is not black, paper is not white
    noise = Image.frombytes("L", image.size, rng.randbytes(image.width * image.height))
    noise = noise.point(lambda v: 128 + (v - 128) * 20 // 128)  # uniform, +-20 grey levels
    image = ImageChops.add(image, noise, scale=1.0, offset=-128)
    draw = ImageDraw.Draw(image)
    for _ in range(rng.randrange(40, 120)):
        x, y, r = rng.randrange(image.width), rng.randrange(image.height), rng.uniform(1, 3.5)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=rng.randrange(40, 140))
    return image


def make_degraded_scan_pdf(path: Path, pages: int, seed: int = 0) -> list[str]:
    """An image-only PDF of `pages` prose pages that look scanned rather than rendered: 8-point
    type through degrade_scan, stored as JPEG at quality 40, so OCR engines make mistakes worth
    comparing (tesseract reads the app's clean sample pages without a single error). Returns
    each page's text as laid out."""
    texts = [page_text(i, seed) for i in range(pages)]
    images = (degrade_scan(render_scan(t, points=8), seed * 100_003 + i) for i, t in enumerate(texts))
    first = next(images)
    first.save(path, "PDF", resolution=DPI, save_all=True, append_images=images, quality=40)
    return [wrapped(t) for t in texts]


DENSE_POINTS = 10.0
DENSE_COLUMNS = 92  # characters a line: a full 7-inch measure of 10-point serif
DENSE_LINES = 54  # 10 points on 12.5 of leading fill 9.4 of the page's 11 inches


def make_dense_scan_pdf(path: Path, pages: int, seed: int = 0) -> list[str]:
    """An image-only PDF of `pages` clean, dense prose pages at 300 DPI (about 4,500 characters a
    page, two to three times the degraded scan's), stored as Pillow stores a gray page in a PDF
    (JPEG at its default quality, 75): the kind of page where tesseract's own time is almost all
    there is. Returns each page's text as laid out."""
    texts, images = [], []
    for index in range(pages):
        rng = random.Random(seed * 100_003 + index)
        words = " ".join(rng.choice(SENTENCES) for _ in range(DENSE_LINES * 2))
        lines = textwrap.wrap(words, width=DENSE_COLUMNS)[:DENSE_LINES]
        texts.append("\n".join(lines))
        images.append(_dense_page(lines))
    images[0].save(path, "PDF", resolution=DPI, save_all=True, append_images=images[1:])
    return texts


def _dense_page(lines: list[str]) -> Image.Image:
    width, height = (round(x * DPI) for x in PAGE_INCHES)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    face = font(DENSE_POINTS)
    leading = round(DENSE_POINTS * 1.25 * DPI / 72)
    y = round(0.8 * DPI)
    for line in lines:
        draw.text((round(0.75 * DPI), y), line, font=face, fill=0)
        y += leading
    return image
