"""The OCR process pool: CPU-bound OCR off the event loop, one process per core.

PDFium is not thread-safe and tesseract is CPU-bound, so OCR runs in
separate processes. They ignore SIGINT and SIGTERM: stopping is the worker's
decision (it waits out its grace period, then calls stop_ocr_pool). Every
process under the worker dies with its parent, even on SIGKILL (_lifetime.py).

Each OCR process runs under the limits of _limits.py (decoded bytes per page,
an address-space limit that its tesseract inherits). A MemoryError there comes
back as ResourceLimitError. A process that dies (PDFium aborts on a failed
allocation; the OOM killer; kill -9; a page past its CPU time) breaks the
ProcessPoolExecutor it runs in for good and fails every task in it, so each OCR
process has an executor of its own (a slot): a death ends its own task alone,
with OcrProcessDiedError, and the slot gets a new process. The tasks in other
processes run on. (One executor for all of them had killed every process with
the one that died: a stream of hostile pages restarted another user's chunk
over and over until its attempts were spent.) OcrPool queues the tasks and
gives each to the next free slot, in order. A task the pool's stop cuts short,
queued or running, ends with OcrPoolStoppedError, and a task submitted after it
raises that error: the worker stopped, nothing was wrong with the pages.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future, InvalidStateError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import forkserver
from multiprocessing.connection import wait
from multiprocessing.context import ForkServerProcess
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from app.core.config import Settings, get_settings
from app.core.languages import DEFAULT_LANGUAGE
from app.core.logging import configure_logging, get_logger
from app.engines._lifetime import arm_ocr_process
from app.engines._limits import Limits, memory_error, set_limits, text_within_limit
from app.engines._liveness import StallWatch, can_watch
from app.engines._page_clock import PAGE_CLOCK_SIGNAL, page_seconds_at_most, stop_page_clock
from app.engines._pages import marker_record, track_task, without_pages
from app.engines._read_pages import pages_read, record_to
from app.engines._tesseract_api import reader
from app.engines.base import PageResult
from app.engines.errors import EngineError, OcrPoolStoppedError, OcrProcessDiedError, PageTimeoutError
from app.engines.forkserver import start_forkserver
from app.engines.registry import get_engine, use_settings
from app.engines.specs import engine_spec

log = get_logger(__name__)
_MIB = 1 << 20
_SHM = Path("/dev/shm")


def _start_ocr_process(limits: Limits, settings: Settings | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    arm_ocr_process()
    set_limits(limits)
    if settings is not None:
        use_settings(settings)
        configure_logging(settings.log_level, file=settings.log_file)  # the worker's log, as its own


def limits_for(settings: Settings) -> Limits:
    """The limits the settings ask for (MAX_PAGE_DECODED_MB, OCR_PROCESS_MEMORY_MB,
    MAX_PAGE_CPU_SECONDS, MAX_PAGE_TEXT_CHARS; 0: none)."""
    return Limits(
        page_decoded_bytes=settings.max_page_decoded_mb * _MIB if settings.max_page_decoded_mb else None,
        address_space_bytes=settings.ocr_process_memory_mb * _MIB if settings.ocr_process_memory_mb else None,
        page_cpu_seconds=settings.max_page_cpu_seconds or None,
        page_text_chars=settings.max_page_text_chars or None,
    )


def make_ocr_pool(
    processes: int | None = None,
    limits: Limits | None = None,
    *,
    settings: Settings | None = None,
    replaced_level: int = logging.WARNING,
) -> OcrPool:
    """A pool of OCR processes. Make it on a thread that lives as long as the pool (the event
    loop's): the forkserver, started here, dies when this thread ends.

    settings: what the OCR processes build engines with (a worker passes its own; without them,
    each process reads the environment's), and unless `limits` is given, where the limits come from.
    replaced_level: how loudly a dead process is logged (the planner's text pass expects them).
    A process whose task makes no progress for OCR_PROCESS_STALL_SECONDS is killed (_liveness).
    """
    # forkserver: children do not inherit the worker's event loop, sockets or locks. The server
    # imports the engines once, so each OCR process starts from a warm copy of it.
    start_forkserver()  # now and from this thread, not from the first submit's
    own = settings if settings is not None else get_settings()
    if limits is None:
        limits = limits_for(own)
    return OcrPool(
        processes or os.cpu_count() or 1,
        limits,
        settings,
        replaced_level=replaced_level,
        stall_seconds=own.ocr_process_stall_seconds,
    )


class OcrPool(Executor):
    """OCR processes, each in a ProcessPoolExecutor of its own (a slot), fed from one queue; a
    slot whose process died gets a new one."""

    def __init__(
        self,
        processes: int,
        limits: Limits,
        settings: Settings | None = None,
        *,
        replaced_level: int = logging.WARNING,
        stall_seconds: float = 0.0,
    ) -> None:
        self.processes = processes
        self.replaced_level = replaced_level
        self.limits = limits
        self.settings = settings  # handed to each OCR process, which builds its engines with them
        self._lock = threading.RLock()
        self._shutdown = False
        self._tokens = itertools.count()
        # Each running task names itself in a file named by its process's pid: when a process
        # dies, the file it left says which page it was on.
        self._running = Path(
            tempfile.mkdtemp(prefix="chunk-ocr-pool-", dir=_SHM if os.access(_SHM, os.W_OK) else None)
        )
        self._slots = [_Slot(self._new_executor()) for _ in range(processes)]
        self._queued: collections.deque[_Task] = collections.deque()
        self.replaced = 0  # how many times a dead process was replaced
        self.stall_seconds = stall_seconds
        self._stalled: set[int] = set()  # pids the stall watch killed
        self._watch = (
            StallWatch(stall_seconds, self._running, self._current_processes, self._stalled.add).start()
            if stall_seconds and can_watch()
            else None
        )

    def _new_executor(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("forkserver"),
            initializer=_start_ocr_process,
            initargs=(self.limits, self.settings),
        )

    def _current_processes(self) -> dict[int, BaseProcess]:
        with self._lock:
            executors = [slot.executor for slot in self._slots]
        return {
            pid: process for executor in executors for pid, process in (executor._processes or {}).items()
        }

    def _busy_processes(self) -> list[BaseProcess]:
        """The processes of the slots that run a task now."""
        with self._lock:
            executors = [slot.executor for slot in self._slots if slot.task is not None]
        return [process for executor in executors for process in (executor._processes or {}).values()]

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        task = _Task(Future(), next(self._tokens), fn, args, kwargs)
        with self._lock:
            if self._shutdown:
                raise _stopped()
            self._queued.append(task)
            self._dispatch()
        return task.outer

    def _dispatch(self) -> None:
        """Give queued tasks to free slots (under the lock); a task cancelled while queued is dropped."""
        for slot in self._slots:
            while slot.task is None and self._queued:
                task = self._queued.popleft()
                if task.outer.set_running_or_notify_cancel():
                    self._start(slot, task)

    def _start(self, slot: _Slot, task: _Task) -> None:
        args = (str(self._running), task.token, task.fn, task.args, task.kwargs)
        try:
            inner = slot.executor.submit(_tracked, *args)
        except BrokenProcessPool:  # its idle process died (killed from outside)
            self._replace(slot, slot.executor)
            inner = slot.executor.submit(_tracked, *args)
        slot.task = task
        executor = slot.executor
        inner.add_done_callback(lambda inner: self._done(slot, executor, task, inner))

    def _done(self, slot: _Slot, executor: ProcessPoolExecutor, task: _Task, inner: Future[Any]) -> None:
        error = inner.exception() if not inner.cancelled() else None
        with self._lock:
            if slot.task is task:
                slot.task = None
            if isinstance(error, BrokenProcessPool) and not self._shutdown:
                death = self._on_death(slot, executor)
                if death is None and not task.reruns:  # it died before the task began: once more
                    task.reruns += 1
                    self._queued.appendleft(task)
                    self._dispatch()
                    return
                error = _death_error(death, self.limits, self.stall_seconds)
            elif inner.cancelled() or isinstance(error, BrokenProcessPool):
                # the stop ended it (stop_ocr_pool): cancelled before its process took it, or
                # killed in it. Not cancelled on the outside: whoever awaits it was not.
                error = _stopped()
            if not self._shutdown:
                self._dispatch()
        with contextlib.suppress(InvalidStateError):
            if error is not None:
                task.outer.set_exception(error)
            else:
                task.outer.set_result(inner.result())

    def _on_death(self, slot: _Slot, executor: ProcessPoolExecutor) -> _Death | None:
        """How the slot's process died running its task (None: no task of it had begun), and a
        new process for the slot."""
        death = None
        for process in list((executor._processes or {}).values()):
            read = _read_path(self._running, process.pid)
            with contextlib.suppress(OSError, ValueError):
                _, *page = (self._running / str(process.pid)).read_text().split()
                stalled = process.pid in self._stalled
                death = _Death(
                    int(page[0]) if page else None, process.exitcode or 0, stalled, tuple(pages_read(read))
                )
            self._stalled.discard(process.pid)  # a later process may be given the same pid
            (self._running / str(process.pid)).unlink(missing_ok=True)
            read.unlink(missing_ok=True)
        self._replace(slot, executor)
        return death

    def _replace(self, slot: _Slot, broken: ProcessPoolExecutor) -> None:
        """A new executor in the slot for a broken one, whose process (it ignores SIGTERM) is
        killed if it still runs."""
        if slot.executor is not broken:
            return
        old = list((broken._processes or {}).values())
        for process in old:
            if process.exitcode is None:
                with contextlib.suppress(OSError):
                    process.kill()
        slot.executor = self._new_executor()
        self.replaced += 1
        log.log(
            self.replaced_level,
            "ocr_process_replaced",
            exit_codes={p.pid: p.exitcode for p in old},
            replaced=self.replaced,
        )

    def stop_watching(self) -> None:
        if self._watch is not None:
            self._watch.stop()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the slots. Tasks still queued end with OcrPoolStoppedError, whatever
        cancel_futures says: only the pool could start them, and it is stopping."""
        self.stop_watching()
        with self._lock:
            self._shutdown = True
            queued, self._queued = list(self._queued), collections.deque()
            executors = [slot.executor for slot in self._slots]
        for task in queued:
            if task.outer.set_running_or_notify_cancel():  # False: its caller cancelled it
                task.outer.set_exception(_stopped())
        for executor in executors:
            executor.shutdown(wait=wait, cancel_futures=cancel_futures)
        if wait:
            shutil.rmtree(self._running, ignore_errors=True)


@dataclass(eq=False)
class _Task:
    outer: Future[Any]
    token: int
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    reruns: int = 0  # runs again after its process died before it began


@dataclass(eq=False)
class _Slot:
    """One OCR process's executor, and the task it runs (None: free)."""

    executor: ProcessPoolExecutor
    task: _Task | None = None


@dataclass(frozen=True, slots=True)
class _Death:
    """How an OCR process running a task died: the page the task was on, the exit code, whether
    the stall watch killed it, and the pages the task had read (app.engines._read_pages)."""

    page: int | None
    exitcode: int
    stalled: bool = False
    read: tuple[PageResult, ...] = ()


def _stopped() -> OcrPoolStoppedError:
    return OcrPoolStoppedError("the worker stopped its OCR processes before the task ended")


def _death_error(death: _Death | None, limits: Limits, stall_seconds: float) -> OcrProcessDiedError:
    """What a task whose process died fails with: how (death), or, where the process died before
    the task began twice over, that alone. It carries the pages the task had read."""
    if death is None:
        return OcrProcessDiedError("the OCR process for this chunk died before it began, twice")
    error = _how_it_died(death, limits, stall_seconds)
    error.pages_read = death.read
    return error


def _how_it_died(death: _Death, limits: Limits, stall_seconds: float) -> OcrProcessDiedError:
    on_page = f"page {death.page}" if death.page is not None else "the chunk's PDF"
    if death.stalled:
        return OcrProcessDiedError(
            f"the OCR process running this chunk made no progress on {on_page} for {stall_seconds:g} s "
            "(stopped or hung) and was killed (OCR_PROCESS_STALL_SECONDS)",
            page=death.page,
        )
    if death.exitcode == -PAGE_CLOCK_SIGNAL:
        return page_timeout(death.page, limits.page_cpu_seconds or 0, "MAX_PAGE_CPU_SECONDS")
    return OcrProcessDiedError(
        f"the OCR process running this chunk died on {on_page} (killed, or out of memory inside PDFium)"
        if death.page is not None
        else "the OCR process running this chunk died (killed, or out of memory inside PDFium)",
        page=death.page,
    )


def page_timeout(page: int | None, seconds: float, setting: str) -> PageTimeoutError:
    """The error of a page that used up its CPU time: `seconds`, which `setting` gave it."""
    on_page = f"page {page}" if page is not None else "the chunk's PDF"
    return PageTimeoutError(
        f"{on_page} took more than {seconds:g} s of CPU time to read ({setting})", page=page
    )


def _tracked(
    running: str, token: int, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """Run inside an OCR process: fn, with a file naming the task while it runs (see OcrPool)."""
    marker = Path(running) / str(os.getpid())
    read = _read_path(Path(running), os.getpid())
    descriptor: int | None = None
    read_descriptor: int | None = None
    with contextlib.suppress(OSError):
        descriptor = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.pwrite(descriptor, marker_record(token), 0)
    with contextlib.suppress(OSError):
        read_descriptor = os.open(read, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
    track_task(descriptor, token)  # the engines add the page they are on (_pages.load_page)
    record_to(read_descriptor)  # and each page they finish (_read_pages.page_read)
    try:
        return fn(*args, **kwargs)
    finally:
        stop_page_clock()
        track_task(None)
        record_to(None)
        for open_descriptor in (descriptor, read_descriptor):
            if open_descriptor is not None:
                os.close(open_descriptor)
        with contextlib.suppress(OSError):
            marker.unlink()
        with contextlib.suppress(OSError):
            read.unlink()


def _read_path(running: Path, pid: int | None) -> Path:
    """The file of the pages a process's running task has read."""
    return running / f"{pid}.read"


def stop_ocr_pool(executor: Executor, timeout: float = 5.0) -> None:
    """Cancel queued work; return once the OCR processes and the forkserver have exited.

    An OcrPool's processes still running a task are killed at once (they ignore
    SIGTERM), and their tesseract with them: the pool is stopped when its work
    is done or given up (a cancelled chunk job, a stopping worker, an
    interrupted run), so nothing would read what they return. Other processes
    still running after `timeout` seconds are killed too. The forkserver is
    stopped unless a process of another pool still needs it; the next pool
    starts one.
    """
    started = time.monotonic()
    pool = executor if isinstance(executor, OcrPool) else None
    # The executors have no public handle on their processes; they must be taken before shutdown.
    busy: list[BaseProcess] = []
    if pool is not None:
        processes = list(pool._current_processes().values())
        busy = pool._busy_processes()
    elif isinstance(executor, ProcessPoolExecutor):
        processes = list((executor._processes or {}).values())
    else:
        processes = []
    # No replacement from here on (stopping breaks the executors on purpose); each executor's
    # thread tells its idle process to exit.
    executor.shutdown(wait=False, cancel_futures=True)
    for process in busy:
        with contextlib.suppress(OSError):
            process.kill()
    if busy:
        log.info("ocr_processes_stopped_mid_task", pids=[p.pid for p in busy])
    running: dict[int, BaseProcess] = {process.sentinel: process for process in processes}
    _await_exits(running, started + timeout)
    # While one process is busy the executor stops none, so the idle ones are killed as well.
    for process in running.values():
        process.kill()
    if running:
        log.warning("ocr_processes_killed", pids=[p.pid for p in running.values()], timeout_s=timeout)
    _await_exits(running, None)
    if pool is not None:
        shutil.rmtree(pool._running, ignore_errors=True)
    _stop_forkserver()


def _await_exits(running: dict[int, BaseProcess], deadline: float | None) -> None:
    """Drop from running (by sentinel) each process that has exited by deadline (None: all).

    Waits on the sentinels, not with join: the executor's thread joins the
    same processes, and an exit status can be read once (a second reader
    gets 255).
    """
    while running:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return
        ready = wait(list(running), left)
        for sentinel in [sentinel for sentinel in running if sentinel in ready]:
            del running[sentinel]


def _stop_forkserver() -> None:
    if any(isinstance(process, ForkServerProcess) for process in multiprocessing.active_children()):
        return  # another pool's process: the server must go on forking for it
    # No public call stops it. _stop ("used by unit tests", CPython says) closes our end of the
    # server's "alive" pipe, on which it exits, and reaps it. Without it, it exits with this process.
    stop = getattr(forkserver._forkserver, "_stop", None)
    if stop is not None:
        stop()


def warm_up(engine_name: str, language: str = DEFAULT_LANGUAGE) -> str:
    """Run once per pool process before real work: imports, engine construction, binary checks,
    and what an engine loads once for every page (`warm`, where it has one: tesseract's model).

    tesseract's model is loaded first: the languages the library then lists spare the engine's
    checks a `tesseract --list-langs` (and the version comes from the library too), so a warm-up
    runs no command. When it cannot be loaded, the engine's own checks say why."""
    if engine_spec(engine_name).tesseract_languages:
        with contextlib.suppress(EngineError):
            reader(language)
    engine = get_engine(engine_name, language)
    warm = getattr(engine, "warm", None)
    if warm is not None:
        warm()
    return engine.version()


def recognize_in_process(
    engine_name: str,
    pdf_bytes: bytes,
    first_page: int,
    language: str = DEFAULT_LANGUAGE,
    lost: Mapping[int, tuple[str, str]] | None = None,
    page_seconds: float | None = None,
    read: Mapping[int, PageResult] | None = None,
) -> tuple[list[PageResult], str]:
    """Run inside a pool process: the pages of one chunk, read in `language`, and the engine's version.

    lost: pages (numbered in the document) that killed an OCR process on an earlier run of this
    chunk, with the code and message of why (`ocr_process_died`, `page_timeout`). They are not
    read again: a blank page of the same size stands in for each while the engine reads the
    others, and each comes back failed with its code. page_seconds: the CPU seconds each page
    may take, when fewer than MAX_PAGE_CPU_SECONDS (a document over its budget of page timeouts).
    read: pages an earlier run of this chunk read before its process died
    (OcrProcessDiedError.pages_read), by number: a blank page stands in for each, and each comes
    back as it was read."""
    engine = get_engine(engine_name, language)
    lost = lost or {}
    read = {number: page for number, page in (read or {}).items() if number not in lost}
    if lost or read:
        pdf_bytes = without_pages(pdf_bytes, [number - first_page for number in [*lost, *read]])
    limited = page_seconds_at_most(page_seconds) if page_seconds else contextlib.nullcontext()
    try:
        with limited:
            pages = [text_within_limit(page) for page in engine.recognize(pdf_bytes, first_page)]
    except MemoryError:  # over OCR_PROCESS_MEMORY_MB: this chunk's input needs more than allowed
        raise memory_error() from None
    if lost or read:
        pages = [_earlier(page, lost, read) for page in pages]
    return pages, engine.version()


def _earlier(
    page: PageResult, lost: Mapping[int, tuple[str, str]], read: Mapping[int, PageResult]
) -> PageResult:
    """What an earlier run of the chunk made of the page (lost, or read), else the page."""
    if page.page_number in lost:
        return PageResult.failed(page.page_number, *lost[page.page_number])
    return read.get(page.page_number, page)
