"""Decompression bombs and page-tree bombs against real `chunk-ocr` commands and a real worker.

A 3 MB PDF whose content stream inflates to 3 GiB drove an OCR process to 4.1 GB RSS, and a
600 KB page tree naming one page 100,000 times was planned into 2,000 chunks. Now a bomb is a
failed page (`resource_limit`) of a document that completes without it, while the worker's whole
process tree stays under 1 GB, a document submitted beside them completes, and the page tree is
refused at submit.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import asyncpg
import psutil
import pytest

from app.pdf.samples import make_scanned_pdf
from tests.bombs import content_bomb_pdf, image_bomb_pdf, repeated_page_pdf
from tests.e2e.conftest import run_cli, wait_for

GIB = 1 << 30
# {"MAX_PAGE_DECODED_MB": "0", "OCR_PROCESS_MEMORY_MB": "0"} here measures the tree without limits
_EXTRA: dict[str, str] = {}


def _tree_rss(process: psutil.Process) -> int:
    """The worker, its OCR processes and their tesseract, together (as bench/memory.py measures)."""
    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total


async def _settled(pool: asyncpg.Pool, ids: list[UUID]) -> bool:
    statuses = await pool.fetch("select ocr_status from documents where id = any($1::uuid[])", ids)
    return len(statuses) == len(ids) and all(r["ocr_status"] in ("completed", "failed") for r in statuses)


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_bombs_are_failed_pages_in_bounded_memory(
    cli_env: dict[str, str],
    start_worker: Callable[..., subprocess.Popen[bytes]],
    pool: asyncpg.Pool,
    tmp_path: Path,
) -> None:
    inputs = {
        "content": content_bomb_pdf(tmp_path / "content.pdf", 3 * GIB),  # 3.1 MB on disk
        "image": image_bomb_pdf(tmp_path / "image.pdf"),  # 60,000 x 60,000 gray, 3.6 GB decoded
        "scan": tmp_path / "scan.pdf",
    }
    texts = make_scanned_pdf(inputs["scan"], pages=2, seed=8)
    env = cli_env | {"OCR_PROCESSES": "2", **_EXTRA}  # the default limits: 512 MiB a page, 2 GiB a process
    ids: dict[str, UUID] = {}
    for name, path in inputs.items():
        submitted = run_cli(["submit", str(path), "--engine", "tesseract", "--chunk-pages", "1"], env)
        assert submitted.returncode == 0, submitted.stderr
        ids[name] = UUID(submitted.stdout.strip().splitlines()[-1])

    worker = start_worker(env)
    tree = psutil.Process(worker.pid)
    peak = 0

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, _tree_rss(tree))
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    try:
        await wait_for(lambda: _settled(pool, list(ids.values())), 300, "the three documents to settle")
    finally:
        sampler.cancel()
    print(f"worker tree peak RSS {peak / 2**20:.0f} MiB")  # shown with -s
    assert worker.poll() is None  # the worker lives on

    rows = {
        name: await pool.fetch(
            "select d.ocr_status, d.pages_failed, c.status, c.error_code, c.attempt_count "
            "from documents d join document_ocr_chunks c on c.document_id = d.id where d.id = $1",
            document_id,
        )
        for name, document_id in ids.items()
    }
    for name in ("content", "image"):
        (row,) = rows[name]
        assert (row["ocr_status"], row["pages_failed"], row["status"], row["error_code"]) == (
            "completed",
            1,
            "completed",
            None,
        )
        assert row["attempt_count"] == 1  # permanent: not retried
        merged = run_cli(["result", str(ids[name]), "--format", "json"], env)
        assert merged.returncode == 0, merged.stderr
        (failed,) = json.loads(merged.stdout)["failed_pages"]
        assert (failed["page_number"], failed["code"]) == (1, "resource_limit")
        assert "MAX_PAGE_DECODED_MB" in failed["message"]
    assert [(r["ocr_status"], r["pages_failed"], r["status"]) for r in rows["scan"]] == [
        ("completed", 0, "completed")
    ] * 2

    result = run_cli(["result", str(ids["scan"])], env)
    assert result.returncode == 0, result.stderr
    assert "Lorem" in result.stdout or texts[0].split()[0] in result.stdout
    assert peak < GIB, f"the worker's process tree peaked at {peak / 2**20:.0f} MiB"


def test_a_page_tree_naming_one_page_100000_times_is_refused_at_submit(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    pdf = repeated_page_pdf(tmp_path / "repeated.pdf", 100_000)
    submitted = run_cli(["submit", str(pdf)], cli_env)
    assert submitted.returncode == 2
    assert submitted.stderr.strip() == (
        "chunk-ocr: error: the PDF has 100000 pages, more than the 10000 allowed (MAX_PAGES_PER_DOCUMENT)"
    )
    assert submitted.stdout == ""

    lower = run_cli(
        ["submit", str(repeated_page_pdf(tmp_path / "ten.pdf", 10))],
        cli_env | {"MAX_PAGES_PER_DOCUMENT": "9"},
    )
    assert lower.returncode == 2
    assert lower.stderr.count("\n") == 1
    assert "more than the 9 allowed" in lower.stderr


def test_run_refuses_the_page_tree_and_completes_the_other_file(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    repeated = repeated_page_pdf(tmp_path / "repeated.pdf", 12)
    make_scanned_pdf(tmp_path / "fine.pdf", pages=1, seed=2)
    done: subprocess.CompletedProcess[str] = run_cli(
        [
            "run",
            str(repeated),
            str(tmp_path / "fine.pdf"),
            "--out",
            str(tmp_path / "out"),
            "--ocr-processes",
            "1",
        ],
        cli_env | {"MAX_PAGES_PER_DOCUMENT": "10"},
    )
    assert done.returncode == 2, done.stderr
    assert "more than the 10 allowed (MAX_PAGES_PER_DOCUMENT)" in done.stderr
    assert (tmp_path / "out" / "fine.txt").read_text().strip()
    assert not (tmp_path / "out" / "repeated.txt").exists()
