"""What `chunk-ocr run` imports before its first page: not the libraries only a damaged file, a scan's
objects or a searchable PDF need. pypdf and pikepdf cost about 0.06 and 0.03 s of CPU to import,
and the start of a command is CPU-bound on two cores (the README's benchmark section); one
module-level import on the way (app.pdf.damage's, of pypdf, for a repair) brought both back."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Libraries the planning process must not import until a file needs them (rich's progress
# bar: until the command runs on a terminal).
ON_DEMAND = ("pypdf", "pikepdf")
TERMINAL_ONLY = "rich.progress"


def _imported_by(module: str) -> set[str]:
    script = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


def test_the_run_command_starts_without_the_libraries_of_damaged_files_scans_and_searchable_pdfs() -> None:
    imported = _imported_by("app.local.run")
    assert "app.services.planner" in imported  # what it does import: the planner, the merge
    assert "app.services.merge" in imported
    assert [name for name in ON_DEMAND if name in imported] == []
    assert TERMINAL_ONLY not in imported


def test_the_api_starts_without_them_too() -> None:
    imported = _imported_by("app.main")
    assert "app.services.planner" in imported
    assert [name for name in ON_DEMAND if name in imported] == []


def test_the_progress_bar_shows_pages_and_chunks_when_asked_and_nothing_otherwise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from app.local.run import _progress_bar

    with _progress_bar(False, 10, 2) as show:
        show(4, 1)
    assert capsys.readouterr().out == ""
    with _progress_bar(True, 10, 2) as show:
        show(4, 1)
        show(10, 2)
    shown = capsys.readouterr().out
    assert "10/10" in shown
    assert "2/2 chunks" in shown
