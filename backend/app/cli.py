"""The `chunk-ocr` command.

Errors reach the terminal as one line (`chunk-ocr: error: ...`), never a
traceback. Exit codes: 0 success, 1 a document failed or a service was
unreachable (try again), 2 bad input or configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from uuid import UUID

from app.core.config import Settings, load_settings
from app.core.errors import OCRError
from app.core.logging import configure_logging
from app.local.workers import WorkerProcesses, worker_env

ENGINES = ("auto", "tesseract", "text-layer", "google-vision", "null")


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return number


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chunk-ocr", description="Chunked, crash-safe OCR of large PDFs.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="OCR PDFs end to end with local worker processes")
    run.add_argument("pdfs", nargs="+", type=Path, metavar="PDF")
    run.add_argument("--out", type=Path, default=Path("."), help="directory for <stem>.txt and <stem>.json")
    run.add_argument("--engine", choices=ENGINES, default=None, help="OCR engine (default: OCR_ENGINE, auto)")
    run.add_argument("--chunk-pages", type=_positive, default=None, help="pages per chunk (default: by size)")
    run.add_argument(
        "--workers", type=_positive, default=os.cpu_count() or 1, help="OCR processes (default: one per core)"
    )
    run.add_argument("--matter", type=UUID, default=None, help="matter id (default: a shared CLI matter)")
    run.add_argument("--json", action="store_true", help="print a machine-readable summary")

    submit = commands.add_parser("submit", help="plan, split and enqueue a PDF; print its document id")
    submit.add_argument("pdf", type=Path, metavar="PDF")
    submit.add_argument("--engine", choices=ENGINES, default=None)
    submit.add_argument("--chunk-pages", type=_positive, default=None)
    submit.add_argument("--matter", type=UUID, default=None)

    commands.add_parser("worker", help="run an arq worker (same as `arq app.worker.WorkerSettings`)")

    sample = commands.add_parser("sample", help="write a sample PDF of generated prose (for trying it out)")
    sample.add_argument("path", type=Path, metavar="OUT.pdf")
    sample.add_argument("--pages", type=_positive, default=8)
    sample.add_argument(
        "--kind",
        choices=("scanned", "born-digital"),
        default="scanned",
        help="scanned: images at 300 DPI, no text layer; born-digital: a text PDF",
    )
    sample.add_argument("--seed", type=int, default=1)

    status = commands.add_parser("status", help="print a document's OCR progress")
    status.add_argument("document_id", metavar="DOC_ID")
    status.add_argument("--json", action="store_true")

    retry = commands.add_parser("retry", help="send a document's failed chunks back to the queue")
    retry.add_argument("document_id", metavar="DOC_ID")

    db = commands.add_parser("db", help="database schema")
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    migrate = db_commands.add_parser("migrate", help="apply supabase/migrations (a second run is a no-op)")
    migrate.add_argument("--dir", type=Path, default=None, help="migrations directory")
    migrate.add_argument(
        "--plain-postgres",
        action="store_true",
        help="first create stand-ins for Supabase's roles, auth and storage schemas "
        "(for a PostgreSQL that is not a Supabase project)",
    )
    return parser


def _usable_engine(name: str) -> str:
    """Build the engine once here, so a missing binary or credentials is one line, not a dead worker."""
    from app.engines.registry import get_engine

    get_engine(name)
    return name


def _early_workers(settings: Settings, args: argparse.Namespace) -> WorkerProcesses | None:
    """With the services already running, start the worker before this process imports the rest:
    its start-up (about a second) then overlaps ours and the planning."""
    if settings.redis_url is None or (settings.database_url is None and not settings.supabase_configured):
        return None  # embedded servers: their URLs exist only once they are started
    engine = args.engine or settings.ocr_engine
    return WorkerProcesses.start(args.workers, worker_env(settings.model_copy(update={"ocr_engine": engine})))


async def _run(settings: Settings, args: argparse.Namespace, started: float) -> int:
    # The worker first: the engine check imports PDFium and PIL and runs tesseract (0.3 s here),
    # and the worker's start-up is what the first page waits for.
    processes = _early_workers(settings, args)
    try:
        engine = _usable_engine(args.engine or settings.ocr_engine)
        from app.local.run import print_report, run_pdfs
        from app.local.stack import open_stack

        stack = await open_stack(settings.model_copy(update={"ocr_engine": engine}))
    except BaseException:
        if processes is not None:
            processes.stop(grace_seconds=5)
        raise
    try:
        report = await run_pdfs(
            stack,
            list(args.pdfs),
            out_dir=args.out,
            engine=engine,
            chunk_pages=args.chunk_pages,
            workers=args.workers,
            matter_id=args.matter,
            show_progress=sys.stderr.isatty() and not args.json,
            processes=processes,
            t_start=started,
        )
    finally:
        await stack.close()
    print_report(report, as_json=args.json)
    return report.exit_code


async def _submit(settings: Settings, args: argparse.Namespace) -> int:
    from app.local.stack import cli_matter, open_stack
    from app.services.planner import start_document

    engine = _usable_engine(args.engine or settings.ocr_engine)
    stack = await open_stack(settings)
    try:
        started = await start_document(
            stack.service,
            stack.store,
            stack.queue,
            args.pdf,
            matter_id=await cli_matter(stack, args.matter),
            engine=engine,
            chunk_pages=args.chunk_pages,
        )
    finally:
        await stack.close()
    print(started.document.id)
    return 0


async def _status(settings: Settings, args: argparse.Namespace) -> int:
    from app.local.stack import open_stack

    stack = await open_stack(settings)
    try:
        document = await stack.service.get_document(args.document_id)
        progress = await stack.service.get_chunk_progress(document.id)
        failed = await stack.service.get_failed_chunks(document.id)
    finally:
        await stack.close()
    if args.json:
        body = {
            "document": document.model_dump(mode="json", by_alias=True),
            "progress": progress.model_dump(mode="json", by_alias=True) | {"percent": progress.percent},
            "failedChunks": [c.model_dump(mode="json", by_alias=True) for c in failed],
        }
        print(json.dumps(body, indent=2))
        return 0
    print(
        f"{document.filename}: {document.ocr_status.value}, "
        f"{progress.pages_completed}/{progress.pages_total} pages ({progress.percent:.1f}%), "
        f"chunks: {progress.completed} completed, {progress.processing} processing, "
        f"{progress.pending} pending, {progress.failed} failed"
    )
    for chunk in failed:
        print(
            f"  chunk {chunk.chunk_index} (pages {chunk.page_start}-{chunk.page_end}): "
            f"{chunk.error_code}: {chunk.error_message}"
        )
    return 0


async def _retry(settings: Settings, args: argparse.Namespace) -> int:
    from app.local.stack import open_stack

    stack = await open_stack(settings)
    try:
        document = await stack.service.get_document(args.document_id)
        retried = await stack.service.retry_failed_chunks(document.id, force=True)
        for chunk in retried:
            await stack.queue.enqueue_chunk(chunk.id, chunk.attempt_count + 1)
    finally:
        await stack.close()
    print(f"{len(retried)} chunk(s) of {document.id} queued again")
    return 0


async def _db_migrate(settings: Settings, args: argparse.Namespace) -> int:
    from app.db.migrations import migrate

    dsn = settings.database_url
    plain = bool(args.plain_postgres)
    if dsn is None:
        from app.embedded import start_postgres

        dsn = start_postgres(settings.data_dir).dsn
        plain = True  # our own embedded server is never a Supabase project
    applied = await migrate(dsn, args.dir, plain_postgres=plain)
    for migration in applied:
        print(f"applied {migration.version}_{migration.name}")
    if not applied:
        print("database is up to date")
    return 0


def _sample(args: argparse.Namespace) -> int:
    from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf

    args.path.parent.mkdir(parents=True, exist_ok=True)
    make = make_scanned_pdf if args.kind == "scanned" else make_born_digital_pdf
    texts = make(args.path, args.pages, args.seed)
    expected = args.path.with_suffix(".expected.txt")
    expected.write_text("\f".join(texts), encoding="utf-8")
    print(f"wrote {args.path} ({args.pages} {args.kind} pages) and its text, {expected}")
    return 0


def _worker(settings: Settings) -> int:
    from arq.worker import run_worker

    from app.worker import WorkerSettings

    run_worker(WorkerSettings)  # type: ignore[arg-type]
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
        # Commands a person runs print their own one-line results; structured logs are for
        # workers and for whoever asks for them with LOG_LEVEL.
        quiet = args.command != "worker" and "LOG_LEVEL" not in os.environ
        configure_logging("WARNING" if quiet else settings.log_level)
        match args.command:
            case "run":
                return asyncio.run(_run(settings, args, started))
            case "submit":
                return asyncio.run(_submit(settings, args))
            case "worker":
                return _worker(settings)
            case "sample":
                return _sample(args)
            case "status":
                return asyncio.run(_status(settings, args))
            case "retry":
                return asyncio.run(_retry(settings, args))
            case "db":
                return asyncio.run(_db_migrate(settings, args))
    except OCRError as exc:
        print(f"chunk-ocr: error: {exc}", file=sys.stderr)
        return 1 if exc.retryable else 2
    except KeyboardInterrupt:
        return 130
    return 2  # pragma: no cover - argparse refuses unknown commands first


if __name__ == "__main__":
    sys.exit(main())
