"""The projection-profile measure of a page's lines, on pages drawn here (no tesseract)."""

from __future__ import annotations

import pytest
from PIL import Image

from app.engines._orientation import LEVEL, Lines, measure, straighten, turn
from app.pdf.samples import page_text, render_scan
from tests.corpus.orientation import posed, scanner


@pytest.fixture(scope="module")
def prose() -> Image.Image:
    return render_scan(page_text(0, 3), points=8)


@pytest.mark.parametrize("tilt", [0.0, 1.2, -3.0, 7.5, -9.5])
@pytest.mark.parametrize("lies_turned", [0, 90, 180, 270])
def test_the_tilt_and_direction_of_the_lines_are_measured(
    prose: Image.Image, tilt: float, lies_turned: int
) -> None:
    lines = measure(scanner(posed(prose, lies_turned, tilt), seed=1), 300)
    assert lines.sideways == (lies_turned in (90, 270))
    assert lines.skew == pytest.approx(tilt, abs=0.2)


def test_a_tilt_within_half_a_degree_reads_as_level(prose: Image.Image) -> None:
    assert measure(posed(prose, 0, 0.3), 300) == LEVEL
    assert measure(posed(prose, 0, -0.4), 300) == LEVEL


def test_an_empty_or_tiny_page_is_level() -> None:
    assert measure(Image.new("L", (2550, 3300), 255), 300) == LEVEL
    assert measure(Image.new("L", (2550, 3300), 0), 300) == LEVEL  # one grey level: nothing to split
    assert measure(Image.new("L", (40, 30), 128), 300) == LEVEL


def test_a_page_measured_at_a_low_resolution_still_finds_its_tilt(prose: Image.Image) -> None:
    page = posed(prose, 0, 2.0)
    small = page.resize((page.width * 100 // 300, page.height * 100 // 300), Image.Resampling.BOX)
    assert measure(small, 100).skew == pytest.approx(2.0, abs=0.25)


def test_straighten_undoes_a_tilt_and_keeps_the_size(prose: Image.Image) -> None:
    tilted = posed(prose, 0, 3.0)
    straight = straighten(tilted, 3.0)
    assert straight.size == tilted.size
    assert measure(straight, 300) == Lines(0.0, False)
    assert straight.getpixel((0, 0)) == 255  # corners filled white, not black


@pytest.mark.parametrize("lies_turned", [90, 180, 270])
def test_turn_makes_a_page_lying_turned_upright(prose: Image.Image, lies_turned: int) -> None:
    lying = posed(prose, lies_turned, 0.0)
    assert turn(lying, (360 - lies_turned) % 360).tobytes() == prose.tobytes()
