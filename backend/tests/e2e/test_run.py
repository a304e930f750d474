"""`chunk-ocr run` end to end: real worker processes, real tesseract, real PDFs."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path
from uuid import uuid4

import asyncpg
import pytest

from app.local.exit_codes import ExitCode
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from app.storage.checksums import sha256_hex
from tests.e2e.conftest import REPO_ROOT, run_cli
from tests.pdf_factories import (
    cer,
    make_broken_xref_pdf,
    make_encrypted_pdf,
    make_truncated_pdf,
    make_zero_page_pdf,
)
from tests.peak_rss import run_measuring_peak_rss


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_scanned_pdf_through_worker_processes(
    cli_env: dict[str, str], pool: asyncpg.Pool, tmp_path: Path
) -> None:
    texts = make_scanned_pdf(tmp_path / "scan.pdf", pages=6, seed=21)
    result = run_cli(
        [
            "run",
            str(tmp_path / "scan.pdf"),
            "--out",
            str(tmp_path / "out"),
            "--engine",
            "tesseract",
            "--chunk-pages",
            "2",
            "--ocr-processes",
            "2",
            "--json",
        ],
        cli_env,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    (doc,) = summary["documents"]
    assert (doc["status"], doc["pages"], doc["chunks"]) == ("completed", 6, 3)
    assert 0.8 < doc["mean_confidence"] <= 1.0
    assert doc["pages_per_second"] > 0

    pages = (tmp_path / "out" / "scan.txt").read_text().split("\f")
    assert len(pages) == 6
    error = cer("\n".join(texts), "\n".join(pages))
    assert error < 0.02, f"character error rate {error:.3%}"
    for text, page in zip(texts, pages, strict=True):  # in page order
        assert cer(text, page) < 0.05
    merged = json.loads((tmp_path / "out" / "scan.json").read_text())
    assert [p["page_number"] for p in merged["pages"]] == [1, 2, 3, 4, 5, 6]

    rows = await pool.fetch(
        "select status, result_storage_path, result_checksum, attempt_count from document_ocr_chunks"
        " where document_id = $1 order by chunk_index",
        doc["document_id"],
    )
    assert len(rows) == 3
    bucket = tmp_path / "storage" / "ocr-chunks"
    for row in rows:
        assert (row["status"], row["attempt_count"]) == ("completed", 1)
        assert sha256_hex((bucket / row["result_storage_path"]).read_bytes()) == row["result_checksum"]


@pytest.mark.timeout(300)
async def test_bad_files_are_refused_one_line_each_and_good_files_complete(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    bad = {
        "empty.pdf": "the file is empty",
        "notes.pdf": "not a PDF",
        "locked.pdf": "encrypted",
        "nothing.pdf": "no pages",
        "cut-early.pdf": "damaged beyond repair",
    }
    (tmp_path / "empty.pdf").write_bytes(b"")
    (tmp_path / "notes.pdf").write_text("these are my notes, not a PDF\n")
    make_encrypted_pdf(tmp_path / "locked.pdf")
    make_zero_page_pdf(tmp_path / "nothing.pdf")
    make_truncated_pdf(tmp_path / "cut-early.pdf", pages=20, keep=0.1)  # cut before its catalog
    texts = make_born_digital_pdf(tmp_path / "good.pdf", pages=3, seed=22)
    files = [str(tmp_path / name) for name in [*bad, "good.pdf"]]

    result = run_cli(["run", *files, "--out", str(tmp_path / "out"), "--ocr-processes", "1"], cli_env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr
    for name, reason in bad.items():
        mine = [line for line in lines if name in line]
        assert len(mine) == 1, (name, lines)
        assert reason in mine[0]
    good = (tmp_path / "out" / "good.txt").read_text().split("\f")
    assert [p.split() for p in good] == [t.split() for t in texts]


@pytest.mark.timeout(300)
async def test_a_huge_file_that_is_no_pdf_is_refused_from_its_first_kilobyte(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The whole file was read for its checksum before its header was looked at: 1 GB of zeros
    took 5 s to be called not a PDF, and a link to a 20 GB sparse file was still being read after
    a minute. A terabyte (sparse: it takes no disk) is refused at once."""
    huge = tmp_path / "huge.pdf"
    with huge.open("wb") as handle:
        handle.truncate(1 << 40)
    make_born_digital_pdf(tmp_path / "good.pdf", pages=1, seed=25)
    result = run_cli(
        ["run", str(huge), str(tmp_path / "good.pdf"), "--out", str(tmp_path / "out")], cli_env, 60
    )
    assert result.returncode == 2
    (refused,) = [line for line in result.stderr.splitlines() if "huge.pdf" in line]
    assert refused == f"chunk-ocr: {huge}: not a PDF (no %PDF- header in its first 1024 bytes)"
    assert (tmp_path / "out" / "good.txt").exists()


@pytest.mark.timeout(300)
async def test_file_names_with_terminal_escapes_are_said_escaped_on_one_line(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A file name holding a line break, an escape sequence that clears the screen and sets the
    window's title, or a bidirectional override was printed as it was: each 'one-line' message
    spanned lines, and the terminal obeyed the name. Now each such character is written as its
    escape, and the name is still told from another."""
    bad = tmp_path / "bad\nx\x1b[31mRED.pdf"
    bad.write_text("not a PDF\n")
    good = tmp_path / "evil\nname\x1b[2J\x1b]0;pwn\x07\u202e.pdf"
    make_born_digital_pdf(good, pages=1, seed=24)
    result = run_cli(["run", str(bad), str(good), "--out", str(tmp_path / "out")], cli_env)
    assert result.returncode == 2
    for stream in (result.stdout, result.stderr):
        assert not any(ch in stream for ch in "\x1b\x07\u202e\r")
    refused = [line for line in result.stderr.splitlines() if "bad" in line]
    assert len(refused) == 1, result.stderr  # the whole of it, should another line name the file
    assert refused[0].startswith(f"chunk-ocr: {tmp_path}/bad\\nx\\x1b[31mRED.pdf: not a PDF")
    (done,) = result.stdout.strip().splitlines()
    assert done.startswith(f"{tmp_path}/evil\\nname\\x1b[2J\\x1b]0;pwn\\x07\\u202e.pdf: 1 pages")


@pytest.mark.timeout(300)
async def test_truncated_pdf_is_repaired_with_a_warning_naming_the_lost_pages(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    # Cut at 60 %: the page tree and the first 11 pages' content survive, pages 12-20 do not.
    texts = make_truncated_pdf(tmp_path / "cut.pdf", pages=20, keep=0.6, seed=23)
    result = run_cli(
        ["run", str(tmp_path / "cut.pdf"), "--out", str(tmp_path / "out"), "--ocr-processes", "1"], cli_env
    )
    assert result.returncode == ExitCode.PAGES_MISSING, result.stderr
    assert "Traceback" not in result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"chunk-ocr: {tmp_path / 'cut.pdf'}: warning: the file is truncated: rebuilt with pypdf,"
        " 9 of 20 pages lost (pages 12-20, left blank); pages 12-20: the page's content stream is cut off",
        f"chunk-ocr: {tmp_path / 'cut.pdf'}: warning: 9 of 20 pages could not be read and have no text"
        " (page 12: page_lost; page 13: page_lost; page 14: page_lost; 6 more in the JSON);"
        " page 12: page 12 was lost in the damaged file: the page's content stream is cut off",
    ]
    pages = (tmp_path / "out" / "cut.txt").read_text().split("\f")
    assert len(pages) == 20  # page numbers are those of the original
    assert [p.split() for p in pages[:11]] == [t.split() for t in texts[:11]]
    assert pages[11:] == [""] * 9
    merged = json.loads((tmp_path / "out" / "cut.json").read_text())
    assert [(f["page_number"], f["code"]) for f in merged["failed_pages"]] == [
        (n, "page_lost") for n in range(12, 21)
    ]


@pytest.mark.timeout(300)
async def test_broken_xref_is_rebuilt(cli_env: dict[str, str], tmp_path: Path) -> None:
    texts = make_broken_xref_pdf(tmp_path / "xref.pdf", pages=4, seed=24)
    result = run_cli(
        ["run", str(tmp_path / "xref.pdf"), "--out", str(tmp_path / "out"), "--ocr-processes", "1"], cli_env
    )
    assert result.returncode == 0, result.stderr
    pages = (tmp_path / "out" / "xref.txt").read_text().split("\f")
    assert [p.split() for p in pages] == [t.split() for t in texts]


@pytest.mark.timeout(400)
def test_three_thousand_blank_pages(cli_env: dict[str, str], tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "blank.pdf", pages=3000, blank=True)
    command = [
        "run",
        str(tmp_path / "blank.pdf"),
        "--out",
        str(tmp_path / "out"),
        "--ocr-processes",
        "2",
        "--json",
    ]
    measured = run_measuring_peak_rss(
        [sys.executable, "-m", "app.cli", *command], env=cli_env, cwd=REPO_ROOT, timeout=300
    )
    result = measured.completed
    assert result.returncode == 0, result.stderr
    (doc,) = json.loads(result.stdout)["documents"]
    assert (doc["status"], doc["pages"]) == ("completed", 3000)
    assert doc["chunks"] <= 100  # planned in bounded pieces
    text = (tmp_path / "out" / "blank.txt").read_text()
    assert text == "\f" * 2999  # 3,000 empty pages
    # the command, its worker and the worker's OCR processes were all measured
    assert len(measured.by_process) >= 4, measured.describe()
    # the largest process of the run (the command or a worker) stayed small
    assert measured.largest_mib < 400, measured.describe()


async def test_unusable_engine_is_one_line(cli_env: dict[str, str], tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "a.pdf", pages=1)
    env = cli_env | {"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "no-such-key.json")}
    result = run_cli(["run", str(tmp_path / "a.pdf"), "--engine", "google-vision"], env)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("chunk-ocr: error: google-vision needs Google credentials")


def test_text_layer_engine_on_a_scan_says_which_pages_gave_no_text(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """--engine text-layer reads no image: a scan's pages come back empty, and the run says so
    (once, naming them) instead of reporting a clean document."""
    make_scanned_pdf(tmp_path / "scan.pdf", pages=2, seed=24)
    result = run_cli(
        ["run", str(tmp_path / "scan.pdf"), "--out", str(tmp_path / "out"), "--engine", "text-layer"], cli_env
    )
    assert result.returncode == ExitCode.OK, result.stderr
    said = [line for line in result.stderr.splitlines() if line.startswith("chunk-ocr: ")]
    assert said == [
        f"chunk-ocr: {tmp_path / 'scan.pdf'}: warning: 2 of 2 pages have no text layer (pages 1, 2); "
        "if they are scanned, --engine auto or tesseract reads them"
    ]


def test_text_layer_engine_on_a_born_digital_file_says_nothing(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "text.pdf", pages=2, seed=25)
    result = run_cli(
        ["run", str(tmp_path / "text.pdf"), "--out", str(tmp_path / "out"), "--engine", "text-layer"], cli_env
    )
    assert result.returncode == ExitCode.OK, result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("chunk-ocr: ")] == []


# Sets SIGINT as its first argument names, then execs the rest: SIG_IGN as for a job a script
# starts in the background; SIG_DFL as at a terminal, whatever the suite inherited (a suite
# started in the background by a shell without job control ignores SIGINT, and so would the
# command, which Python then leaves ignored: it ran on to exit 0). Not a preexec_fn: with one,
# CPython runs the at-fork handlers of gRPC (live in this process once a Vision test has run
# in it) between fork and exec, and gRPC's aborted the child (CI: "run exited -6", "epoll_wait
# error: Bad file descriptor").
_EXEC_WITH_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, getattr(signal, sys.argv[1]));"
    " os.execv(sys.argv[2], sys.argv[2:])"
)


def _with_sigint(disposition: str, *argv: str) -> list[str]:
    """argv run with SIGINT set to disposition ("SIG_IGN" or "SIG_DFL"), in the same process."""
    return [sys.executable, "-c", _EXEC_WITH_SIGINT, disposition, *argv]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("stop", "sigint_ignored"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGTERM, True)],
    ids=["ctrl-c", "sigterm", "sigterm-in-background"],
)
async def test_ctrl_c_says_which_documents_are_left_queued(
    cli_env: dict[str, str], pool: asyncpg.Pool, tmp_path: Path, stop: signal.Signals, sigint_ignored: bool
) -> None:
    """Ctrl-C ended `run` without a word, and the document it left queued was found only when a
    later worker OCR'd it. Now one line names it and says how it goes on. The chunk it was
    reading (no grace period here) is handed back without using up one of its attempts.
    SIGTERM (`timeout`, `docker stop`) had ended the process at once, its chunk leased until the
    stale sweep charged it an attempt: it now stops `run` as Ctrl-C does."""
    pdf = tmp_path / f"interrupted-{uuid4().hex[:8]}.pdf"
    make_scanned_pdf(pdf, pages=8, seed=3)
    argv = ["run", str(pdf), "--out", str(tmp_path / "out"), "--engine", "tesseract"]
    argv += ["--chunk-pages", "1", "--ocr-processes", "1"]
    process = await asyncio.create_subprocess_exec(
        *_with_sigint("SIG_IGN" if sigint_ignored else "SIG_DFL", sys.executable, "-m", "app.cli", *argv),
        env=cli_env | {"WORKER_GRACE_SECONDS": "0"},
        cwd=REPO_ROOT,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    document_id = None
    while document_id is None:  # until the run waits on its queued document (a chunk is read)
        await asyncio.sleep(0.2)
        if process.returncode is not None:  # ended before a chunk was read: say how, not hang
            said = (await process.stderr.read()).decode()
            pytest.fail(f"run exited {process.returncode} before reading a chunk: {said[-2000:]}")
        document_id = await pool.fetchval(
            """
            select d.id from documents d join document_ocr_chunks c on c.document_id = d.id
             where d.filename = $1 and d.ocr_status = 'processing' and c.status <> 'pending' limit 1
            """,
            pdf.name,
        )
    process.send_signal(stop)
    said = (await process.stderr.read()).decode()
    assert await process.wait() == ExitCode.INTERRUPTED

    (line,) = [line for line in said.splitlines() if line.startswith("chunk-ocr: interrupted:")]
    assert f"{pdf.name} ({document_id})" in line
    assert "chunk-ocr worker" in line
    status = await pool.fetchval("select ocr_status from documents where id = $1", document_id)
    assert status == "processing"  # left queued for a worker, not failed or lost
    # handed back to the fleet: a `chunk-ocr worker` takes it up (a run that is killed lets it lapse)
    assert await pool.fetchval("select count(*) from document_ocr_reservations") == 0
    cut_short = await pool.fetch(
        "select status, error_code, attempt_count, max_attempts from document_ocr_chunks"
        " where document_id = $1 and status <> 'completed' and attempt_count > 0",
        document_id,
    )
    assert cut_short  # the chunk being read when Ctrl-C came
    assert [tuple(row) for row in cut_short] == [("pending", "worker_stopped", 1, 4)] * len(cut_short), (
        _worker_complaints(tmp_path / "data" / "logs")
    )


def _worker_complaints(logs: Path) -> str:
    """The warnings and errors of `run`'s worker log (a failure says how a chunk ended)."""
    lines = [line for path in sorted(logs.glob("*.log")) for line in path.read_text().splitlines()]
    return "\n".join(
        line[:2000] for line in lines if '"level": "warning"' in line or '"level": "error"' in line
    )


@pytest.mark.timeout(240)
async def test_running_a_stopped_file_again_goes_on_with_its_document(
    cli_env: dict[str, str], pool: asyncpg.Pool, tmp_path: Path
) -> None:
    """Running a file again after Ctrl-C started a new document and read every page again. Now
    the run goes on with the document the first left under way: the pages it read are not read
    again, and the outputs are whole."""
    pdf = tmp_path / f"resumed-{uuid4().hex[:8]}.pdf"
    texts = make_scanned_pdf(pdf, pages=6, seed=11)
    argv = ["run", str(pdf), "--out", str(tmp_path / "out"), "--engine", "tesseract"]
    argv += ["--chunk-pages", "1", "--ocr-processes", "1"]
    process = await asyncio.create_subprocess_exec(
        *_with_sigint("SIG_DFL", sys.executable, "-m", "app.cli", *argv),
        env=cli_env,
        cwd=REPO_ROOT,
        stderr=asyncio.subprocess.PIPE,
    )
    document_id = None
    deadline = time.monotonic() + 90  # two pages take seconds: past this, say what the run did
    while document_id is None:  # until two pages are read
        if process.returncode is not None or time.monotonic() > deadline:
            await _fail_with_what_the_run_said(process, cli_env, pdf.name, pool)
        await asyncio.sleep(0.2)
        document_id = await pool.fetchval(
            """
            select d.id from documents d join document_ocr_chunks c on c.document_id = d.id
             where d.filename = $1 and c.status = 'completed' group by d.id having count(*) >= 2
            """,
            pdf.name,
        )
    process.send_signal(signal.SIGINT)
    await process.communicate()
    assert process.returncode == ExitCode.INTERRUPTED
    read = {
        row["id"]: (row["updated_at"], row["result_checksum"])
        for row in await pool.fetch(
            "select id, updated_at, result_checksum from document_ocr_chunks"
            " where document_id = $1 and status = 'completed'",
            document_id,
        )
    }
    assert 2 <= len(read) < 6

    again = run_cli([*argv, "--json"], cli_env)
    assert again.returncode == ExitCode.OK, again.stderr
    (entry,) = json.loads(again.stdout)["documents"]
    assert entry["document_id"] == str(document_id)
    assert entry["status"] == "completed"
    assert entry["pages_read_earlier"] == len(read)
    assert f"going on with {document_id}" in again.stderr
    assert f"({len(read)} of 6 pages read)" in again.stderr
    assert await pool.fetchval("select count(*) from documents where filename = $1", pdf.name) == 1
    for chunk_id, (updated_at, checksum) in read.items():  # not read again
        row = await pool.fetchrow(
            "select updated_at, result_checksum, status from document_ocr_chunks where id = $1", chunk_id
        )
        assert (row["updated_at"], row["result_checksum"], row["status"]) == (
            updated_at,
            checksum,
            "completed",
        )
    written = (tmp_path / "out" / f"{pdf.stem}.txt").read_text(encoding="utf-8")
    assert cer("\n".join(texts), written) < 0.02


async def _fail_with_what_the_run_said(
    process: asyncio.subprocess.Process, env: dict[str, str], filename: str, pool: asyncpg.Pool
) -> None:
    """The run ended, or never read two pages: fail with its stderr, its log's end and its chunks."""
    if process.returncode is None:
        process.kill()
    _, said = await process.communicate()
    logs = sorted((Path(env["DATA_DIR"]) / "logs").glob("run-*.log"))
    logged = logs[-1].read_text(encoding="utf-8")[-3000:] if logs else "(no run log)"
    chunks = await pool.fetch(
        "select c.page_start, c.status, c.error_code, c.attempt_count from document_ocr_chunks c"
        " join documents d on d.id = c.document_id where d.filename = $1 order by c.page_start",
        filename,
    )
    pytest.fail(
        f"run ended ({process.returncode}) before two pages were read\nchunks: {[tuple(c) for c in chunks]}"
        f"\nstderr: {said.decode(errors='replace')[-2000:]}\nlog: {logged}"
    )
