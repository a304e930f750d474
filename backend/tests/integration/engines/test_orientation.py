"""Pages turned and tilted every way, read by the tesseract engine for real: each comes out as
the upright page does, with the turn and the tilt recorded; upright pages are left as they are."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from app.engines._orientation import MIN_SKEW
from app.engines._pages import open_pdf, page_image
from app.engines._tesseract_exec import words_to_text
from app.engines.base import PageResult
from app.engines.tesseract import TesseractEngine
from tests.corpus import orientation
from tests.corpus.orientation import SAME_TEXT_PAGES, Posed
from tests.pdf_factories import cer
from tests.tesseract_command import command_words

BACKEND = Path(__file__).resolve().parents[3]
SKEW_TOLERANCE = 0.3  # degrees


@pytest.fixture(scope="module")
def posed(tmp_path_factory: pytest.TempPathFactory) -> Posed:
    """The seven poses of one page, drawn once for the module (about 2 CPU-s to draw)."""
    return orientation.same_text(tmp_path_factory.mktemp("orientation"))


@pytest.fixture(scope="module")
def same_text(posed: Posed) -> tuple[Posed, list[PageResult]]:
    return posed, TesseractEngine().recognize(posed.fixture.path.read_bytes(), 1)


def _expected_skew(tilt: float) -> float:
    return tilt if abs(tilt) >= MIN_SKEW else 0.0


def _check_poses(posed: Posed, pages: list[PageResult]) -> None:
    for page, pose in zip(pages, posed.poses, strict=True):
        assert page.error is None
        assert (page.page_number, page.rotation) == (page.page_number, pose.rotation)
        assert page.skew == pytest.approx(_expected_skew(pose.skew), abs=SKEW_TOLERANCE), page.page_number


def test_every_way_up_and_tilted_reads_within_a_point_of_upright(
    same_text: tuple[Posed, list[PageResult]],
) -> None:
    posed, pages = same_text
    assert [page.page_number for page in pages] == list(range(1, len(SAME_TEXT_PAGES) + 1))
    _check_poses(posed, pages)
    errors = [cer(expected, page.text) for expected, page in zip(posed.fixture.expected, pages, strict=True)]
    upright = errors[0]
    assert upright < 0.01
    for (label, _, _), error in zip(SAME_TEXT_PAGES, errors, strict=True):
        assert error <= upright + 0.01, f"{label}: {error:.2%} of characters wrong, upright {upright:.2%}"
    for page in pages:
        assert page.confidence > 0.9


def test_tilted_pages_keep_their_line_order(same_text: tuple[Posed, list[PageResult]]) -> None:
    posed, pages = same_text
    for (label, _, tilt), expected, page in zip(SAME_TEXT_PAGES, posed.fixture.expected, pages, strict=True):
        if not tilt:
            continue
        want = [line for line in expected.splitlines() if line]
        got = [line for line in page.text.splitlines() if line]
        assert len(got) == len(want), label
        # Each line of the page is the line it should be, not words gathered across lines.
        assert all(cer(a, b) < 0.05 for a, b in zip(want, got, strict=True)), label


def test_word_boxes_are_in_pixels_of_the_upright_page(same_text: tuple[Posed, list[PageResult]]) -> None:
    _, pages = same_text
    for page in pages:
        # Every page was scanned letter size; read upright, its boxes are inside 8.5 x 11 inches.
        assert all(
            0 <= w.bbox[0] < w.bbox[2] <= 2550 and 0 <= w.bbox[1] < w.bbox[3] <= 3300 for w in page.words
        )
        first, last = page.words[0], page.words[-1]
        assert first.bbox[0] < 500  # the first word at the top left
        assert first.bbox[1] < 500
        assert last.bbox[1] > first.bbox[1] + 500  # and the last far below it
        # A word is wider than it is tall: the lines run across the page.
        long_words = [w for w in page.words if len(w.text) >= 5]
        assert all(w.bbox[2] - w.bbox[0] > w.bbox[3] - w.bbox[1] for w in long_words)


def test_upright_pages_read_exactly_as_tesseract_reads_the_page(tmp_path: Path) -> None:
    """A landscape page, a nearly empty one and a page within half a degree of level are not
    turned or straightened: the text is what tesseract reads from the page as it is shown (its
    render, or a bare scan's own image)."""
    for posed in (
        orientation.landscape(tmp_path),
        orientation.near_empty(tmp_path),
        orientation.table(tmp_path, tilt=0.0),
        orientation.picture_and_text(tmp_path, tilt=0.4),
    ):
        data = posed.fixture.path.read_bytes()
        (page,) = TesseractEngine().recognize(data, 1)
        assert (page.rotation, page.skew) == (0, 0.0), posed.fixture.name
        image = tmp_path / "page.tif"
        with open_pdf(data) as document:
            shown = document[0]
            page_image(document, shown, 0, 1, 300).save(image, dpi=(300, 300))
            shown.close()
        assert page.text == words_to_text(command_words(image)), posed.fixture.name
        assert cer(posed.fixture.expected[0], page.text) < 0.05, posed.fixture.name


def test_a_rotate_entry_is_honoured_and_a_wrong_one_corrected(tmp_path: Path) -> None:
    posed = orientation.rotate_entries(tmp_path)
    pages = TesseractEngine().recognize(posed.fixture.path.read_bytes(), 1)
    _check_poses(posed, pages)
    for expected, page in zip(posed.fixture.expected, pages, strict=True):
        assert cer(expected, page.text) < 0.01


def test_a_table_and_a_page_with_a_picture_are_straightened(tmp_path: Path) -> None:
    for posed, worst in ((orientation.table(tmp_path), 0.05), (orientation.picture_and_text(tmp_path), 0.01)):
        pages = TesseractEngine().recognize(posed.fixture.path.read_bytes(), 1)
        _check_poses(posed, pages)
        assert cer(posed.fixture.expected[0], pages[0].text) < worst, posed.fixture.name


def test_a_page_tilted_clockwise_is_not_lost(posed: Posed, tmp_path: Path) -> None:
    """tesseract 5 answers "Empty page!!" for a page tilted 2.5 degrees or more clockwise."""
    writer = PdfWriter()
    writer.add_page(PdfReader(posed.fixture.path).pages[5])  # tilted -3
    writer.write(tmp_path / "clockwise.pdf")
    (page,) = TesseractEngine().recognize((tmp_path / "clockwise.pdf").read_bytes(), 1)
    assert page.skew == pytest.approx(-3.0, abs=SKEW_TOLERANCE)
    assert cer(posed.fixture.expected[5], page.text) < 0.01


# What the engine does in a process of its own, with the tesseract its PATH finds.
_RUN = """
import json, sys
from app.core.logging import configure_logging
configure_logging("INFO", json=True)
from app.engines.tesseract import TesseractEngine
pages = TesseractEngine().recognize(open(sys.argv[1], "rb").read(), 1)
print(json.dumps([[p.rotation, p.skew, p.text, p.error is None] for p in pages]))
"""


def _run_engine(pdf: Path, env: dict[str, str]) -> tuple[list[list[object]], list[dict[str, object]]]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(pdf)],
        env={**os.environ, "PYTHONPATH": str(BACKEND), **env},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    return json.loads(done.stdout), events


def _pages_of(posed: Posed, indices: tuple[int, ...], path: Path) -> tuple[Path, list[str]]:
    """A PDF of some pages of a fixture, and what they should read as."""
    writer = PdfWriter()
    for index in indices:
        writer.add_page(PdfReader(posed.fixture.path).pages[index])
    writer.write(path)
    return path, [posed.fixture.expected[index] for index in indices]


def _tesseract_with_osd(tmp_path: Path, osd: str) -> dict[str, str]:
    """The environment for a tesseract whose orientation detection (--psm 0) runs the shell
    commands osd instead; everything else is the real tesseract."""
    real = shutil.which("tesseract")
    assert real, "tesseract must be installed"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "tesseract"
    fake.write_text(f'#!/bin/sh\ncase " $* " in *" --psm 0 "*)\n{osd}\nesac\nexec "{real}" "$@"\n')
    fake.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_a_failing_orientation_detection_leaves_that_page_as_it_came(posed: Posed, tmp_path: Path) -> None:
    """The first orientation detection fails (exits 3): that page is read as it came (tesseract
    reads a page lying a quarter turned clockwise), with a warning naming it; the next page on
    its side is turned and read."""
    once = tmp_path / "failed-once"
    env = _tesseract_with_osd(
        tmp_path, f'if [ ! -e "{once}" ]; then touch "{once}"; echo "osd crashed" >&2; exit 3; fi;;'
    )
    pdf, expected = _pages_of(posed, (1, 3), tmp_path / "sideways.pdf")
    pages, events = _run_engine(pdf, env)
    assert [(rotation, ok) for rotation, _, _, ok in pages] == [(0, True), (90, True)]
    assert all(cer(want, str(page[2])) < 0.02 for want, page in zip(expected, pages, strict=True))
    failures = [e for e in events if e["event"] == "orientation_failed"]
    assert [(e["page"], e["error_code"]) for e in failures] == [(1, "tesseract_failed")]
    assert "osd crashed" in str(failures[0]["error"])


def test_a_wrong_orientation_guess_is_not_kept(posed: Posed, tmp_path: Path) -> None:
    """OSD answers the wrong quarter turn, confidently, for pages on their side: the reading at
    that turn is upside down, so the page is read the other ways and the best reading wins."""
    env = _tesseract_with_osd(
        tmp_path, 'printf "Page number: 0\\nRotate: 90\\nOrientation confidence: 30.0\\n"; exit 0;;'
    )
    pdf, expected = _pages_of(posed, (1,), tmp_path / "sideways.pdf")
    ((rotation, _, text, ok),), _ = _run_engine(pdf, env)  # lies turned 90: 270 makes it upright
    assert ok
    assert rotation in (0, 270)  # tesseract reads it as it came too; never the wrong guess
    assert cer(expected[0], str(text)) < 0.02


def test_without_orientation_data_pages_are_still_turned_by_reading_them(
    posed: Posed, tmp_path: Path
) -> None:
    """No osd language data: a page upside down and one on its side are read each way their
    lines allow, and the better reading wins; a tilted page is straightened as before."""
    tessdata = tmp_path / "tessdata"
    tessdata.mkdir()
    installed = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, check=True)
    prefix = Path(installed.stdout.splitlines()[0].split('"')[1])  # List of available languages in "..."
    for entry in prefix.iterdir():  # everything but osd (eng, and the tsv output config)
        if entry.name != "osd.traineddata":
            (tessdata / entry.name).symlink_to(entry)
    pdf, expected = _pages_of(posed, (2, 3, 5), tmp_path / "three.pdf")
    pages, events = _run_engine(pdf, {"TESSDATA_PREFIX": str(tessdata)})
    assert [(rotation, ok) for rotation, _, _, ok in pages] == [(180, True), (90, True), (0, True)]
    assert pages[2][1] == pytest.approx(-3.0, abs=SKEW_TOLERANCE)
    assert all(cer(want, str(page[2])) < 0.01 for want, page in zip(expected, pages, strict=True))
    assert [e["event"] for e in events if e["level"] == "warning"] == ["orientation_unavailable"]
