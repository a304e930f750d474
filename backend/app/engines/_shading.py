"""Uneven lighting and shaded bands taken out of a scan before tesseract reads it, where the
paper is much darker in one part of the page than in another.

tesseract finds a page's text lines on a black and white copy it makes with one threshold for
the whole page (Otsu's). Where the paper darkens across the page (a book's gutter, a page
photographed under a lamp, a hand's shadow, the corners of a phone's picture), the shaded
paper falls below that threshold and goes black with the text on it: a page shaded from white
at one side to a third of that at the other read with 61 % of its characters wrong, by this
engine and by ocrmypdf alike (tesseract's Sauvola thresholding read it, at 2.4 times the CPU
of every page). So did black text on a table's rows shaded mid grey: 35 % of such a page
wrong, ocrmypdf 33 %. Such a page is divided by its paper: each pixel is scaled by 255 over
the level of the paper around it, so the paper comes out white everywhere and the ink keeps
its contrast with it, and the same pages read without an error.

The paper's level at a point is the brightest level within about a centimetre of it, on the
page reduced to PAPER_DPI: a centimetre spans the space between lines and the inside of
letters, so it finds the paper among the text. It is uneven when it varies by UNEVEN grey
levels or more between its lighter and darker parts; what is darker than DARK there (a black
band, a photograph's shadows, the background of white text on black) is not taken for paper
and is left as it is. A shaded band narrower than that centimetre (a table's row) has white
paper beside it, so bands are found apart (shaded_bands): where most pixels are of a middle
grey, over at least BAND_INCHES, their own grey is the paper, unless the text on them is light
(white on grey would go white with its band). Measuring both costs about 3 ms a page at 300
DPI; dividing, on the pages that need it, about 0.05 s more.
"""

from __future__ import annotations

from PIL import Image, ImageChops, ImageFilter, ImageMath

from app.engines._morphology import both, darkest, level_at, lightest

PAPER_DPI = 37.5  # the resolution the paper is measured at: a letter page is 319 x 412 pixels
WINDOW_INCHES = 0.4  # the side of the square the paper is looked for in
UNEVEN = 48  # grey levels between the lighter and darker paper (5th and 95th percentiles)
DARK = 64  # levels below this are not paper: left as they are
STRIP_ROWS = 256  # rows of the page divided at a time
BAND_DPI = 75  # the resolution shaded bands are found at
BAND_INCHES = 0.12  # a band is at least this wide and tall; a letter's stroke is narrower
BAND_SHARE = 0.005  # of the page, under which its bands are too few to look for


def paper_levels(image: Image.Image, dpi: int) -> Image.Image:
    """The brightness of the paper around each point of an 8-bit gray page image rendered at
    dpi, at PAPER_DPI: the brightest level within WINDOW_INCHES of it."""
    factor = max(1, round(dpi / PAPER_DPI))
    small = image.reduce(factor) if factor > 1 else image
    side = 2 * max(1, round(WINDOW_INCHES * dpi / factor / 2)) + 1
    return lightest(small, side)


def is_uneven(paper: Image.Image) -> bool:
    """Whether the paper's lighter and darker parts (what is lighter than DARK) differ by UNEVEN
    grey levels or more."""
    counts = paper.histogram()[DARK:]
    total = sum(counts)
    if total == 0:
        return False
    return level_at(counts, 0.95 * total) - level_at(counts, 0.05 * total) >= UNEVEN


def evened(image: Image.Image, dpi: int) -> tuple[Image.Image, bool]:
    """The image divided by its paper when the paper is uneven (is_uneven) or holds shaded bands
    under dark text (shaded_bands), and whether it was. Only 8-bit gray images are measured (a
    page is rendered so)."""
    if image.mode != "L" or min(image.size) < 2:
        return image, False
    paper = paper_levels(image, dpi)
    uneven = is_uneven(paper)
    bands = shaded_bands(image, dpi)
    if not uneven and bands is None:
        return image, False
    if uneven:  # what is darker than DARK is divided by white: left as it is
        paper = paper.point([255 if level < DARK else level for level in range(256)])
        paper = paper.filter(ImageFilter.GaussianBlur(2))
    else:
        paper = Image.new("L", paper.size, 255)
    if bands is not None:
        levels, area = bands
        paper = Image.composite(levels, paper.resize(levels.size, Image.Resampling.BILINEAR), area)
    return _divided(image, paper), True


def shaded_bands(image: Image.Image, dpi: int) -> tuple[Image.Image, Image.Image] | None:
    """The shaded bands of a page under dark text, at BAND_DPI: their paper's level, and where
    they are (255); None when it has none over BAND_SHARE of it.

    A band is where most of the page's pixels are of a middle grey (darker than its paper by
    UNEVEN levels, lighter than DARK) and stays so BAND_INCHES across: a letter's stroke is
    narrower, a table's shaded row or a form's shaded field wider. Taken at BAND_DPI by single
    pixels (every fourth at 300 DPI), not averages, so that a band's grey is not mixed with its
    text. A band with light text in it (white on grey) is left out, with a margin: evened, its
    text would go white with it. Where it cannot be told which (light and dark text within
    BAND_INCHES of each other), the band is evened."""
    if _mostly_grey(image, dpi, BAND_DPI / 2, 1) is None:  # a cheaper look first: most pages have none
        return None
    found = _mostly_grey(image, dpi, BAND_DPI, 2)
    if found is None:
        return None
    small, grey, middle, share, core, across = found
    core = lightest(core, across)  # what stays mostly grey BAND_INCHES across
    least = BAND_SHARE * small.width * small.height
    light = both(small.point([255 if level >= grey.stop else 0 for level in range(256)]), core)
    dark = both(small.point([255 if level < DARK else 0 for level in range(256)]), core)
    light_only = both(lightest(light, across), ImageChops.invert(lightest(dark, across)))
    grow = across + 2  # over the band's rim, and the gaps its text leaves
    keep_out = lightest(light_only, grow + 2 * across)
    area = both(lightest(core, grow), ImageChops.invert(keep_out))
    if area.histogram()[255] < least:
        return None
    # the band's level: the mean of its grey pixels around each point
    wide = share.filter(ImageFilter.BoxBlur(4))
    grey_sum = (
        ImageChops.multiply(small, middle).filter(ImageFilter.BoxBlur(2)).filter(ImageFilter.BoxBlur(4))
    )
    levels = ImageMath.lambda_eval(
        lambda m: m["convert"](m["sum"] * 255 / (m["share"] + 0.001), "L"), sum=grey_sum, share=wide
    )
    # where no grey is near enough to measure (the edge of the margin grown round a band): white
    return levels.point([255 if level < DARK else level for level in range(256)]), area


def _mostly_grey(
    image: Image.Image, dpi: int, at_dpi: float, radius: int
) -> tuple[Image.Image, range, Image.Image, Image.Image, Image.Image, int] | None:
    """The page taken at at_dpi by every pixel so many (small), the grey levels of bands there
    (grey), where small is of them (middle), their share of the square of 2 x radius + 1 around
    each point (share), what stays mostly grey BAND_INCHES across, shrunk by half that (core),
    and that width in pixels (across); None when what stays is under a quarter of BAND_SHARE
    of the page (a band shrinks by about half)."""
    factor = max(1, round(dpi / at_dpi))
    small = image.resize(
        (max(1, image.width // factor), max(1, image.height // factor)), Image.Resampling.NEAREST
    )
    counts = small.histogram()
    least = BAND_SHARE * sum(counts)
    paper = 255 - level_at(counts[::-1], 0.2 * sum(counts))  # a fifth of the page is lighter
    grey = range(DARK, paper - UNEVEN + 1)
    if not grey or sum(counts[grey.start : grey.stop]) < least:
        return None
    middle = small.point([255 if level in grey else 0 for level in range(256)])
    share = middle.filter(ImageFilter.BoxBlur(radius))
    mostly = share.point([255 if level >= 128 else 0 for level in range(256)])
    if mostly.histogram()[255] < least:
        return None
    across = 2 * max(1, round(BAND_INCHES * dpi / factor / 2)) + 1
    core = darkest(mostly, across)
    if core.histogram()[255] < least / 4:
        return None
    return small, grey, middle, share, core, across


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
