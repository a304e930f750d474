"""Dust taken off a scan before tesseract reads it, where there is much of it.

A photocopy of a dusty original, or a scan through a dusty platen, scatters small dark specks
over the page. tesseract reads those between words as punctuation and those beside letters as
parts of them: a 300 DPI page of 11.5 point prose under 3,000 specks of 1-3 pixels read with 6 %
of its characters wrong, a 200 DPI fax under 2,500 specks of a pixel or two 2-3 %. Such a page
has its lone specks painted with its paper.

The page is looked at in cells of about 1/CELL_DPI inch. A cell holds ink when a 2 x 2 block in
it is SPECK_DROP darker than the paper (a pixel of black, or a speck of grey). It is lone when
the neighbourhood of REACH_INCHES around it, and around each cell beside it, holds no more ink
than a black square of SPECK_INCHES: a period, an i's dot or an accent has its letters within
that reach, and is kept. Ink is summed by its darkness (a box mean over the cells), so the faint
strokes of blurred small type count for their period as much as they weigh. Marks in a row, each
within CHAIN_INCHES of the next, are kept too: a table of contents' dotted leaders are as small
and as far from letters as dust. Only a page with at least MIN_SPECKS lone cells a square inch
is touched, so a page with little dust keeps every mark it has (a dash alone in a table's cell,
a middle dot between spaces). Looking costs about 20 ms a page at 300 DPI; painting, on the
pages that need it, about as much again.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageChops, ImageFilter

from app.engines._morphology import both, darkest, lightest, paper_level

SPECK_DROP = 48  # a 2 x 2 block this much darker than the paper holds a speck (a pixel of ink)
FAINT_BELOW_PAPER = 50  # what is painted of a speck: its pixels this far below the paper
CELL_DPI = 75  # the page is looked at in cells of about 1/75 in (4 x 4 pixels at 300 DPI)
REACH_INCHES = 0.04  # a speck is lone when nothing else is marked within this of it
SPECK_INCHES = 0.02  # ... no more ink than a black square of this side (a period of 11 pt type)
CHAIN_INCHES = 0.12  # ... unless it is one of a row of such marks, each within this of the next
DOT_SPECKS = 2.0  # ... where a mark of the row may have a speck's ink near it, and its own
MIN_SPECKS = 4.0  # lone cells per square inch from which a page is cleaned


def despeckled(image: Image.Image, dpi: int) -> tuple[Image.Image, bool]:
    """The image with its lone specks painted with its paper when it has many (MIN_SPECKS), and
    whether it was. Only 8-bit gray images are looked at, as in _denoise."""
    if image.mode != "L" or min(image.size) < 4:
        return image, False
    half = image.reduce(2)  # a speck of one pixel darkens its 2 x 2 block by a quarter of its ink
    cell = max(1, round(dpi / CELL_DPI / 2))  # in blocks
    cells = _Cells.of(half, cell, dpi)
    fewest = MIN_SPECKS * image.width * image.height / dpi**2
    lone = cells.lone(1)
    if _count(lone) < fewest:  # most pages: what is lone is too little to be dust
        return image, False
    lone = ImageChops.subtract(lone, _in_rows(lone, cells, round(CHAIN_INCHES * dpi / (2 * cell))))
    if _count(lone) < fewest:
        return image, False
    # And the cells beside, where a speck crosses a cell's edge: those with no ink of their own,
    # so that a period or a leader's dot beside a speck keeps its ink.
    grown = ImageChops.subtract(lightest(lone, 3), ImageChops.subtract(cells.held, lone))
    side = 2 * cell
    covered = grown.resize((grown.width * side, grown.height * side), Image.Resampling.NEAREST)
    faint = cells.paper - FAINT_BELOW_PAPER
    covered = both(covered.crop((0, 0, *image.size)), image.point(lambda v: 255 if v < faint else 0))
    return Image.composite(Image.new("L", image.size, cells.paper), image, covered), True


@dataclass(frozen=True, slots=True)
class _Cells:
    """The page in cells (cell x cell blocks of 2 x 2 pixels): which hold ink, and how dark the
    neighbourhood of REACH_INCHES around each is (paper's noise, as light as it is dark, adds
    nothing to a mean)."""

    held: Image.Image  # 255 where a cell holds a block SPECK_DROP darker than the paper
    around: Image.Image  # the mean level of each cell's neighbourhood
    paper: int
    speck: float  # how much darker than the paper that mean is with one speck in it

    @classmethod
    def of(cls, half: Image.Image, cell: int, dpi: int) -> _Cells:
        cells = half.reduce(cell) if cell > 1 else half
        paper = paper_level(cells)
        marked = half.point(lambda v: 255 if v <= paper - SPECK_DROP else 0)
        held = (marked.reduce(cell) if cell > 1 else marked).point(lambda v: 255 if v else 0)
        reach = max(1, round(REACH_INCHES * dpi / (2 * cell)))
        window = ((2 * reach + 1) * 2 * cell) ** 2  # pixels in a cell's neighbourhood
        speck = paper * (SPECK_INCHES * dpi) ** 2 / window
        return cls(held, cells.filter(ImageFilter.BoxBlur(reach)), paper, speck)

    def lone(self, specks: float) -> Image.Image:
        """255 at each cell that holds ink where the neighbourhood of it, and of each cell beside
        it (painted with it), holds no more ink than `specks` specks, else 0. The cells beside
        count: a period across cells whose far one alone is quiet (away from its word) is not
        lone."""
        limit = self.paper - specks * self.speck
        quiet = self.around.point(lambda v: 255 if v >= limit else 0)
        return both(self.held, darkest(quiet, 3))


def _count(mask: Image.Image) -> int:
    return mask.histogram()[255]


def _in_rows(lone: Image.Image, cells: _Cells, reach: int) -> Image.Image:
    """255 at each lone cell that is one of a row of dots, along a row or a column of cells (a
    dotted leader or rule), else 0: a dot with dots 3 to reach cells from it on both sides, or
    an end dot with such a dot as near on one side. Dust beside a dot would make it not lone,
    and break its row: a dot here may have up to DOT_SPECKS specks' ink near it."""
    dots = cells.lone(DOT_SPECKS)
    half = max(0, (reach - 3) // 2)  # the reach on either side, 3 cells out, as a centred window
    shift = 3 + half
    found = Image.new("L", lone.size, 0)
    for window, offset in (((2 * half + 1, 3), (shift, 0)), ((3, 2 * half + 1), (0, shift))):
        inside = both(dots, both(*_either_side(dots, window, offset)))
        ends = ImageChops.lighter(*_either_side(inside, window, offset))
        found = ImageChops.lighter(found, ImageChops.lighter(inside, ends))
    return both(lone, found)


def _either_side(
    marks: Image.Image, window: tuple[int, int], offset: tuple[int, int]
) -> tuple[Image.Image, Image.Image]:
    """255 where marks has a mark in the window (across, down) centred offset (right, down)
    before each cell; and where it has one as far after it."""
    near = lightest(marks, *window)
    return _shifted(near, *offset), _shifted(near, -offset[0], -offset[1])


def _shifted(image: Image.Image, right: int, down: int) -> Image.Image:
    """image moved right and down by as many pixels (either may be negative), 0 where it left."""
    moved = Image.new("L", image.size, 0)
    moved.paste(image, (right, down))
    return moved
