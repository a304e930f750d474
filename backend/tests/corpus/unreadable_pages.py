"""Documents with pages that cannot be read among pages that can: a page too large to OCR at any
useful resolution, a decompression bomb, a page larger than the pixel cap that is still readable
at a lower resolution. Expected text "" marks a page that must come out failed, and
`failed` names the code it must fail with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pypdf import PdfReader, PdfWriter

from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from tests.bombs import content_bomb_pdf
from tests.corpus import Fixture
from tests.pdf_factories import make_huge_page_pdf, make_oversized_page_pdf


@dataclass(frozen=True, slots=True)
class Unreadable:
    fixture: Fixture
    failed: dict[int, str]  # page number -> the error code it must fail with


def _join(target: Path, parts: list[Path]) -> Path:
    writer = PdfWriter()
    for part in parts:
        writer.append(PdfReader(part))
    with target.open("wb") as handle:
        writer.write(handle)
    return target


def huge_and_bomb_among_small(directory: Path) -> Unreadable:
    """A scan, a 2,778 x 1,389 inch page, a page whose content inflates to 1 GiB, a text page."""
    scan = make_scanned_pdf(directory / "scan.pdf", pages=1, seed=31)
    text = make_born_digital_pdf(directory / "text.pdf", pages=1, seed=32)
    make_huge_page_pdf(directory / "huge.pdf")
    content_bomb_pdf(directory / "bomb.pdf", 1 << 30)
    path = _join(directory / "mixed.pdf", [directory / f"{p}.pdf" for p in ("scan", "huge", "bomb", "text")])
    return Unreadable(
        Fixture(
            "huge-and-bomb-among-small", path, (scan[0], "", "", text[0]), "pages 2 and 3 cannot be read"
        ),
        {2: "page_too_large", 3: "resource_limit"},
    )


def poster_among_small(directory: Path) -> Unreadable:
    """A scan and a 200 x 200 inch poster (3,600 megapixels at 300 DPI): every page is read, the
    poster at the resolution that fits the pixel cap."""
    scan = make_scanned_pdf(directory / "scan.pdf", pages=1, seed=33)
    make_oversized_page_pdf(directory / "poster.pdf")
    path = _join(directory / "poster-mix.pdf", [directory / "scan.pdf", directory / "poster.pdf"])
    return Unreadable(
        Fixture(
            "poster-among-small",
            path,
            (scan[0], "A poster nobody can render at 300 DPI"),
            "page 2 is over the pixel cap at 300 DPI",
        ),
        {},
    )
