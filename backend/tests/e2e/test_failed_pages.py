"""Pages fail alone, end to end: one `chunk-ocr run` over a document whose pages include one too
large to OCR at any useful resolution and a decompression bomb. The other pages are read, the
text keeps every page in its place, the JSON says which pages are missing and why, the terminal
gets one warning line (no log lines), and the exit code says "finished, pages missing"."""

from __future__ import annotations

import json
from pathlib import Path

from app.local.exit_codes import ExitCode
from tests.corpus.unreadable_pages import huge_and_bomb_among_small
from tests.e2e.conftest import run_cli
from tests.pdf_factories import cer


def test_run_reads_every_page_it_can_and_names_the_others(cli_env: dict[str, str], tmp_path: Path) -> None:
    case = huge_and_bomb_among_small(tmp_path)
    pdf, (scan, _, _, text) = case.fixture.path, case.fixture.expected
    env = {name: value for name, value in cli_env.items() if name != "LOG_LEVEL"}  # as a person runs it
    done = run_cli(["run", str(pdf), "--out", str(tmp_path / "out"), "--ocr-processes", "2", "--json"], env)

    assert done.returncode == ExitCode.PAGES_MISSING, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert not [line for line in lines if line.lstrip().startswith("{")], lines  # no log lines
    (warning,) = [line for line in lines if "warning" in line]
    assert warning.startswith(f"chunk-ocr: {pdf}: warning: 2 of 4 pages could not be read and have no text")
    assert "page 2: page_too_large; page 3: resource_limit" in warning
    (log_line,) = [line for line in lines if "the worker's log" in line]
    log_path = Path(log_line.rsplit(": ", 1)[1])
    assert log_path.is_relative_to(tmp_path / "data" / "logs")
    assert '"event": "page_failed"' in log_path.read_text()

    pages = (tmp_path / "out" / "mixed.txt").read_text().split("\f")
    assert len(pages) == 4  # every page keeps its place
    assert cer(scan, pages[0]) < 0.02
    assert pages[1:3] == ["", ""]
    assert pages[3].split() == text.split()

    merged = json.loads((tmp_path / "out" / "mixed.json").read_text())
    assert {f["page_number"]: f["code"] for f in merged["failed_pages"]} == case.failed
    assert "too large to OCR even at 50 DPI" in merged["failed_pages"][0]["message"]
    assert "MAX_PAGE_DECODED_MB" in merged["failed_pages"][1]["message"]
    assert [p["error"] is None for p in merged["pages"]] == [True, False, False, True]

    (summary,) = json.loads(done.stdout)["documents"]
    assert summary["status"] == "completed_with_errors"
    assert [f["page_number"] for f in summary["failed_pages"]] == [2, 3]

    status = run_cli(["status", summary["document_id"], "--json"], env)
    assert status.returncode == 0, status.stderr
    progress = json.loads(status.stdout)["progress"]
    assert (progress["status"], progress["pagesFailed"], progress["percent"]) == (
        "completed_with_errors",
        2,
        100.0,
    )

    human = run_cli(["status", summary["document_id"]], env)
    assert "completed_with_errors, 4/4 pages" in human.stdout
    assert "2 of 4 pages could not be read" in human.stdout

    text = run_cli(["result", summary["document_id"]], env)
    assert text.returncode == 0, text.stderr
    assert text.stdout.split("\f")[1:3] == ["", ""]
    assert text.stderr.strip() == (
        "chunk-ocr: warning: 2 of 4 pages could not be read and have no text (pages 2, 3; the JSON says why)"
    )
