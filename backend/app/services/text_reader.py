"""The planner's text pass (app.engines.text_pass), run in OCR processes of the planning process;
and in the same processes, the cut of a file too large to cut in the planning process (cut).

The processes start on the first document that needs them, or earlier through start() (the
command line starts them while it connects), and stop with the process's composition root.
Whatever goes wrong in the pass (a process PDFium kills, a page over the limits, a pass past
PASS_SECONDS) leaves pages to the workers: the pass only ever saves work, it never fails a start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.config import Settings
from app.core.errors import OCRError
from app.core.logging import get_logger
from app.engines.base import PageResult
from app.engines.errors import OcrProcessDiedError
from app.engines.pool import OcrPool, make_ocr_pool, stop_ocr_pool
from app.engines.specs import engine_spec
from app.engines.text_pass import pass_version, read_text_pages, slices
from app.pdf.errors import ObjectsTooLargeError
from app.pdf.plan import PageRange
from app.pdf.split import cut_to_files

log = get_logger(__name__)

# Processes PDFium may kill in one file's pass before the rest is left to the workers: each death
# may take seconds (a page growing to the pass's headroom), and the workers measure a page before
# PDFium sees it. A 1 KB file naming one deadly page 20 times held an upload's planning 12 s at 8.
MAX_DEATHS = 2
# Wall seconds a file's pass may take: after them no page is begun, and the rest are the workers'.
# Each page has its own CPU time (text_pass.PAGE_SECONDS), but a page tree may name one slow page
# 10,000 times; an upload waits for its pass. Born-digital pages take about 0.3 ms each.
PASS_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class ReadPages:
    """The pages read at planning, by page number, and the version of what read them."""

    pages: dict[int, PageResult]
    engine_version: str


@dataclass
class TextReader:
    settings: Settings
    # Called (on the event loop) when a planned file has a page to OCR: the command line starts
    # its worker then, not before, so a born-digital file never pays for one.
    on_pages_to_ocr: Callable[[], None] | None = None
    seconds: float = PASS_SECONDS  # how long a file's pass may begin pages
    _pool: OcrPool | None = field(default=None, init=False)

    def reads(self, engine: str) -> bool:
        return self.settings.read_text_at_planning and engine_spec(engine).reads_text_layer

    def start(self, *, warm: bool = False) -> None:
        """Start the pool now (on the event loop's thread: the forkserver lives with it); warm: and
        its processes, in the background (the command line, while it connects and inspects)."""
        if self._pool is None:
            self._pool = make_ocr_pool(
                self.settings.ocr_process_count, settings=self.settings, replaced_level=logging.INFO
            )
            if warm:
                for _ in range(self._pool.processes):
                    self._pool.submit(pass_version)

    async def read(self, engine: str, pdf_path: Path, page_count: int) -> ReadPages:
        """The pages of the file that engine takes from their text layer (none for other engines)."""
        if not self.reads(engine):
            self.pages_to_ocr()
            return ReadPages({}, "")
        started = time.perf_counter()
        self.start()
        deadline = time.monotonic() + self.seconds
        pages: dict[int, PageResult] = {}
        versions: list[str] = []
        left: list[int] = []  # pages a process died on
        parts = slices(page_count, self._processes)
        await asyncio.gather(
            *(
                self._read_slice(engine, pdf_path, page_count, part, deadline, pages, versions, left)
                for part in parts
            )
        )
        if len(pages) < page_count:
            self.pages_to_ocr()
        log.info(
            "text_pass",
            engine=engine,
            pages=page_count,
            read=len(pages),
            processes=len(parts),
            died_on=left,
            out_of_time=time.monotonic() >= deadline,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return ReadPages(pages, versions[0] if versions else "")

    async def _read_slice(
        self,
        engine: str,
        pdf_path: Path,
        page_count: int,
        part: tuple[int, int],
        deadline: float,
        pages: dict[int, PageResult],
        versions: list[str],
        left: list[int],
    ) -> None:
        """Read pages [start, stop). When PDFium kills the process on a page, that page is left to
        the workers (they fail it alone) and the rest of the slice is read again, until the
        file's MAX_DEATHS-th death, after which only the pages before it are; any other failure
        leaves the slice's pages to the workers. No page is begun after the deadline."""
        loop = asyncio.get_running_loop()
        todo = [part]
        while todo and time.monotonic() < deadline:
            start, stop = todo.pop()
            try:
                read, version = await loop.run_in_executor(
                    self._pool, read_text_pages, engine, str(pdf_path), page_count, start, stop, deadline
                )
            except OcrProcessDiedError as exc:
                page = exc.context.get("page")
                if isinstance(page, int) and start < page <= stop and len(left) < MAX_DEATHS:
                    left.append(page)
                    # the pages before it, read once already; after it, unless that was the last death
                    after = (page, stop) if len(left) < MAX_DEATHS else (stop, stop)
                    todo += [r for r in ((start, page - 1), after) if r[0] < r[1]]
                    continue
                log.info("text_pass_pages_left", pages=f"{start + 1}-{stop}", error_code=exc.code)
                continue
            except OCRError as exc:  # over a limit: the workers read these pages, and say why
                log.info("text_pass_pages_left", pages=f"{start + 1}-{stop}", error_code=exc.code)
                continue
            versions.append(version)
            pages.update((result.page_number, result) for result in read if result is not None)

    @property
    def _processes(self) -> int:
        assert self._pool is not None
        return self._pool.processes

    async def cut(
        self, pdf_path: Path, ranges: list[PageRange], directory: Path
    ) -> list[tuple[PageRange, Path]]:
        """The file cut into its chunks' PDFs in `directory` (app.pdf.split), in an OCR process:
        under its memory limit, not in the process that plans. ObjectsTooLargeError when the cut
        needs more than OCR_PROCESS_MEMORY_MB (PDFium copies every object a page reaches)."""
        started = time.perf_counter()
        self.start()
        loop = asyncio.get_running_loop()
        try:
            pieces = await loop.run_in_executor(
                self._pool, cut_to_files, str(pdf_path), ranges, str(directory)
            )
        except (OcrProcessDiedError, MemoryError):
            raise ObjectsTooLargeError(
                "cutting the PDF into chunks needs more memory than an OCR process may have "
                f"({self.settings.ocr_process_memory_mb} MiB, OCR_PROCESS_MEMORY_MB)"
            ) from None
        duration_ms = round((time.perf_counter() - started) * 1000, 1)
        log.info("pdf_cut_apart", path=str(pdf_path), chunks=len(ranges), duration_ms=duration_ms)
        return [(page_range, Path(piece)) for page_range, piece in pieces]

    def pages_to_ocr(self) -> None:
        """Say that a file being planned has pages to OCR (on_pages_to_ocr)."""
        if self.on_pages_to_ocr is not None:
            self.on_pages_to_ocr()

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(stop_ocr_pool, pool)
