"""Migrations apply to an empty database, once; `chunk-ocr db migrate` is idempotent."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from app.core.errors import ConfigurationError
from app.db.migrations import default_migrations_dir, discover, migrate

REPO_ROOT = Path(__file__).resolve().parents[4]


async def schema_fingerprint(dsn: str) -> list[tuple[str, ...]]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            """
            select 'column', table_schema || '.' || table_name || '.' || column_name, data_type
              from information_schema.columns where table_schema in ('public', 'supabase_migrations')
            union all
            select 'function', p.oid::regprocedure::text, md5(p.prosrc)
              from pg_proc p where p.pronamespace = 'public'::regnamespace
            union all
            select 'constraint', conrelid::regclass::text || '.' || conname, pg_get_constraintdef(oid)
              from pg_constraint where connamespace = 'public'::regnamespace
            union all
            select 'policy', tablename || '.' || policyname, coalesce(qual, '') from pg_policies
            union all
            select 'migration', version, name from supabase_migrations.schema_migrations
            union all
            select 'bucket', id, public::text from storage.buckets
            order by 1, 2
            """
        )
    finally:
        await conn.close()
    return [tuple(r) for r in rows]


def run_cli(*args: str, database_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": database_url}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )


async def test_migrate_applies_everything_once(empty_database: str) -> None:
    expected = discover(default_migrations_dir())
    assert len(expected) >= 3
    applied = await migrate(empty_database, plain_postgres=True)
    assert [m.version for m in applied] == [m.version for m in expected]
    first = await schema_fingerprint(empty_database)
    assert ("bucket", "ocr-chunks", "false") in first
    assert sum(1 for r in first if r[0] == "migration") == len(expected)

    assert await migrate(empty_database, plain_postgres=True) == []
    assert await schema_fingerprint(empty_database) == first


def test_cli_db_migrate_twice(empty_database: str) -> None:
    first = run_cli("db", "migrate", "--plain-postgres", database_url=empty_database)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("applied ") == len(discover(default_migrations_dir()))
    second = run_cli("db", "migrate", "--plain-postgres", database_url=empty_database)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "database is up to date"


def test_cli_refuses_a_database_that_is_not_supabase(empty_database: str) -> None:
    result = run_cli("db", "migrate", database_url=empty_database)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "auth.users" in lines[0]
    assert "--plain-postgres" in lines[0]


def test_cli_reports_an_unreachable_database() -> None:
    result = run_cli("db", "migrate", database_url="postgresql://postgres@127.0.0.1:1/none")
    assert result.returncode == 1  # retryable: the database may come back
    assert result.stderr.strip().startswith("chunk-ocr: error: cannot connect to the database")
    assert len(result.stderr.strip().splitlines()) == 1


def test_badly_named_migration_is_refused(tmp_path: Path) -> None:
    (tmp_path / "001_init.sql").write_text("select 1;")
    with pytest.raises(ConfigurationError, match=r"001_init\.sql"):
        discover(tmp_path)


async def test_first_runs_at_the_same_moment_apply_each_migration_once(empty_database: str) -> None:
    """Two commands starting on a new database (`make serve` and `chunk-ocr worker` on a fresh
    embedded PostgreSQL) both migrate it: neither fails, and each migration is recorded once."""
    results = await asyncio.gather(
        *(migrate(empty_database, plain_postgres=True) for _ in range(8)), return_exceptions=True
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    applied = [m.version for result in results if isinstance(result, list) for m in result]
    assert sorted(applied) == sorted(m.version for m in discover(default_migrations_dir()))
    conn = await asyncpg.connect(empty_database)
    try:
        assert await conn.fetchval("select count(*) from supabase_migrations.schema_migrations") == len(
            applied
        )
    finally:
        await conn.close()
