"""Sensor noise taken out of a scan before tesseract reads it, where there is much of it.

tesseract binarises the page itself, and on a grainy scan (small type, blurred, with noise of
about 20 grey levels) it collapsed: a page that reads without an error once its noise is
smoothed came out as a few hundred characters of "ee oe eer" at confidence 0.16, after a minute
(a doubtful page is read a second time, upside down). A renderer that happens to smooth a little
(poppler's) read the same page without an error. So a page whose noise is high is passed through
a 3 x 3 median filter, which keeps the edges of letters as a blur does not.

The noise is measured as the median difference between neighbouring pixels along each row: on
a clean scan most neighbours are the same paper (0), and letters' edges are too few to move the
median; JPEG artefacts and light grain give 1-7, and the grain that made tesseract collapse
13-21. Measuring takes about a millisecond (32 bands of 8 rows); the filter, only on noisy
pages, about 0.2 s on a 300 DPI letter page.
"""

from __future__ import annotations

from PIL import Image, ImageChops, ImageFilter

NOISY = 10  # median neighbour difference (grey levels) from which a page is smoothed
STRIPS = 32  # bands of rows measured, spread down the page
STRIP_ROWS = 8


def noise_level(image: Image.Image) -> int:
    """The median absolute difference between horizontally neighbouring pixels (8-bit gray), in
    STRIPS bands of rows spread down the page: a 160-megapixel page is measured in a few hundred
    kilobytes, not copied whole."""
    width, height = image.size
    if width < 2 or height < 1:
        return 0
    histogram = [0] * 256
    rows = max(1, min(STRIP_ROWS, height // STRIPS))
    for top in range(0, height - rows + 1, max(rows, height // STRIPS)):
        left = image.crop((0, top, width - 1, top + rows))
        right = image.crop((1, top, width, top + rows))
        band = ImageChops.difference(right, left).histogram()
        histogram = [a + b for a, b in zip(histogram, band, strict=True)]
    half, seen = sum(histogram) / 2, 0
    for level, count in enumerate(histogram):
        seen += count
        if seen >= half:
            return level
    return 0


def denoised(image: Image.Image) -> tuple[Image.Image, bool]:
    """The image with its noise smoothed when it is noisy (NOISY), and whether it was. Only 8-bit
    gray images are measured (a page is rendered so; a 1-bit image has no grain to smooth)."""
    if image.mode != "L" or noise_level(image) < NOISY:
        return image, False
    return image.filter(ImageFilter.MedianFilter(3)), True
