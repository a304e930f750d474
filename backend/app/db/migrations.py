"""Apply supabase/migrations to a PostgreSQL database.

Applied versions are recorded in ``supabase_migrations.schema_migrations``,
the table the Supabase CLI keeps, so a database migrated here and later
pushed with ``supabase db push`` (or the other way round) agrees on what has
run. Each file runs in its own transaction under an advisory lock, so two
processes migrating at once apply each file exactly once.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from app.core.errors import ConfigurationError, RepositoryError, RepositoryUnavailableError
from app.core.logging import get_logger

log = get_logger(__name__)

_FILENAME = re.compile(r"^(?P<version>\d{14})_(?P<name>[a-z0-9_]+)\.sql$")
# Any constant works; it only has to be the same for every migrating process.
_ADVISORY_LOCK_KEY = 0x6F63725F6D6967  # "ocr_mig"


@dataclass(frozen=True, slots=True)
class Migration:
    version: str
    name: str
    path: Path

    @property
    def sql(self) -> str:
        return self.path.read_text(encoding="utf-8")


def default_migrations_dir() -> Path:
    """supabase/migrations of this checkout, else the copy packaged into the wheel."""
    here = Path(__file__).resolve()
    checkout = here.parents[3] / "supabase" / "migrations"
    if checkout.is_dir():
        return checkout
    packaged = here.parent / "migrations"
    if packaged.is_dir():
        return packaged
    raise ConfigurationError("cannot find supabase/migrations; pass the directory explicitly")


def discover(directory: Path) -> list[Migration]:
    migrations = []
    for path in sorted(directory.glob("*.sql")):
        match = _FILENAME.match(path.name)
        if match is None:
            raise ConfigurationError(
                f"migration file {path.name} is not named <14-digit timestamp>_<name>.sql"
            )
        migrations.append(Migration(match["version"], match["name"], path))
    versions = [m.version for m in migrations]
    if len(set(versions)) != len(versions):
        raise ConfigurationError(f"duplicate migration versions in {directory}")
    return migrations


async def applied_versions(conn: asyncpg.Connection) -> set[str]:
    exists = await conn.fetchval("select to_regclass('supabase_migrations.schema_migrations')")
    if exists is None:
        return set()
    rows = await conn.fetch("select version from supabase_migrations.schema_migrations")
    return {r["version"] for r in rows}


PLAIN_POSTGRES_BOOTSTRAP = Path(__file__).with_name("plain_postgres_bootstrap.sql")


async def migrate(
    dsn: str, directory: Path | None = None, *, plain_postgres: bool = False
) -> list[Migration]:
    """Apply pending migrations in version order; return the ones applied now.

    ``plain_postgres`` first creates stand-ins for what Supabase provides
    (roles, auth.uid(), storage.buckets, realtime.messages and realtime.send), for a
    database that is not a Supabase project: the embedded server, tests, a laptop's PostgreSQL.
    """
    migrations = discover(directory or default_migrations_dir())
    try:
        conn = await asyncpg.connect(dsn, statement_cache_size=0)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise RepositoryUnavailableError(f"cannot connect to the database: {exc}") from exc
    applied: list[Migration] = []
    try:
        await conn.execute("set client_min_messages = warning")
        if plain_postgres:
            async with conn.transaction():
                await conn.execute("select pg_advisory_xact_lock($1)", _ADVISORY_LOCK_KEY)
                await conn.execute(PLAIN_POSTGRES_BOOTSTRAP.read_text(encoding="utf-8"))
        missing = await conn.fetchval(
            "select string_agg(n, ', ')"
            " from unnest(array['auth.users', 'storage.buckets', 'realtime.messages']) as n"
            " where to_regclass(n) is null"
        )
        if missing:
            raise ConfigurationError(
                f"the database has no {missing}: it is not a Supabase project; "
                "use --plain-postgres to create local stand-ins"
            )
        # Under the lock too: "if not exists" is no guard against a second first run at the
        # same moment (two commands starting on a new embedded database both create the schema).
        async with conn.transaction():
            await conn.execute("select pg_advisory_xact_lock($1)", _ADVISORY_LOCK_KEY)
            await conn.execute(
                """
                create schema if not exists supabase_migrations;
                create table if not exists supabase_migrations.schema_migrations (
                    version text primary key,
                    statements text[],
                    name text
                );
                """
            )
        for migration in migrations:
            async with conn.transaction():
                await conn.execute("select pg_advisory_xact_lock($1)", _ADVISORY_LOCK_KEY)
                if migration.version in await applied_versions(conn):
                    continue
                started = time.perf_counter()
                try:
                    await conn.execute(migration.sql)
                except asyncpg.PostgresError as exc:
                    raise RepositoryError(
                        f"migration {migration.path.name} failed: {exc}", sqlstate=exc.sqlstate
                    ) from exc
                await conn.execute(
                    "insert into supabase_migrations.schema_migrations (version, name, statements)"
                    " values ($1, $2, $3)",
                    migration.version,
                    migration.name,
                    [migration.sql],
                )
                applied.append(migration)
                log.info(
                    "migration_applied",
                    version=migration.version,
                    name=migration.name,
                    duration_ms=round((time.perf_counter() - started) * 1000, 1),
                )
    finally:
        await conn.close()
    return applied
