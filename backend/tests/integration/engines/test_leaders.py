"""Pages with dotted leaders read right once the leaders are painted out and put back in the
text (app.engines._leaders, _leader_lines): tables of contents, a price list and a form; and
the pages the benchmark reads are left as they came.

Read as they came (the leaders left on the page), tesseract read every one of these pages with
50-84 % of its characters wrong: it took the dots for small letters, read them as runs of "e"
and the titles' letters as capitals, and lost the page numbers."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from app.engines._leaders import without_leaders
from app.engines._pages import open_pdf
from app.engines.tesseract import TesseractEngine, _render, _Rendered
from app.pdf.samples import DPI
from tests.corpus.leaders import (
    contents_image,
    form_image,
    price_list_image,
    reportlab_contents_pdf,
    statement_image,
)
from tests.integration.engines.scans import read_scan
from tests.pdf_factories import cer

_ENTRY = re.compile(r"^\d+ .+ \.(?: ?\.)* \S.*$")  # number, title, leader, and what follows it


def _entries(text: str) -> int:
    return sum(1 for line in text.splitlines() if _ENTRY.match(line))


@pytest.mark.parametrize(
    ("face", "style", "points"),
    [("serif", "close", 11.0), ("sans", "spaced", 9.0), ("serif", "wide", 13.0), ("sans", "close", 12.0)],
)
def test_a_table_of_contents_is_read_a_line_to_an_entry(
    tmp_path: Path, face: str, style: str, points: float
) -> None:
    """Each title, its leader and its page number on one line, in the order of the page. With the
    leaders painted out but not put back, the numbers came as a column of their own after the
    titles, or (at 11 and 12 points) not at all: tesseract dropped the column, and it is read
    again on its own. Before: 60-77 % wrong."""
    page, text = contents_image(1, points=points, face=face, style=style)
    read = read_scan(page, tmp_path / "contents.pdf")
    assert cer(text, read.text) < 0.01
    assert _entries(read.text) == 24


@pytest.mark.parametrize(("face", "points"), [("serif", 9.0), ("sans", 12.0)])
def test_a_table_of_contents_with_leaders_of_dashes_is_read_a_line_to_an_entry(
    tmp_path: Path, face: str, points: float
) -> None:
    """Hyphens a quarter em apart: tesseract read them as runs of "-", "e" and "+", 35-76 % wrong
    (76 % at 9 points, where no entry kept its number on its line)."""
    page, text = contents_image(1, points=points, face=face, style="dashed")
    read = read_scan(page, tmp_path / "contents.pdf")
    assert cer(text, read.text) < 0.01
    assert sum(1 for line in read.text.splitlines() if re.fullmatch(r"\d+ .+ (- )+-? ?\d+", line)) == 24


def test_a_degraded_scan_of_a_table_of_contents_is_read_right(
    tmp_path: Path, bench_samples: ModuleType
) -> None:
    """10 points through the benchmark's economy scan (blur, grey paper, noise, specks; a speck
    breaks a leader in two): before, 84 % wrong."""
    page, text = contents_image(2, points=10.0)
    read = read_scan(bench_samples.degrade_scan(page, 4), tmp_path / "economy.pdf")
    assert cer(text, read.text) < 0.02
    assert _entries(read.text) >= 22


def test_a_fax_of_a_table_of_contents_is_read_right(tmp_path: Path) -> None:
    """200 DPI, black and white: before, 76 % wrong."""
    page, text = contents_image(3, points=10.0, dpi=200)
    read = read_scan(page.point(lambda v: 255 if v > 128 else 0), tmp_path / "fax.pdf", dpi=200)
    assert cer(text, read.text) < 0.01


@pytest.mark.parametrize("degrees", [0.7, -3.0, 180.0])
def test_a_tilted_or_upside_down_table_of_contents_is_read_right(tmp_path: Path, degrees: float) -> None:
    """0.7 degrees is less than the engine straightens: across the page a leader drifts by half
    a line, and the numbers are found level with it along its tilt (before: 70 % wrong). A page
    tilted 3 degrees is straightened first; one upside down is read turned, its leaders turned
    with it."""
    page, text = contents_image(4, points=11.0, style="spaced")
    turned = page.rotate(degrees, resample=Image.Resampling.BICUBIC, fillcolor=255)
    read = read_scan(turned, tmp_path / "tilted.pdf")
    assert cer(text, read.text) < 0.01
    assert read.rotation == (180 if degrees == 180.0 else 0)


def test_a_price_list_and_a_form_are_read_right(tmp_path: Path) -> None:
    """A price list's prices follow their leaders; a form's dotted lines have nothing after them,
    and one line has two (Signed ... Date ...). Before: 80 % and 61 % wrong."""
    for page, text in (price_list_image(), form_image()):
        assert cer(text, read_scan(page, tmp_path / "page.pdf").text) < 0.005


def test_a_statements_two_columns_of_figures_follow_each_items_leader(tmp_path: Path) -> None:
    """tesseract read the second column (1.4 inches on) as a column of its own after the rest:
    the rest of a leader's row goes with its number. Before: 88 % wrong."""
    page, text = statement_image()
    assert cer(text, read_scan(page, tmp_path / "statement.pdf").text) < 0.01


def test_a_table_of_contents_drawn_in_times_and_rendered_by_pdfium_is_read_right(tmp_path: Path) -> None:
    text = reportlab_contents_pdf(tmp_path / "contents.pdf")
    (read,) = TesseractEngine().recognize((tmp_path / "contents.pdf").read_bytes(), 1)
    assert cer(text, read.text) < 0.01


def test_a_leader_is_a_word_of_its_own_where_its_dots_were(tmp_path: Path) -> None:
    """So a searchable PDF lays the dots over the dots, and the number over the number."""
    page, text = contents_image(5, points=11.0)
    (path := tmp_path / "contents.pdf").parent.mkdir(exist_ok=True)
    page.save(path, "PDF", resolution=DPI)
    with open_pdf(path.read_bytes()) as document:
        rendered = _render(document, 0, 1)
    assert isinstance(rendered, _Rendered)
    assert len(rendered.leaders) == 24
    read = read_scan(page, path)
    first = min(rendered.leaders, key=lambda leader: leader.top)
    box = (first.left, first.top, first.right, first.bottom)
    (at,) = [i for i, word in enumerate(read.words) if word.bbox == box]
    assert read.words[at].text == first.text == "." * first.dots
    assert read.words[at + 1].text == text.splitlines()[0].split()[-1]  # its number


def test_the_benchmarks_pages_and_the_sample_scan_have_no_leaders(
    plain_pages: dict[str, Image.Image],
) -> None:
    for name, page in plain_pages.items():
        assert without_leaders(page, DPI) == (page, ()), name
