"""Scans lying every way a scanner or a person leaves them: turned a quarter, upside down,
tilted a few degrees; a landscape page, a nearly empty one, pages whose /Rotate entry turns
them, a table and a page with a picture.

Each page is the app's own sample page (app.pdf.samples.render_scan), posed (tilted, then turned
as a sheet laid sideways on the glass would be), then put through a plain office scanner: a
little blur, grey paper, sensor noise, a few specks, JPEG. With each fixture comes the pose of
every page as the engine should find it, so a test checks the turn and the tilt as well as the
text.
"""

from __future__ import annotations

import io
import random
import textwrap
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont
from pypdf import PdfReader, PdfWriter

from app.pdf.samples import DPI, FONT_CANDIDATES, page_text, render_scan, wrapped
from tests.corpus import Fixture

POINTS = 10.0  # type size of the prose pages: a typical letter


@dataclass(frozen=True, slots=True)
class Pose:
    """How a page lies as rendered (its /Rotate applied), so what the engine should record."""

    rotation: int  # degrees clockwise that turn it upright: 0, 90, 180 or 270
    skew: float  # degrees its lines are tilted counter-clockwise (0.0: level)


@dataclass(frozen=True, slots=True)
class Posed:
    fixture: Fixture
    poses: tuple[Pose, ...]  # per page, in order


# The same page of text every way up and tilted: (label, clockwise quarter turns the scan lies
# at, counter-clockwise tilt). A page scanned turned 90 degrees clockwise is made upright by a
# turn of 270.
SAME_TEXT_PAGES = (
    ("upright", 0, 0.0),
    ("turned 90", 90, 0.0),
    ("turned 180", 180, 0.0),
    ("turned 270", 270, 0.0),
    ("tilted +3", 0, 3.0),
    ("tilted -3", 0, -3.0),
    ("tilted +1.5", 0, 1.5),
)


def scanner(image: Image.Image, seed: int) -> Image.Image:
    """A plain office scanner, deterministic for a seed: optics a little soft, ink not black and
    paper not white, +-6 grey levels of noise, a few specks of dust. No tilt of its own: the
    pose is the fixture's."""
    rng = random.Random(seed)
    image = image.filter(ImageFilter.GaussianBlur(0.7)).point(lambda v: 24 + v * 214 // 255)
    noise = Image.frombytes("L", image.size, rng.randbytes(image.width * image.height))
    image = ImageChops.add(image, noise.point(lambda v: 128 + (v - 128) * 6 // 128), offset=-128)
    draw = ImageDraw.Draw(image)
    for _ in range(rng.randrange(30, 80)):
        x, y, r = rng.randrange(image.width), rng.randrange(image.height), rng.uniform(1, 3)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=rng.randrange(40, 140))
    return image


def posed(image: Image.Image, lies_turned: int, tilt: float) -> Image.Image:
    """The clean page tilted counter-clockwise by tilt, then lying turned clockwise by lies_turned."""
    if tilt:
        image = image.rotate(tilt, resample=Image.Resampling.BICUBIC, fillcolor=255)
    return image.rotate(-lies_turned, expand=True) if lies_turned else image


def upright_turn(lies_turned: int) -> int:
    """The clockwise turn that makes a page lying turned by lies_turned upright."""
    return (360 - lies_turned) % 360


def same_text(directory: Path, seed: int = 16, points: float = POINTS) -> Posed:
    """One page of prose seven ways (SAME_TEXT_PAGES): upright, turned 90, 180 and 270 degrees,
    tilted +3, -3 and +1.5 degrees. Every page should read as the upright one does."""
    text = page_text(0, seed)
    clean = render_scan(text, points=points)
    images = [
        scanner(posed(clean, turned, tilt), seed + i) for i, (_, turned, tilt) in enumerate(SAME_TEXT_PAGES)
    ]
    path = directory / "orientation-same-text.pdf"
    _save(path, images)
    return Posed(
        Fixture(
            "orientation-same-text",
            path,
            tuple(wrapped(text) for _ in images),
            "one page of prose upright, turned a quarter, a half and three quarters, tilted 3 and 1.5 degrees",
        ),
        tuple(Pose(upright_turn(turned), tilt) for _, turned, tilt in SAME_TEXT_PAGES),
    )


def landscape(directory: Path, seed: int = 17) -> Posed:
    """A landscape page (11 x 8.5 inches) of long lines of text, upright: it must not be turned."""
    text = page_text(0, seed, sentences=10)
    image = Image.new("L", (round(11 * DPI), round(8.5 * DPI)), 255)
    draw, font = ImageDraw.Draw(image), _font(POINTS)
    lines = ["\n".join(textwrap.wrap(paragraph, width=100)) for paragraph in text.split("\n\n")]
    y = DPI
    for paragraph in lines:
        for line in paragraph.split("\n"):
            draw.text((DPI, y), line, font=font, fill=0)
            y += round(POINTS * 1.45 * DPI / 72)
        y += round(POINTS * 0.7 * DPI / 72)
    path = directory / "orientation-landscape.pdf"
    _save(path, [scanner(image, seed)])
    return Posed(Fixture("orientation-landscape", path, ("\n\n".join(lines),), "wide page"), (Pose(0, 0.0),))


def near_empty(directory: Path, seed: int = 18) -> Posed:
    """A page with nothing on it but its number at the foot, and scanner noise."""
    image = Image.new("L", (round(8.5 * DPI), 11 * DPI), 255)
    ImageDraw.Draw(image).text((round(3.7 * DPI), round(10.2 * DPI)), "Page 3 of 12", font=_font(11), fill=0)
    path = directory / "orientation-near-empty.pdf"
    _save(path, [scanner(image, seed)])
    return Posed(
        Fixture("orientation-near-empty", path, ("Page 3 of 12",), "a page number only"), (Pose(0, 0.0),)
    )


def rotate_entries(directory: Path, seed: int = 19) -> Posed:
    """Two scans with a /Rotate entry: the first lies turned 90 degrees and /Rotate 270 shows it
    upright (a scanner that knew), the second is upright and /Rotate 180 shows it upside down (a
    scanner that guessed wrong). Rendered as shown, the first needs no turn, the second 180."""
    texts = [page_text(i, seed) for i in range(2)]
    images = [
        scanner(posed(render_scan(texts[0], points=POINTS), 90, 0.0), seed),
        scanner(render_scan(texts[1], points=POINTS), seed + 1),
    ]
    single = io.BytesIO()
    _save(single, images)
    writer = PdfWriter(clone_from=PdfReader(single))
    writer.pages[0].rotate(270)
    writer.pages[1].rotate(180)
    path = directory / "orientation-rotate-entry.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    return Posed(
        Fixture(
            "orientation-rotate-entry", path, tuple(wrapped(t) for t in texts), "/Rotate 270 and /Rotate 180"
        ),
        (Pose(0, 0.0), Pose(180, 0.0)),
    )


def table(directory: Path, seed: int = 20, tilt: float = 2.0) -> Posed:
    """A ruled table of figures, tilted by tilt degrees: rules and short cells, no prose."""
    rng = random.Random(seed)
    image = Image.new("L", (round(8.5 * DPI), 11 * DPI), 255)
    draw, font = ImageDraw.Draw(image), _font(10)
    left, top, width, height = 300, 450, 390, 95
    rows = []
    for r in range(18):
        cells = [f"{rng.randrange(10_000, 99_999)}" for _ in range(5)]
        rows.append(" ".join(cells))
        for c, cell in enumerate(cells):
            box = (left + c * width, top + r * height, left + (c + 1) * width, top + (r + 1) * height)
            draw.rectangle(box, outline=0, width=3)
            draw.text((box[0] + 40, box[1] + 25), cell, font=font, fill=0)
    path = directory / "orientation-table.pdf"
    _save(path, [scanner(posed(image, 0, tilt), seed)])
    return Posed(Fixture("orientation-table", path, ("\n".join(rows),), "a ruled table"), (Pose(0, tilt),))


def picture_and_text(directory: Path, seed: int = 21, tilt: float = -2.0) -> Posed:
    """Half a page of photograph (a dark gradient with grain) above two paragraphs, tilted."""
    rng = random.Random(seed)
    text = page_text(0, seed, sentences=6)
    image = render_scan(text, points=POINTS)  # the prose at the top: moved below the photograph
    page = Image.new("L", image.size, 255)
    page.paste(image.crop((0, 0, image.width, image.height // 2)), (0, image.height // 2 - DPI // 2))
    grain = Image.frombytes("L", (1800, 1200), rng.randbytes(1800 * 1200))
    photo = Image.blend(Image.linear_gradient("L").resize((1800, 1200)), grain, 0.35)
    page.paste(photo, (375, 250))
    path = directory / "orientation-picture.pdf"
    _save(path, [scanner(posed(page, 0, tilt), seed)])
    return Posed(
        Fixture("orientation-picture", path, (wrapped(text),), "a photograph over prose"), (Pose(0, tilt),)
    )


def build_all(directory: Path) -> list[Posed]:
    """Every orientation fixture, built into directory."""
    return [
        same_text(directory),
        landscape(directory),
        near_empty(directory),
        rotate_entries(directory),
        table(directory),
        picture_and_text(directory),
    ]


def _font(points: float) -> ImageFont.FreeTypeFont:
    path = next(candidate for candidate in FONT_CANDIDATES if Path(candidate).is_file())
    return ImageFont.truetype(path, size=round(points * DPI / 72))


def _save(target: Path | io.BytesIO, images: list[Image.Image]) -> None:
    """An image-only PDF of images at 300 DPI, JPEG as scanners store pages."""
    first, *rest = images
    first.save(target, "PDF", resolution=DPI, save_all=True, append_images=rest, quality=60)
