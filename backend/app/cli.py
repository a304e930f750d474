"""The `chunk-ocr` command."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from app.core.config import Settings, load_settings
from app.core.errors import OCRError
from app.core.logging import configure_logging


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chunk-ocr", description="Chunked, crash-safe OCR of large PDFs.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    db = commands.add_parser("db", help="database schema")
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    migrate = db_commands.add_parser(
        "migrate", help="apply supabase/migrations to DATABASE_URL (a second run is a no-op)"
    )
    migrate.add_argument(
        "--dir", type=Path, default=None, help="migrations directory (default: supabase/migrations)"
    )
    migrate.add_argument(
        "--plain-postgres",
        action="store_true",
        help="first create stand-ins for Supabase's roles, auth and storage schemas "
        "(for a PostgreSQL that is not a Supabase project)",
    )
    return parser


async def _db_migrate(settings: Settings, args: argparse.Namespace) -> int:
    from app.db.migrations import migrate

    dsn = settings.database_url
    plain = bool(args.plain_postgres)
    if dsn is None:
        from app.embedded import start_postgres

        dsn = start_postgres(settings.data_dir).dsn
        plain = True  # our own embedded server is never a Supabase project
    applied = await migrate(dsn, args.dir, plain_postgres=plain)
    if applied:
        for migration in applied:
            print(f"applied {migration.version}_{migration.name}")
    else:
        print("database is up to date")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
        configure_logging(settings.log_level)
        if args.command == "db" and args.db_command == "migrate":
            return asyncio.run(_db_migrate(settings, args))
    except OCRError as exc:
        print(f"chunk-ocr: error: {exc}", file=sys.stderr)
        return 2 if not exc.retryable else 1
    except KeyboardInterrupt:
        return 130
    return 2  # pragma: no cover - argparse rejects unknown commands first


if __name__ == "__main__":
    sys.exit(main())
