"""`chunk-ocr run`: OCR PDFs end to end on this machine: a real arq worker and OCR processes."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from uuid import UUID

from app.core.config import Settings
from app.core.errors import InvalidInputError, OCRError, RepositoryUnavailableError
from app.core.filenames import terminal_line
from app.local.documents import as_user_file
from app.local.exit_codes import ExitCode
from app.local.private_run import PrivateRun
from app.local.stack import LocalStack, cli_matter
from app.local.workers import InlineWorker, run_log_path
from app.models.document import Document, DocumentStatus, ProgressStatus
from app.models.ocr_chunk import ChunkStatus
from app.models.results import MergedResult
from app.pdf.inspect import check_pdf_header
from app.services.documents import Documents, DocumentStatusReport
from app.services.planner import StartedDocument

_SHOWN_FAILURES = 3  # failed pages named on the warning line; the JSON lists them all


class WorkerStoppedError(OCRError):
    """The command's worker ended before its documents did, not by an error of theirs. Retryable:
    what was done is kept, and the command run again takes up the rest (exit 1, not 2)."""

    code = "worker_stopped"
    retryable = True


@dataclass
class RunReport:
    documents: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one line per file refused

    @property
    def exit_code(self) -> ExitCode:
        """The worst outcome: a file refused, then a document failed, then pages missing."""
        statuses = {d["status"] for d in self.documents}
        if self.errors:
            return ExitCode.BAD_INPUT
        if statuses - {ProgressStatus.COMPLETED, ProgressStatus.COMPLETED_WITH_ERRORS}:
            return ExitCode.FAILED
        if ProgressStatus.COMPLETED_WITH_ERRORS in statuses:
            return ExitCode.PAGES_MISSING
        return ExitCode.OK


async def run_pdfs(
    stack: LocalStack,
    pdfs: list[Path],
    *,
    out_dir: Path,
    engine: str,
    language: str,
    outputs: Sequence[str] = ("txt", "json"),
    chunk_pages: int | None,
    ocr_processes: int,
    matter_id: UUID | None,
    show_progress: bool,
    t_start: float | None = None,
) -> RunReport:
    """OCR the PDFs on one local worker, in this process, with `ocr_processes` OCR processes;
    each document is planned for that many processes.

    For an engine whose text-layer pages are read at planning (auto, text-layer), the worker
    starts only once a page needs OCR: a born-digital file is read and merged without one."""
    report = RunReport()
    t_start = t_start if t_start is not None else time.perf_counter()
    worker_settings = stack.settings.model_copy(
        update={
            "ocr_engine": engine,
            "ocr_language": language,
            "ocr_processes": ocr_processes,
            "worker_max_jobs": ocr_processes + 1,
        }
    )
    private = PrivateRun.open(stack)  # its worker and the fleet's keep out of each other's documents
    log_path = run_log_path(stack.settings.data_dir)
    workers = _Workers(worker_settings, log_path, private.run_id, stack.revivers)
    if not stack.reader.reads(engine):  # the worker starts (OCR processes) while the PDFs are cut
        workers.ensure()
    else:  # the text pass's processes start while the first PDF is inspected
        stack.reader.start(warm=True)
    stack.reader.on_pages_to_ocr = workers.ensure  # as soon as the text pass finds one
    try:
        matter = await cli_matter(stack, matter_id)
        return await _run(
            stack,
            private.documents,
            pdfs,
            workers,
            report,
            matter,
            t_start,
            out_dir=out_dir,
            outputs=outputs,
            engine=engine,
            language=language,
            chunk_pages=chunk_pages,
            ocr_processes=ocr_processes,
            show_progress=show_progress,
        )
    finally:
        stack.reader.on_pages_to_ocr = None
        try:
            if workers.worker is not None:
                await workers.worker.stop()
        finally:
            await private.close()


@dataclass
class _Workers:
    """The local worker, started once (on the event loop), when first needed."""

    settings: Settings
    log_path: Path
    run_id: str  # the run whose private queue and documents it works on (PrivateRun)
    revivers: dict[str, Callable[[], None]] = field(default_factory=dict)  # LocalStack.revivers
    worker: InlineWorker | None = None

    def ensure(self) -> None:
        if self.worker is None:
            self.worker = InlineWorker.start(
                self.settings, self.log_path, run_id=self.run_id, revivers=self.revivers
            )


async def _run(
    stack: LocalStack,
    documents: Documents,
    pdfs: list[Path],
    workers: _Workers,
    report: RunReport,
    matter: UUID,
    t_start: float,
    *,
    out_dir: Path,
    outputs: Sequence[str],
    engine: str,
    language: str,
    chunk_pages: int | None,
    ocr_processes: int,
    show_progress: bool,
) -> RunReport:
    started: list[tuple[Path, StartedDocument, float]] = []
    read_earlier: dict[UUID, int] = {}  # pages of a document taken up again that an earlier run read
    for pdf in pdfs:
        t0 = t_start if not started else time.perf_counter()
        try:
            check_pdf_header(pdf)  # before resume reads the whole file for its checksum
            doc = await documents.resume(
                pdf, matter_id=matter, engine=engine, language=language, searchable="pdf" in outputs
            )
            if doc is not None:
                read_earlier[doc.document.id] = _pages_read(doc)
                _say(_going_on(pdf, doc), file=sys.stderr)
            else:
                doc = await documents.submit(
                    pdf,
                    matter_id=matter,
                    engine=engine,
                    language=language,
                    chunk_pages=chunk_pages,
                    workers=ocr_processes,
                )
        except InvalidInputError as exc:
            report.errors.append(f"{pdf}: {exc}")
            _say(f"chunk-ocr: {pdf}: {exc}", file=sys.stderr)
            continue
        except asyncio.CancelledError:  # Ctrl-C while a file is planned
            left = [(done_pdf, done.document.id) for done_pdf, done, _ in started]
            _say(_left_unfinished(left, planning=pdf), file=sys.stderr)
            raise
        for warning in doc.info.warnings:
            _say(f"chunk-ocr: {pdf}: warning: {warning}", file=sys.stderr)
        started.append((pdf, doc, t0))
    if not started:
        return report
    if any(s.document.ocr_status is not DocumentStatus.COMPLETED for _, s, _ in started):
        # a page to OCR, or a merge left to a worker
        workers.ensure()

    try:
        finished = await _wait(stack, [s for _, s, _ in started], workers.worker, show_progress)
    except asyncio.CancelledError:  # Ctrl-C: say what is left, and how it goes on
        _say(_left_unfinished([(pdf, doc.document.id) for pdf, doc, _ in started]), file=sys.stderr)
        raise
    if workers.worker is not None:  # nothing left for it: it shuts down while the outputs are written
        workers.worker.request_stop()

    await asyncio.to_thread(out_dir.mkdir, parents=True, exist_ok=True)
    for pdf, doc, t0 in started:
        document = finished[doc.document.id]
        seconds = time.perf_counter() - t0
        entry: dict[str, Any] = {
            "file": str(pdf),
            "document_id": str(document.id),
            "status": document.progress_status.value,
            "pages": document.page_count,
            "language": document.language,
            "chunks": len(doc.chunks),
            "seconds": round(seconds, 3),
            "pages_per_second": round(document.page_count / seconds, 3) if seconds else None,
        }
        if document.id in read_earlier:
            entry["pages_read_earlier"] = read_earlier[document.id]
        if document.ocr_status is DocumentStatus.COMPLETED:
            merged = await stack.documents.result(document)
            entry |= {
                "mean_confidence": merged.mean_confidence,
                "low_confidence_pages": list(merged.low_confidence_pages),
                "failed_pages": [f.model_dump() for f in merged.failed_pages],
            }
            try:
                entry |= await _write_outputs(stack, pdf, document, merged, out_dir, outputs)
            except OSError as exc:  # a full disk, say: the result itself is stored, and says where
                entry["status"] = "not_written"
                entry["error"] = f"cannot write to {out_dir}: {exc.strerror or exc}"
                _say(
                    f"chunk-ocr: {pdf}: {entry['error']}; the result is stored: "
                    f"chunk-ocr result {document.id} --out DIR",
                    file=sys.stderr,
                )
                report.documents.append(entry)
                continue
            if merged.failed_pages:
                _say(f"chunk-ocr: {pdf}: warning: {_missing_pages(merged)}", file=sys.stderr)
            if engine == "text-layer" and (blank := _without_text(merged)):
                _say(f"chunk-ocr: {pdf}: warning: {blank}", file=sys.stderr)
        else:
            entry["error"] = document.error_message
            _say(f"chunk-ocr: {pdf}: OCR failed: {document.error_message}", file=sys.stderr)
        report.documents.append(entry)
    if workers.worker is not None and any(d["status"] != "completed" for d in report.documents):
        _say(f"chunk-ocr: the worker's log: {workers.worker.log_path}", file=sys.stderr)
    return report


async def _write_outputs(
    stack: LocalStack,
    pdf: Path,
    document: Document,
    merged: MergedResult,
    out_dir: Path,
    outputs: Sequence[str],
) -> dict[str, str]:
    """The files asked for, as <stem>.txt/.json/.pdf in out_dir; their paths for the report."""
    written: dict[str, str] = {}
    if "txt" in outputs:
        txt = out_dir / f"{pdf.stem}.txt"
        await asyncio.to_thread(txt.write_text, merged.text(), encoding="utf-8")
        written["text_path"] = str(txt)
    if "json" in outputs:
        js = out_dir / f"{pdf.stem}.json"
        await asyncio.to_thread(js.write_bytes, merged.to_bytes())
        written["json_path"] = str(js)
    if "pdf" in outputs:
        target = out_dir / f"{pdf.stem}.ocr.pdf"
        if merged.searchable_pdf is None:  # no page needed OCR: the original is its own searchable PDF
            await asyncio.to_thread(shutil.copyfile, pdf, target)
        else:
            await stack.documents.searchable_pdf_file(document, merged.searchable_pdf, target)
        await asyncio.to_thread(as_user_file, target)
        written["pdf_path"] = str(target)
    return written


def _without_text(merged: MergedResult) -> str | None:
    """With --engine text-layer, which reads no image: the pages that gave no text (scans, most
    likely), which OCR would read. None when every page has text."""
    blank = [p.page_number for p in merged.pages if p.error is None and not p.text.strip()]
    if not blank:
        return None
    shown = ", ".join(map(str, blank[:_SHOWN_FAILURES])) + (", ..." if len(blank) > _SHOWN_FAILURES else "")
    return (
        f"{len(blank)} of {merged.page_count} pages have no text layer (pages {shown}); "
        "if they are scanned, --engine auto or tesseract reads them"
    )


def _pages_read(doc: StartedDocument) -> int:
    return sum(c.page_end - c.page_start + 1 for c in doc.chunks if c.status is ChunkStatus.COMPLETED)


def _going_on(pdf: Path, doc: StartedDocument) -> str:
    """One line for a file whose document a stopped run left under way: it goes on."""
    return (
        f"chunk-ocr: {pdf}: going on with {doc.document.id}, which a run that stopped left under way "
        f"({_pages_read(doc)} of {doc.document.page_count} pages read)"
    )


def _left_unfinished(documents: list[tuple[Path, UUID]], planning: Path | None = None) -> str:
    """One line for a run stopped by Ctrl-C: its documents stay queued, not lost; a file stopped
    while it was planned may have been queued (its planning undoes what it wrote only up to the
    creation of its chunks), and running it again goes on with it if so."""
    named = ", ".join(f"{pdf.name} ({document_id})" for pdf, document_id in documents[:_SHOWN_FAILURES])
    more = f" and {len(documents) - _SHOWN_FAILURES} more" if len(documents) > _SHOWN_FAILURES else ""
    planned = f"{planning.name} was being planned" if planning is not None else ""
    if not documents:
        return f"chunk-ocr: interrupted: {planned}; `chunk-ocr run` it again goes on with it if it was queued"
    return (
        f"chunk-ocr: interrupted: {named}{more} left queued{'; ' + planned if planned else ''}; "
        "a `chunk-ocr worker` finishes them (then `chunk-ocr result ID`), or `chunk-ocr run` the files "
        "again goes on with them"
    )


def _missing_pages(merged: MergedResult) -> str:
    """One line: how many pages could not be read, and each one's reason (the first few)."""
    failed = merged.failed_pages
    shown = "; ".join(f"page {f.page_number}: {f.code}" for f in failed[:_SHOWN_FAILURES])
    more = f"; {len(failed) - _SHOWN_FAILURES} more in the JSON" if len(failed) > _SHOWN_FAILURES else ""
    first = failed[0]
    return (
        f"{len(failed)} of {merged.page_count} pages could not be read and have no text ({shown}{more}); "
        f"page {first.page_number}: {first.message}"
    )


async def _wait(
    stack: LocalStack, docs: list[StartedDocument], worker: InlineWorker | None, show_progress: bool
) -> dict[UUID, Document]:
    """Wait until every document is completed or failed, drawing a progress bar on a terminal. A
    database that stops answering is waited for, as the worker waits for it (one line says so,
    one more when it is back): the OCR goes on meanwhile, and its results are recorded after."""
    total_pages = sum(d.document.page_count for d in docs)
    total_chunks = sum(len(d.chunks) for d in docs)
    finished: dict[UUID, DocumentStatusReport] = {}  # a finished document is not asked again
    outage = _Outage()
    with _progress_bar(show_progress, total_pages, total_chunks) as show:
        while len(finished) < len(docs):
            try:
                pages = chunks = 0
                for d in docs:
                    doc_id = d.document.id
                    report = finished.get(doc_id) or await stack.documents.status(doc_id, with_failed=False)
                    if report.finished:
                        finished[doc_id] = report
                    pages += report.progress.pages_completed
                    chunks += report.progress.completed
            except RepositoryUnavailableError as exc:
                outage.failed(exc)
            else:
                outage.over()
                show(pages, chunks)
            if len(finished) == len(docs):
                break
            if worker is None and outage.since is not None:  # read at planning, asked in an outage
                await asyncio.sleep(outage.delay())
                continue
            if worker is None or not worker.alive():
                failure = worker.failure() if worker is not None else None
                if isinstance(failure, OCRError):
                    raise failure
                raise WorkerStoppedError(
                    "the worker stopped before the documents finished"
                    + (f" ({type(failure).__name__}: {failure})" if failure is not None else "")
                    + "; run the command again to go on where it stopped"
                )
            # asked again as each job ends (the last chunk's merge ends a document), else every
            # tenth of a second for the progress bar (spaced out in an outage)
            await worker.next_job_end(outage.delay())
    return {doc_id: report.document for doc_id, report in finished.items()}


@dataclass
class _Outage:
    """The database's outage as `run` sees it: said once on stderr when it starts and once when it
    ends; its polls spaced out, up to a second apart."""

    since: float | None = None
    failures: int = 0

    def failed(self, error: RepositoryUnavailableError) -> None:
        self.failures += 1
        if self.since is None:
            self.since = time.monotonic()
            _say(f"chunk-ocr: {error}; waiting for the database (Ctrl-C stops)", file=sys.stderr)

    def over(self) -> None:
        if self.since is not None:
            _say(
                f"chunk-ocr: the database answers again after {time.monotonic() - self.since:.0f} s",
                file=sys.stderr,
            )
        self.since, self.failures = None, 0

    def delay(self) -> float:
        return min(1.0, 0.1 * 2**self.failures) if self.since is not None else 0.1


@contextmanager
def _progress_bar(shown: bool, total_pages: int, total_chunks: int) -> Iterator[Callable[[int, int], None]]:
    """What shows (pages, chunks) completed: a bar on a terminal, else nothing. rich's progress
    module is imported only for the bar (it is about 0.03 s of the command's start)."""
    if not shown:
        yield lambda pages, chunks: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("pages  {task.fields[chunks]} chunks"),
        TimeElapsedColumn(),
        transient=False,
    )
    with progress:
        task = progress.add_task("OCR", total=total_pages, chunks=f"0/{total_chunks}")
        yield lambda pages, chunks: progress.update(task, completed=pages, chunks=f"{chunks}/{total_chunks}")


def print_report(report: RunReport, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"documents": report.documents, "errors": report.errors}, indent=2))
        return
    for d in report.documents:
        if "mean_confidence" in d and "error" not in d:  # completed, and its outputs written
            low, failed = d["low_confidence_pages"], d["failed_pages"]
            _say(
                f"{d['file']}: {d['pages']} pages in {d['chunks']} chunks, {d['seconds']:.1f} s "
                f"({d['pages_per_second']:.2f} pages/s), mean confidence {d['mean_confidence']:.2f}"
                + (f", {len(low)} low-confidence pages" if low else "")
                + (f", {len(failed)} pages could not be read" if failed else "")
                + " -> "
                + ", ".join(d[key] for key in ("text_path", "json_path", "pdf_path") if key in d)
            )


def _say(line: str, file: TextIO | None = None) -> None:
    """Print one line, a file's name in it made safe for a terminal (terminal_line)."""
    print(terminal_line(line), file=file if file is not None else sys.stdout)
