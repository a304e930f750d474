"""`chunk-ocr run`'s exit code (the worst outcome among the files it was given) and its line when
Ctrl-C stops it."""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

import pytest

from app.local.exit_codes import ExitCode
from app.local.run import RunReport, _left_unfinished


@pytest.mark.parametrize(
    ("statuses", "refused", "expected"),
    [
        (["completed", "completed"], False, ExitCode.OK),
        (["completed", "completed_with_errors"], False, ExitCode.PAGES_MISSING),
        (["completed_with_errors", "failed"], False, ExitCode.FAILED),
        (["completed"], True, ExitCode.BAD_INPUT),
        (["failed", "completed_with_errors"], True, ExitCode.BAD_INPUT),
        ([], True, ExitCode.BAD_INPUT),
    ],
)
def test_the_worst_outcome_decides(statuses: list[str], refused: bool, expected: ExitCode) -> None:
    report = RunReport(
        documents=[{"status": status} for status in statuses],
        errors=["bad.pdf: not a PDF"] if refused else [],
    )
    assert report.exit_code is expected


def test_the_codes_scripts_branch_on_do_not_move() -> None:
    assert [(code.name, int(code)) for code in ExitCode] == [
        ("OK", 0),
        ("FAILED", 1),
        ("BAD_INPUT", 2),
        ("PAGES_MISSING", 3),
        ("INTERRUPTED", 130),
    ]


def test_ctrl_c_while_a_file_is_planned_names_it_beside_the_queued_documents() -> None:
    """Ctrl-C could land while `run` planned a file (its rows may be committed and queued): the
    line said nothing of it, or nothing at all when it was the first file."""
    queued = uuid4()
    line = _left_unfinished([(Path("/in/a.pdf"), queued)], planning=Path("/in/b.pdf"))
    assert line.startswith(f"chunk-ocr: interrupted: a.pdf ({queued}) left queued; b.pdf was being planned; ")
    assert line.endswith("`chunk-ocr run` the files again goes on with them")
    first = _left_unfinished([], planning=Path("/in/b.pdf"))
    assert first == (
        "chunk-ocr: interrupted: b.pdf was being planned; `chunk-ocr run` it again goes on with it if it was queued"
    )
    assert "was being planned" not in _left_unfinished([(Path("/in/a.pdf"), queued)])
