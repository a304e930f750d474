"""Grainy scans: small type, a little blur, grey paper and ink, and sensor noise of about 22 grey
levels, stored as JPEG. tesseract read such a page as a few hundred characters of "ee oe" where
a 3 x 3 median filter first makes it read without an error (app.engines._denoise).

Deterministic for a seed: the grain is random.Random's bytes (two uniform layers added, which is
near enough to a bell curve), not PIL's effect_noise, which uses the C library's rand().
"""

from __future__ import annotations

import random
from pathlib import Path

from PIL import Image, ImageChops, ImageFilter

from app.pdf.samples import DPI, page_text, render_scan, wrapped


def _grain(size: tuple[int, int], sigma: int, rng: random.Random) -> Image.Image:
    """Noise centred on 128 with a standard deviation of about sigma grey levels."""
    amplitude = 27 * sigma // 22  # two uniform layers of +-a add up to a deviation of a * 0.82

    def layer() -> Image.Image:
        noise = Image.frombytes("L", size, rng.randbytes(size[0] * size[1]))
        return noise.point(lambda v: 128 + (v - 128) * amplitude // 128)

    return ImageChops.add(layer(), layer(), scale=1.0, offset=-128)


def noisy_scan_pdf(path: Path, seed: int = 0, *, sigma: int = 22) -> str:
    """A one-page 300 DPI grainy scan of 8 pt prose at path; returns its text."""
    text = page_text(seed, 5)
    image = render_scan(text, points=8).point(lambda v: 40 + v * (235 - 40) // 255)  # ink, paper
    image = image.filter(ImageFilter.GaussianBlur(1.2))
    image = ImageChops.add(image, _grain(image.size, sigma, random.Random(seed)), scale=1.0, offset=-128)
    image.save(path, "PDF", resolution=DPI, quality=85)
    return wrapped(text)
