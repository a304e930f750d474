"""may_have_text (app.pdf.object_scan): a byte search for the marks a text layer needs, in bounded memory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.pdf import object_scan
from app.pdf.object_scan import TEXT_MARKS, may_have_text

WINDOW = object_scan._WINDOW
BACKEND = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("mark", TEXT_MARKS)
@pytest.mark.parametrize("cut", range(1, 7))
def test_a_mark_cut_by_a_window_end_is_found(tmp_path: Path, mark: bytes, cut: int) -> None:
    """The mark starts `cut` bytes before the end of the first window (or later windows)."""
    for windows in (1, 3):
        path = tmp_path / f"cut-{windows}.pdf"
        before = b"%PDF-1.7\n" + b"x" * (windows * WINDOW - 9 - cut)
        path.write_bytes(before + mark + b"y" * 100)
        assert may_have_text(path), (mark, cut, windows)


def test_a_file_naming_no_font_has_no_text(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(b"%PDF-1.7\n" + b"/Font"[:-1] + b" " + b"\x00" * (3 * WINDOW))
    assert not may_have_text(path)


def test_an_empty_missing_or_unreadable_file_is_left_to_the_planner(tmp_path: Path) -> None:
    (tmp_path / "empty.pdf").write_bytes(b"")
    assert may_have_text(tmp_path / "empty.pdf")
    assert may_have_text(tmp_path / "missing.pdf")
    assert may_have_text(tmp_path)  # a directory


def test_searching_a_large_file_to_its_end_keeps_it_out_of_memory(tmp_path: Path) -> None:
    """A mapping of the whole file left every page of it resident until the end of the search
    (190 MB for a 190 MB scan). Measured in a process of its own, whose peak is this search's."""
    path = tmp_path / "large.pdf"
    with path.open("wb") as out:
        out.write(b"%PDF-1.7\n")
        for _ in range(96):
            out.write(b"\x01" * WINDOW)
    code = (
        "import resource, sys; from pathlib import Path; from app.pdf.object_scan import may_have_text; "
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
        "found = may_have_text(Path(sys.argv[1])); "
        "print(found, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        env={**os.environ, "PYTHONPATH": str(BACKEND)},
        capture_output=True,
        text=True,
        check=True,
    )
    found, grown_kib = done.stdout.split()
    assert found == "False"
    assert int(grown_kib) < 8 * 1024, f"{int(grown_kib) // 1024} MiB resident for a 96 MiB search"
