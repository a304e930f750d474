"""The `chunk-ocr` command.

Errors reach the terminal as one line (`chunk-ocr: error: ...`), never a
traceback. Exit codes (ExitCode): 0 success, 1 a document failed or a service
was unreachable (try again), 2 bad input or configuration, 3 `run` finished
but some pages could not be read (their text is missing from the output).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import UUID

from app.core.errors import OCRError
from app.engines.forkserver import start_forkserver
from app.engines.specs import ENGINE_SPECS
from app.local.exit_codes import ExitCode

if TYPE_CHECKING:
    from app.core.config import Settings

# What this module imports is what `run` loads before it starts its forkserver (main): the
# settings, the logging, asyncio and the rest are imported after, while the server imports the
# engines on the other core.
ENGINES = tuple(ENGINE_SPECS)
_LANG_HELP = (
    "the document's language, tesseract's codes joined by +: rus, eng+deu (default: OCR_LANGUAGE, eng)"
)


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
    run.add_argument(
        "--out",
        type=Path,
        default=Path("."),
        help="directory for <stem>.txt, <stem>.json and <stem>.ocr.pdf (default: the current directory)",
    )
    run.add_argument(
        "--output",
        dest="outputs",
        type=_outputs,
        default=DEFAULT_OUTPUTS,
        metavar="LIST",
        help=(
            "files to write, comma-separated from txt, json, pdf (default: txt,json). pdf is the searchable "
            "PDF: the original with an invisible text layer over each OCR'd word; it is built only when "
            "asked for, as it is a whole copy of the input"
        ),
    )
    run.add_argument("--engine", choices=ENGINES, default=None, help="OCR engine (default: OCR_ENGINE, auto)")
    run.add_argument("--lang", dest="language", default=None, metavar="LANG", help=_LANG_HELP)
    run.add_argument("--chunk-pages", type=_positive, default=None, help="pages per chunk (default: by size)")
    run.add_argument(
        "--ocr-processes",
        "--workers",  # the older name
        dest="ocr_processes",
        type=_positive,
        default=None,
        metavar="N",
        help="OCR processes, in one local worker (default: OCR_PROCESSES, else one per core)",
    )
    run.add_argument("--matter", type=UUID, default=None, help="matter id (default: a shared CLI matter)")
    run.add_argument("--json", action="store_true", help="print a machine-readable summary")

    submit = commands.add_parser("submit", help="plan, split and enqueue a PDF; print its document id")
    submit.add_argument("pdf", type=Path, metavar="PDF")
    submit.add_argument("--engine", choices=ENGINES, default=None)
    submit.add_argument("--lang", dest="language", default=None, metavar="LANG", help=_LANG_HELP)
    submit.add_argument("--chunk-pages", type=_positive, default=None)
    submit.add_argument("--matter", type=UUID, default=None)

    commands.add_parser(
        "worker",
        help="run an arq worker (as `arq app.worker.WorkerSettings`; with neither DATABASE_URL nor "
        "REDIS_URL set, on the embedded servers `submit` uses)",
    )

    serve = commands.add_parser("serve", help="the HTTP API (uvicorn) on the services the other commands use")
    serve.add_argument(
        "--host", default=os.environ.get("HOST", "127.0.0.1"), help="default: HOST or 127.0.0.1"
    )
    serve.add_argument(
        "--port", type=_positive, default=os.environ.get("PORT", "8000"), help="default: PORT or 8000"
    )

    dev_user = commands.add_parser(
        "dev-user",
        help="local development: a user in a matter and a token for the HTTP API (prints shell exports)",
    )
    dev_user.add_argument("--email", default="dev@example.com", help="the user (created if new)")
    dev_user.add_argument("--matter", default="dev", help="the matter's name (created if new)")
    dev_user.add_argument("--role", choices=("owner", "member", "viewer"), default="owner")
    dev_user.add_argument("--hours", type=float, default=24.0, help="token lifetime (default: 24)")
    dev_user.add_argument("--json", action="store_true", help="print JSON instead of shell exports")

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

    result = commands.add_parser("result", help="print a completed document's result (checksum verified)")
    result.add_argument("document_id", metavar="DOC_ID")
    result.add_argument(
        "--format",
        choices=("txt", "json", "pdf"),
        default="txt",
        help="default: txt; pdf is the searchable PDF (with --out, or stdout redirected to a file)",
    )
    result.add_argument(
        "--out", type=Path, default=None, help="write <name>.txt or <name>.json into this directory instead"
    )

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


def _usable_engine(name: str, language: str) -> str:
    """Build the engine once here, so a missing binary or credentials is one line, not a dead worker."""
    from app.engines.registry import get_engine

    get_engine(name, language)
    return name


def _usable_language(engine: str, language: str) -> str:
    """Well formed and, for an engine that reads with tesseract, installed here: otherwise one
    line and exit 2, before any server or worker starts."""
    from app.core.languages import check_language
    from app.engines.specs import engine_spec

    check_language(language)
    if engine_spec(engine).tesseract_languages:
        from app.engines.languages import require_languages

        require_languages(language)
    return language


OUTPUTS = ("txt", "json", "pdf")
DEFAULT_OUTPUTS = ("txt", "json")


def _outputs(value: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [part for part in chosen if part not in OUTPUTS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"{value!r}: give one or more of {', '.join(OUTPUTS)}, comma-separated"
        )
    return chosen


def _stop_on_sigterm() -> None:
    """SIGTERM (`timeout`, `docker stop`, systemd, a cancelled CI job) stops `run` as Ctrl-C does:
    the running chunks get the grace period, what is left is said in one line and handed back
    uncounted, and the exit code is 130. It had ended the process at once, its chunks leased
    until the stale sweep failed them, each an attempt spent.

    asyncio.run's own Ctrl-C handler is taken for SIGTERM too, so a second signal cuts the wait
    short as a second Ctrl-C does. Where it installed none (SIGINT ignored: a job started in the
    background by a script), SIGTERM cancels the main task."""
    import asyncio
    import signal

    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not signal.default_int_handler:
        signal.signal(signal.SIGTERM, handler)
        return
    task = asyncio.current_task()
    if task is not None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)


async def _run(settings: Settings, args: argparse.Namespace, started: float) -> int:
    _stop_on_sigterm()
    with importing():
        engine = _usable_engine(args.engine or settings.ocr_engine, args.language)
        from app.local.run import print_report, run_pdfs
        from app.local.stack import open_stack

    stack = await open_stack(
        settings.model_copy(
            update={
                "ocr_engine": engine,
                "ocr_language": args.language,
                "searchable_pdf": "pdf" in args.outputs,
            }
        )
    )
    try:
        report = await run_pdfs(
            stack,
            list(args.pdfs),
            out_dir=args.out,
            outputs=args.outputs,
            engine=engine,
            language=args.language,
            chunk_pages=args.chunk_pages,
            ocr_processes=args.ocr_processes,
            matter_id=args.matter,
            show_progress=sys.stderr.isatty() and not args.json,
            t_start=started,
        )
    finally:
        await stack.close()
    try:
        print_report(report, as_json=args.json)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader stopped reading; the outputs are written
        _discard_stdout()
    except OSError as exc:  # a full disk behind `> file`, say
        _discard_stdout()
        print(f"chunk-ocr: error: cannot print the summary: {exc.strerror or exc}", file=sys.stderr)
        return report.exit_code if report.exit_code is not ExitCode.OK else ExitCode.FAILED
    return report.exit_code


def _discard_stdout() -> None:
    """What is left to print goes nowhere: the interpreter's flush at exit would fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


async def _submit(settings: Settings, args: argparse.Namespace) -> int:
    from app.local.documents import submit

    engine = _usable_engine(args.engine or settings.ocr_engine, args.language)
    print(
        await submit(
            settings,
            args.pdf,
            engine=engine,
            language=args.language,
            chunk_pages=args.chunk_pages,
            matter=args.matter,
        )
    )
    return 0


async def _status(settings: Settings, args: argparse.Namespace) -> int:
    from app.local.documents import status

    await status(settings, args.document_id, as_json=args.json)
    return 0


async def _result(settings: Settings, args: argparse.Namespace) -> int:
    from app.local.documents import result

    await result(settings, args.document_id, out_dir=args.out, fmt=args.format)
    return 0


async def _retry(settings: Settings, args: argparse.Namespace) -> int:
    from app.local.documents import retry

    retried = await retry(settings, args.document_id)
    print(f"{len(retried.chunks)} chunk(s) of {retried.document_id} queued again")
    return 0


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    import asyncio

    from app.local.serve import serve
    from app.local.stack import resolve_services

    serve(asyncio.run(resolve_services(settings)), args.host, args.port)
    return 0


async def _dev_user(settings: Settings, args: argparse.Namespace) -> int:
    from app.local.dev import create_dev_user, refuse_in_production, with_dev_secret
    from app.local.stack import open_stack

    refuse_in_production(settings, "dev-user")
    stack = await open_stack(settings)
    try:
        matter_id = await stack.documents.matter_named(args.matter)
        user = await create_dev_user(
            with_dev_secret(stack.settings),
            email=args.email,
            matter_id=matter_id,
            matter_name=args.matter,
            role=args.role,
            hours=args.hours,
        )
    finally:
        await stack.close()
    if args.json:
        body = {
            "userId": str(user.user_id),
            "email": user.email,
            "matterId": str(user.matter_id),
            "matterName": user.matter_name,
            "role": user.role,
            "token": user.token,
            "expiresInSeconds": user.expires_in_seconds,
        }
        print(json.dumps(body))
        return 0
    print(f"export CHUNK_OCR_MATTER={user.matter_id}")
    print(f"export CHUNK_OCR_TOKEN={user.token}")
    print(
        f"chunk-ocr dev-user: {user.email} is {user.role} of matter {user.matter_name!r}; "
        f"the token is valid for {args.hours:g} h",
        file=sys.stderr,
    )
    return 0


def _check_inputs(pdfs: list[Path]) -> None:
    """Before any server starts: every file exists, and no two would write the same output."""
    from app.core.errors import InvalidInputError

    seen: dict[str, Path] = {}
    for pdf in pdfs:
        if not pdf.is_file():
            raise InvalidInputError(f"{pdf}: no such file" if not pdf.exists() else f"{pdf}: not a file")
        if (other := seen.setdefault(pdf.stem, pdf)) is not pdf:
            raise InvalidInputError(f"{other} and {pdf} would both be written to {pdf.stem}.txt; rename one")


def _check_out_dir(out: Path) -> None:
    """Before any server starts: the output directory exists (made now if need be) and this user
    may write in it. Found unusable only once the OCR is done, hours of work were lost."""
    from app.core.errors import InvalidInputError

    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InvalidInputError(f"--out {out}: not a directory") from None
    except OSError as exc:
        raise InvalidInputError(f"--out {out}: cannot be made ({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise InvalidInputError(f"--out {out}: not writable by this user")


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
    """The worker, on the services `submit` uses: with nothing configured, the embedded servers
    (an embedded server that goes away, the worker starts again)."""
    import asyncio

    revivers = {}
    if settings.redis_url is None or (settings.database_url is None and not settings.supabase_configured):
        from app.local.stack import embedded_notice, resolve_services

        services = asyncio.run(resolve_services(settings))
        if notice := embedded_notice(services):
            print(f"chunk-ocr worker: {notice}", file=sys.stderr)
        settings = services.settings  # with the embedded servers' URLs
        _keep.append(services)  # its embedded servers live as long as the worker does
        revivers = services.revivers()
    from app.worker import run

    run(settings, revivers=revivers)
    return 0


_keep: list[object] = []  # the embedded servers a worker runs on live as long as it does


@contextmanager
def importing() -> Iterator[None]:
    """Import without the cyclic garbage collector, then freeze what was imported.

    Importing makes a great many objects and almost no garbage: the collections that import
    triggered were about a tenth of the start's CPU (0.41 against 0.37 s for `run`'s modules,
    alone on two cores), and every later full collection scanned the modules again. Frozen, they
    are left out of every collection for the rest of the process (as the forkserver's are,
    app.engines._forkserver_loaded)."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            _check_inputs(args.pdfs)
            _check_out_dir(args.out)
            # The forkserver first, before this process imports the rest: the OCR processes (and
            # the planner's text pass) are forked from it, and its imports run on the other core
            # meanwhile.
            start_forkserver()
        with importing():
            import asyncio

            from app.core.config import load_settings
            from app.core.logging import configure_logging

        settings = load_settings()
        # Commands a person runs print their own one-line results; structured logs are for
        # workers and for whoever asks for them with LOG_LEVEL.
        quiet = args.command not in ("worker", "serve") and "LOG_LEVEL" not in os.environ
        configure_logging("WARNING" if quiet else settings.log_level)
        match args.command:
            case "run":
                args.language = _usable_language(
                    args.engine or settings.ocr_engine, args.language or settings.ocr_language
                )
                args.ocr_processes = args.ocr_processes or settings.ocr_process_count
                try:
                    return asyncio.run(_run(settings, args, started))
                except asyncio.CancelledError:  # SIGTERM with SIGINT ignored (_stop_on_sigterm)
                    return ExitCode.INTERRUPTED
            case "serve":
                return _serve(settings, args)
            case "dev-user":
                return asyncio.run(_dev_user(settings, args))
            case "result":
                if args.out is not None:
                    _check_out_dir(args.out)
                return asyncio.run(_result(settings, args))
            case "submit":
                args.language = _usable_language(
                    args.engine or settings.ocr_engine, args.language or settings.ocr_language
                )
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
        from app.core.filenames import terminal_line  # a file's name may be in it

        print(terminal_line(f"chunk-ocr: error: {exc}"), file=sys.stderr)
        return ExitCode.FAILED if exc.retryable else ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    return ExitCode.BAD_INPUT  # pragma: no cover - argparse refuses unknown commands first


def entry() -> int:
    """The `chunk-ocr` command (and `python -m app.cli`): main, then an exit that skips the
    interpreter's last garbage collection over every object the imports made. That collection
    took about 0.2 s of CPU on this code's modules, at the end of every command and of every
    worker, while nothing it could free outlives the process. Exit still runs the atexit
    handlers and flushes the standard streams; only objects held in reference cycles go
    unfinalized, and this code closes what it opens."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # `chunk-ocr status ID | head`: the reader went away
        _discard_stdout()
        code = ExitCode.FAILED
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(entry())
