"""`chunk-ocr run`'s exit code: the worst outcome among the files it was given."""

from __future__ import annotations

import pytest

from app.local.exit_codes import ExitCode
from app.local.run import RunReport


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
