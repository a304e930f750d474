"""`chunk-ocr run`'s worker, inside the command: a real ChunkOcrWorker on the test's event loop,
with real OCR processes, Redis and PostgreSQL. It works chunks, keeps its log lines off the
terminal, leaves no process behind when stopped, and an error that ends it early is the
command's to report."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from arq.connections import ArqRedis

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.core.logging import configure_logging, get_logger
from app.local.workers import InlineWorker
from app.models.document import DocumentStatus
from app.pdf.samples import make_scanned_pdf
from app.services.composition import open_queued_core


@pytest.fixture
def worker_settings_(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(
        update={"local_storage_dir": tmp_path / "storage", "ocr_engine": "null", "ocr_processes": 1}
    )


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """The test process's logging as it was (get_logger's default): stop() leaves the command's."""
    yield
    configure_logging()


def _descendants() -> list[psutil.Process]:
    """This process's children but multiprocessing's resource tracker, which lives as long as it
    does (the forkserver's start made it, and the next one uses it again)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if process.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(
                process.cmdline()
            ):
                found.append(process)
        except psutil.NoSuchProcess:  # gone meanwhile
            continue
    return found


async def _until(check: object, seconds: float, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():  # type: ignore[operator]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no {what} within {seconds} s")
        await asyncio.sleep(0.05)


@pytest.mark.timeout(120)
async def test_it_works_a_document_then_stops_with_its_processes(
    worker_settings_: Settings,
    arq_redis: ArqRedis,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    restore_logging: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOG_LEVEL", "INFO")  # the file's level, as the command's (default WARNING)
    before = {p.pid for p in _descendants()}
    pdf = tmp_path / "three.pdf"
    make_scanned_pdf(pdf, 3, seed=1)
    core = await open_queued_core(worker_settings_)
    log_path = tmp_path / "logs" / "run.log"
    worker = InlineWorker.start(worker_settings_, log_path)
    try:
        matter = await core.documents.matter_named("inline")
        started = await core.documents.submit(
            pdf, matter_id=matter, engine="null", language="eng", chunk_pages=1, workers=1
        )

        async def finished() -> bool:
            report = await core.documents.status(started.document.id, with_failed=False)
            return report.finished

        deadline = asyncio.get_running_loop().time() + 60
        while not await finished():
            assert worker.alive(), worker.failure()
            assert asyncio.get_running_loop().time() < deadline, "the document did not finish"
            await asyncio.sleep(0.05)
        report = await core.documents.status(started.document.id, with_failed=False)
        assert report.document.ocr_status is DocumentStatus.COMPLETED
        assert report.progress.completed == 3
        assert any(p.pid not in before for p in _descendants())  # its forkserver and OCR process
        get_logger("test").warning("while_the_worker_runs")
    finally:
        await worker.stop()
        await core.close()

    assert not worker.alive()
    assert worker.failure() is None
    events = [json.loads(line)["event"] for line in log_path.read_text().splitlines()]
    assert "worker_started" in events
    assert "while_the_worker_runs" in events  # every log line of the command went to the file
    assert "worker_started" not in capsys.readouterr().err
    get_logger("test").warning("after_the_worker")  # back on the terminal once it stopped
    assert "after_the_worker" in capsys.readouterr().err
    await _until(lambda: not [p for p in _descendants() if p.pid not in before], 10, "exit of its processes")


@pytest.mark.timeout(120)
async def test_an_error_that_ends_it_at_start_up_is_kept_for_the_command(
    worker_settings_: Settings, arq_redis: ArqRedis, tmp_path: Path, restore_logging: None
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = worker_settings_.model_copy(update={"worker_metrics_port": port})
        worker = InlineWorker.start(settings, tmp_path / "run.log")
        try:
            await _until(lambda: not worker.alive(), 60, "end of the worker")
            assert isinstance(worker.failure(), ConfigurationError)
            assert str(port) in str(worker.failure())
        finally:
            await worker.stop()  # an ended worker stops without raising


@pytest.mark.timeout(180)
async def test_a_stop_lets_the_running_chunk_finish_and_its_end_wakes_the_command(
    worker_settings_: Settings, arq_redis: ArqRedis, tmp_path: Path, restore_logging: None
) -> None:
    """stop() awaits the running jobs itself (arq's own wait looked every 0.1 s whether they were
    done); the chunk it was reading is finished and recorded, not cancelled. next_job_end, which
    the command waits on between its status reads, returns when that chunk's job ends."""
    settings = worker_settings_.model_copy(update={"ocr_engine": "tesseract"})
    pdf = tmp_path / "three.pdf"
    make_scanned_pdf(pdf, 3, seed=2)
    core = await open_queued_core(settings)
    worker = InlineWorker.start(settings, tmp_path / "run.log")
    try:
        matter = await core.documents.matter_named("inline-stop")
        started = await core.documents.submit(
            pdf, matter_id=matter, engine="tesseract", language="eng", chunk_pages=3, workers=1
        )

        async def progress() -> tuple[int, int]:
            report = await core.documents.status(started.document.id, with_failed=False)
            return report.progress.processing, report.progress.completed

        deadline = asyncio.get_running_loop().time() + 60
        while (await progress())[0] == 0:  # its one chunk is being read
            assert worker.alive(), worker.failure()
            assert asyncio.get_running_loop().time() < deadline, "the chunk never started"
            await asyncio.sleep(0.02)
        worker.request_stop()
        woken = 0
        while (await progress())[1] == 0:
            await asyncio.wait_for(worker.next_job_end(3600), 120)  # not its timeout: a job's end
            woken += 1
            assert woken <= 3, "woken without the chunk's end"
        await worker.stop()
        assert await progress() == (0, 1)  # finished and recorded, not cancelled midway
        assert worker.failure() is None
    finally:
        await worker.stop()
        await core.close()
