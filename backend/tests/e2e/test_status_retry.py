"""`chunk-ocr status` and `chunk-ocr retry` on a document a person has to look at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import run_cli
from tests.factories import pdf_with_a_refused_page


@pytest.mark.timeout(300)
async def test_failed_document_status_and_retry(cli_env: dict[str, str], tmp_path: Path) -> None:
    pdf_with_a_refused_page(tmp_path / "doc.pdf", "dw")

    run = run_cli(
        [
            "run",
            str(tmp_path / "doc.pdf"),
            "--out",
            str(tmp_path / "out"),
            "--engine",
            "tesseract",
            "--chunk-pages",
            "1",
            "--ocr-processes",
            "1",
            "--json",
        ],
        cli_env,
    )
    assert run.returncode == 1  # the document failed; the command says so
    (doc,) = json.loads(run.stdout)["documents"]
    assert doc["status"] == "failed"
    assert "OCR failed" in run.stderr

    status = run_cli(["status", doc["document_id"], "--json"], cli_env)
    assert status.returncode == 0, status.stderr
    body = json.loads(status.stdout)
    assert body["document"]["ocrStatus"] == "failed"
    assert body["progress"]["completed"] == 1
    assert [(c["chunkIndex"], c["errorCode"]) for c in body["failedChunks"]] == [(1, "tesseract_failed")]

    human = run_cli(["status", doc["document_id"]], cli_env)
    assert "failed, 1/2 pages" in human.stdout
    assert "chunk 1 (pages 2-2): tesseract_failed" in human.stdout

    retry = run_cli(["retry", doc["document_id"]], cli_env)
    assert retry.returncode == 0, retry.stderr
    assert retry.stdout.startswith("1 chunk(s)")
    after = json.loads(run_cli(["status", doc["document_id"], "--json"], cli_env).stdout)
    assert after["document"]["ocrStatus"] == "processing"
    assert after["progress"]["pending"] == 1

    unknown = run_cli(["status", "not-a-uuid"], cli_env)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == "chunk-ocr: error: document_id is not a valid UUID: 'not-a-uuid'"
