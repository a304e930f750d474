"""What planning a hostile file costs the process that plans (the API's, or the command line's):
a file whose page reaches hundreds of thousands of objects is cut in an OCR process, under its
memory limit, not in the planning process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.pdf.object_scan import MAX_OBJECTS
from app.services.planner import CUT_APART_OBJECTS
from tests.bombs import reachable_objects_pdf
from tests.e2e.conftest import REPO_ROOT
from tests.peak_rss import run_measuring_peak_rss


@pytest.mark.timeout(300)
def test_a_page_that_reaches_many_objects_is_cut_outside_the_planning_process(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """800,000 one-byte objects that one page reaches (a 42 MB file): cutting the page copies them
    all, about 400 MB in PDFium, which took the planning process there."""
    objects = 800_000
    assert CUT_APART_OBJECTS < objects < MAX_OBJECTS
    pdf = reachable_objects_pdf(tmp_path / "reaching.pdf", objects)

    measured = run_measuring_peak_rss(
        [sys.executable, "-m", "app.cli", "submit", str(pdf), "--engine", "tesseract"],
        env=cli_env,
        cwd=REPO_ROOT,
        timeout=240,
    )

    assert measured.completed.returncode == 0, measured.completed.stderr[-2000:]
    planner_mib = measured.root_mib  # `python -m app.cli submit` plans in its own process
    assert planner_mib < 300, measured.describe()
    assert measured.largest_mib > planner_mib + 200, measured.describe()  # the cut, in an OCR process
