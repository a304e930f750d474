"""Uneven lighting taken out of a scan before tesseract reads it, where the paper is much darker
in one part of the page than in another.

tesseract finds a page's text lines on a black and white copy it makes with one threshold for
the whole page (Otsu's). Where the paper darkens across the page (a book's gutter, a page
photographed under a lamp, a hand's shadow, the corners of a phone's picture), the shaded
paper falls below that threshold and goes black with the text on it: a page shaded from white
at one side to a third of that at the other read with 61 % of its characters wrong, by this
engine and by ocrmypdf alike (tesseract's Sauvola thresholding read it, at 2.4 times the CPU
of every page). Such a page is divided by its paper: each pixel is scaled by 255 over the
brightness of the paper around it, so the paper comes out white everywhere and the ink keeps
its contrast with it, and the same page reads without an error.

The paper's brightness at a point is the brightest level within about a centimetre of it, on
the page reduced to PAPER_DPI: a centimetre spans the space between lines and the inside of
letters, so it finds the paper among the text. A page is evened out only when that brightness
varies by UNEVEN grey levels or more between its lighter and darker parts, and what is darker
than DARK there (a black band, a photograph's shadows, the background of white text on black)
is not taken for paper and is left as it is. Measuring costs 2-3 ms a page at 300 DPI (the
reduction and a few passes over 130,000 pixels); evening out, on the pages that need it, about
0.04 s more.
"""

from __future__ import annotations

from PIL import Image, ImageChops, ImageFilter, ImageMath

PAPER_DPI = 37.5  # the resolution the paper is measured at: a letter page is 319 x 412 pixels
WINDOW_INCHES = 0.4  # the side of the square the paper is looked for in
UNEVEN = 48  # grey levels between the lighter and darker paper (5th and 95th percentiles)
DARK = 64  # levels below this are not paper: left as they are
STRIP_ROWS = 256  # rows of the page divided at a time


def paper_levels(image: Image.Image, dpi: int) -> Image.Image:
    """The brightness of the paper around each point of an 8-bit gray page image rendered at
    dpi, at PAPER_DPI: the brightest level within WINDOW_INCHES of it."""
    factor = max(1, round(dpi / PAPER_DPI))
    small = image.reduce(factor) if factor > 1 else image
    side = 2 * max(1, round(WINDOW_INCHES * dpi / factor / 2)) + 1
    return _lightest(small, side)


def is_uneven(paper: Image.Image) -> bool:
    """Whether the paper's lighter and darker parts (what is lighter than DARK) differ by UNEVEN
    grey levels or more."""
    counts = paper.histogram()[DARK:]
    total = sum(counts)
    if total == 0:
        return False
    return _percentile(counts, 0.95 * total) - _percentile(counts, 0.05 * total) >= UNEVEN


def evened(image: Image.Image, dpi: int) -> tuple[Image.Image, bool]:
    """The image divided by its paper when the paper is uneven (is_uneven), and whether it was.
    Only 8-bit gray images are measured (a page is rendered so)."""
    if image.mode != "L" or min(image.size) < 2:
        return image, False
    paper = paper_levels(image, dpi)
    if not is_uneven(paper):
        return image, False
    # What is darker than DARK is divided by white: left as it is.
    paper = paper.point([255 if level < DARK else level for level in range(256)])
    return _divided(image, paper.filter(ImageFilter.GaussianBlur(2))), True


def _divided(image: Image.Image, paper: Image.Image) -> Image.Image:
    """Each pixel of image times 255 over the paper's level there (paper: a smaller map of the
    same page, scaled up), clipped to white (a speck lighter than its paper). A band of
    STRIP_ROWS rows at a time, in floats: the largest page rendered (160 megapixels) is never
    held as floats (640 MB a copy), only as the one 8-bit copy made."""
    width, height = image.size
    scale = paper.height / height
    flat = Image.new("L", image.size)
    for top in range(0, height, STRIP_ROWS):
        bottom = min(height, top + STRIP_ROWS)
        under = paper.resize(
            (width, bottom - top),
            Image.Resampling.BILINEAR,
            box=(0, top * scale, paper.width, bottom * scale),
        )
        strip = ImageMath.lambda_eval(
            lambda m: m["convert"](m["page"] * 255 / m["paper"], "L"),
            page=image.crop((0, top, width, bottom)),
            paper=under,
        )
        flat.paste(strip, (0, top))
    return flat


def _lightest(image: Image.Image, side: int) -> Image.Image:
    """The brightest level within a side x side square (side odd) centred on each pixel, the
    square cut short at the image's edges. Rows, then columns, each by doubling shifted copies:
    a few passes of Pillow's C code, where its MaxFilter (a rank filter) took 7-32 ms on a page
    reduced to PAPER_DPI."""
    width, height = image.size
    reach = side // 2
    # Padded by the reach on every side with black (never the lightest), so that the window of the
    # pixel at (x, y) of the image starts at (x, y) of the padded copy.
    padded = Image.new("L", (width + 2 * reach, height + 2 * reach), 0)
    padded.paste(image, (reach, reach))
    for horizontal in (True, False):
        span = 1
        while span < side:
            step = min(span, side - span)
            shifted = Image.new("L", padded.size, 0)
            box = (step, 0, *padded.size) if horizontal else (0, step, *padded.size)
            shifted.paste(padded.crop(box), (0, 0))
            padded = ImageChops.lighter(padded, shifted)
            span += step
    return padded.crop((0, 0, width, height))


def _percentile(counts: list[int], rank: float) -> int:
    """The first index of counts whose running total reaches rank."""
    seen = 0
    for index, count in enumerate(counts):
        seen += count
        if seen >= rank:
            return index
    return len(counts) - 1
