"""`--lang` on `chunk-ocr run` and `submit`: the real command, its real worker, real tesseract.

A language tesseract does not have here, or one that is not tesseract's syntax, is one line on
stderr and exit 2 before anything starts: no document row, no worker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import asyncpg
import pytest

from tests.corpus.languages import russian_scan
from tests.e2e.conftest import run_cli
from tests.pdf_factories import cer


@pytest.mark.timeout(300)
async def test_run_reads_a_russian_scan_in_russian(
    cli_env: dict[str, str], pool: asyncpg.Pool, tmp_path: Path
) -> None:
    fixture = russian_scan(tmp_path, pages=2)
    result = run_cli(
        [
            "run",
            str(fixture.path),
            "--out",
            str(tmp_path / "out"),
            "--lang",
            "rus",
            "--ocr-processes",
            "1",
            "--json",
        ],
        cli_env,
    )
    assert result.returncode == 0, result.stderr
    (doc,) = json.loads(result.stdout)["documents"]
    assert (doc["status"], doc["language"]) == ("completed", "rus")
    text = (tmp_path / "out" / f"{fixture.path.stem}.txt").read_text()
    error = cer("\f".join(fixture.expected), text)
    assert error < 0.02, f"character error rate {error:.2%}"
    merged = json.loads((tmp_path / "out" / f"{fixture.path.stem}.json").read_text())
    assert merged["language"] == "rus"
    rows = await pool.fetch(
        "select language from document_ocr_chunks where document_id = $1", doc["document_id"]
    )
    assert rows
    assert {r["language"] for r in rows} == {"rus"}


# What this machine has installed is listed between the parentheses (at least what the tests read).
NOT_INSTALLED = re.compile(
    r"chunk-ocr: error: language 'xyz' is not installed for tesseract \(installed: (?P<installed>[a-z_, ]+)\); "
    r'apt-get install tesseract-ocr-xyz or make install TESSERACT_LANGS="eng xyz"'
)


@pytest.mark.parametrize("command", ["run", "submit"])
@pytest.mark.parametrize(
    ("language", "line"),
    [
        ("xyz", NOT_INSTALLED),
        ("eng deu", re.compile(r"chunk-ocr: error: language: 'eng deu' is not tesseract's syntax; .+")),
        ("osd", re.compile(r"chunk-ocr: error: language: 'osd' is tesseract's orientation and script .+")),
    ],
)
async def test_a_language_that_cannot_be_read_is_one_line_before_anything_starts(
    cli_env: dict[str, str],
    pool: asyncpg.Pool,
    tmp_path: Path,
    command: str,
    language: str,
    line: re.Pattern[str],
) -> None:
    fixture = russian_scan(tmp_path)
    result = run_cli([command, str(fixture.path), "--lang", language], cli_env, timeout=60)
    assert result.returncode == 2, result.stderr
    (said,) = result.stderr.strip().splitlines()
    matched = line.fullmatch(said)
    assert matched, said
    if "installed" in line.groupindex:
        assert {"deu", "eng", "rus"} <= set(matched["installed"].split(", "))
        assert "osd" not in said
    assert result.stdout == ""
    assert await pool.fetchval("select count(*) from documents") == 0


async def test_submit_records_the_language(
    cli_env: dict[str, str], pool: asyncpg.Pool, tmp_path: Path
) -> None:
    fixture = russian_scan(tmp_path)
    result = run_cli(["submit", str(fixture.path), "--lang", "rus+eng", "--engine", "tesseract"], cli_env)
    assert result.returncode == 0, result.stderr
    document_id = result.stdout.strip()
    assert await pool.fetchval("select language from documents where id = $1", document_id) == "rus+eng"
    languages = await pool.fetch(
        "select language from document_ocr_chunks where document_id = $1", document_id
    )
    assert languages
    assert {r["language"] for r in languages} == {"rus+eng"}


async def test_ocr_language_is_the_default(
    cli_env: dict[str, str], pool: asyncpg.Pool, tmp_path: Path
) -> None:
    fixture = russian_scan(tmp_path)
    result = run_cli(["submit", str(fixture.path)], cli_env | {"OCR_LANGUAGE": "rus"})
    assert result.returncode == 0, result.stderr
    assert await pool.fetchval("select language from documents where id = $1", result.stdout.strip()) == "rus"
