"""Engines in OCR worker processes: built there by name, results pickled back; stopping them."""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.context import ForkServerProcess
from pathlib import Path

import psutil
import pytest
from PIL import Image
from structlog.testing import capture_logs

from app.engines._tesseract_exec import tesseract_process
from app.engines.errors import OcrPoolStoppedError
from app.engines.null import NullEngine
from app.engines.pool import make_ocr_pool, recognize_in_process, stop_ocr_pool
from app.pdf.samples import make_born_digital_pdf, page_text, render_scan


def test_pool_runs_engines_in_other_processes(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "b.pdf", pages=2)
    data = (tmp_path / "b.pdf").read_bytes()
    with make_ocr_pool(2) as pool:
        futures = [pool.submit(recognize_in_process, "text-layer", data, n) for n in (1, 3)]
        results = [f.result(timeout=60) for f in futures]
    assert [[p.page_number for p in pages] for pages, _ in results] == [[1, 2], [3, 4]]
    assert all(version.startswith("pdfium") for _, version in results)


def test_null_engine_is_instant_and_empty(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "b.pdf", pages=40, seed=2)
    pages = NullEngine().recognize((tmp_path / "b.pdf").read_bytes(), 101)
    assert [(p.page_number, p.text) for p in pages] == [(n, "") for n in range(101, 141)]


def _forkserver() -> psutil.Process:
    (server,) = (
        p for p in psutil.Process().children() if "multiprocessing.forkserver" in " ".join(p.cmdline())
    )
    return server


def _ocr_processes() -> list[psutil.Process]:
    return [
        psutil.Process(p.pid) for p in multiprocessing.active_children() if isinstance(p, ForkServerProcess)
    ]


def _gone(process: psutil.Process) -> bool:
    """Exited (a zombie not yet reaped by its new parent counts): psutil also spots a reused pid."""
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_stopping_an_idle_pool_lets_its_processes_exit_and_stops_the_forkserver() -> None:
    pool = make_ocr_pool(2)
    for future in [pool.submit(time.sleep, 0.3) for _ in range(2)]:  # two at once: two processes
        future.result(timeout=60)
    processes, server = _ocr_processes(), _forkserver()
    assert len(processes) == 2
    with capture_logs() as logs:
        started = time.monotonic()
        stop_ocr_pool(pool, timeout=30)
    assert time.monotonic() - started < 5  # they exited when told to, the timeout did not run out
    assert not [e for e in logs if e["event"] == "ocr_processes_killed"]
    assert all(_gone(p) for p in [*processes, server])


def _tesseracts(server: psutil.Process) -> list[psutil.Process]:
    """The tesseract commands under the forkserver; a process that exits while it is looked at
    (each OCR process first runs `setpriv ... true`, gone within milliseconds) is left out."""
    found = []
    for process in server.children(recursive=True):
        try:
            if process.name() == "tesseract":
                found.append(process)
        except psutil.NoSuchProcess:
            continue
    return found


def _cpu_seconds(process: psutil.Process) -> float:
    try:
        return process.cpu_times().user
    except psutil.NoSuchProcess:
        return 0.0


def _four_pages_in_one_image(path: Path) -> Path:
    """One image tesseract reads for seconds, and writes nothing until it is done with it."""
    pages = [render_scan(page_text(index, seed=4)) for index in range(4)]
    width, height = pages[0].size
    image = Image.new("L", (width * 2, height * 2), 255)
    for index, page in enumerate(pages):
        image.paste(page, ((index % 2) * width, (index // 2) * height))
    image.save(path, dpi=(300, 300))
    return path


def test_stopping_a_busy_pool_kills_its_processes_and_their_tesseract(tmp_path: Path) -> None:
    """The tesseract command an OCR process runs (its orientation guess) dies with it. A process
    at work is killed at once, not waited for: the pool stops when its work is done or given up,
    and what the task would return has no reader (a stopping worker waited out the timeout, 5 s
    by default, for nothing). Each task the stop cut short, running or queued, ends with
    OcrPoolStoppedError (a worker hands its chunk back uncharged), not cancelled (its caller
    was not) nor broken (as a process that died on a page), and so does one submitted after."""
    image = _four_pages_in_one_image(tmp_path / "four.tif")
    pool = make_ocr_pool(2)
    running = [pool.submit(tesseract_process, str(image), "stdout", "--dpi", "300", "tsv") for _ in range(2)]
    queued = pool.submit(tesseract_process, str(image), "stdout", "--dpi", "300", "tsv")
    server = _forkserver()
    # Past its first second of CPU, tesseract has written its TSV header: a tesseract whose parent
    # dies before that dies of SIGPIPE on the write, armed or not.
    deadline = time.monotonic() + 30
    while not (tesseracts := _tesseracts(server)) or (max(_cpu_seconds(p) for p in tesseracts) < 1):
        assert time.monotonic() < deadline, "no tesseract at work"
        time.sleep(0.05)
    processes = _ocr_processes()
    with capture_logs() as logs:
        stop_ocr_pool(pool, timeout=120)  # far longer than the tasks take
    assert [(e["event"], sorted(e["pids"])) for e in logs] == [
        ("ocr_processes_stopped_mid_task", sorted(p.pid for p in processes))
    ]
    assert all(_gone(p) for p in [*processes, server])
    # Unarmed, it would run on for seconds more, until it writes its words (and dies of SIGPIPE).
    deadline = time.monotonic() + 1
    while not all(_gone(p) for p in tesseracts):
        assert time.monotonic() < deadline, f"tesseract outlived its OCR process: {tesseracts}"
        time.sleep(0.02)
    for future in [*running, queued]:  # killed mid-task: waited for, they would have finished
        assert isinstance(future.exception(timeout=10), OcrPoolStoppedError)
    with pytest.raises(OcrPoolStoppedError):
        pool.submit(tesseract_process, str(image), "stdout", "--dpi", "300", "tsv")
