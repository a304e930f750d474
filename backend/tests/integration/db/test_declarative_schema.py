"""supabase/schemas/ declares exactly the schema that supabase/migrations builds.

Two empty databases on the same server: one gets every migration (the project's
migrator, with the plain-PostgreSQL bootstrap first), the other the same bootstrap and
then the schema files in the order [db.migrations] schema_paths in supabase/config.toml
gives them, as the Supabase CLI reads them. Their catalogs must be identical.

What is compared, in every schema except PostgreSQL's own and supabase_migrations (the
migrator's bookkeeping): schemas and their privileges; tables, views, sequences and
indexes with owner, privileges, row level security flags and persistence; columns in
order with type, default, nullability, identity and privileges; constraints
(pg_get_constraintdef); indexes (pg_get_indexdef); functions (pg_get_functiondef:
arguments, result, language, volatility, security, settings, body) with owner and
privileges; triggers; policies with roles and expressions; views' definitions;
sequences; enums, domains and other types; extensions; default privileges; comments;
publication membership; and the rows of every table (timestamps left out), which is
how the storage bucket row counts. Privileges are compared as sets: the order of
entries in an ACL only records the order of the grants.

Not compared: roles (cluster-wide; the bootstrap creates them once for both), and the
OIDs and physical layout of anything.
"""

from __future__ import annotations

import difflib
import glob
import tomllib
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import pytest

from app.db.migrations import PLAIN_POSTGRES_BOOTSTRAP, migrate
from tests.conftest import with_database

SUPABASE_DIR = Path(__file__).resolve().parents[4] / "supabase"

# Every schema but PostgreSQL's own and the migrator's record of applied versions.
SCHEMAS_COMPARED = """
    select n.oid from pg_namespace n
     where n.nspname not in ('pg_catalog', 'information_schema', 'supabase_migrations')
       and n.nspname !~ '^pg_(toast|temp)'
"""

# category -> a query returning (key, value) rows; $1 is the array of schema oids compared.
CATALOG: dict[str, str] = {
    "schema": """
        select n.nspname, concat_ws(' ', 'owner', n.nspowner::regrole,
               'acl', array(select a::text from unnest(n.nspacl) a order by 1))
          from pg_namespace n where n.oid = any($1)
    """,
    "relation": """
        select c.oid::regclass::text,
               concat_ws(' ', 'kind', c.relkind, 'owner', c.relowner::regrole,
                         'persistence', c.relpersistence,
                         'rls', c.relrowsecurity, 'force_rls', c.relforcerowsecurity,
                         'options', c.reloptions,
                         'acl', array(select a::text from unnest(c.relacl) a order by 1))
          from pg_class c
         where c.relnamespace = any($1) and c.relkind not in ('t')
    """,
    "column": """
        select c.oid::regclass::text || '.' || a.attname,
               concat_ws(' ',
                   '#' || row_number() over (partition by c.oid order by a.attnum),
                   format_type(a.atttypid, a.atttypmod),
                   case when a.attnotnull then 'not null' end,
                   'default ' || pg_get_expr(d.adbin, d.adrelid),
                   nullif('identity ' || a.attidentity::text, 'identity '),
                   nullif('generated ' || a.attgenerated::text, 'generated '),
                   case when a.attcollation <> t.typcollation then 'collate ' || a.attcollation::regcollation end,
                   'acl', array(select x::text from unnest(a.attacl) x order by 1))
          from pg_class c
          join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
          join pg_type t on t.oid = a.atttypid
          left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
         where c.relnamespace = any($1) and c.relkind in ('r', 'p', 'v', 'm', 'f', 'c')
    """,
    "constraint": """
        select coalesce(k.conrelid::regclass::text, k.contypid::regtype::text) || '.' || k.conname,
               concat_ws(' ', pg_get_constraintdef(k.oid),
                         case when k.condeferrable then 'deferrable' end,
                         case when k.condeferred then 'initially deferred' end,
                         case when not k.convalidated then 'not valid' end)
          from pg_constraint k where k.connamespace = any($1)
    """,
    "index": """
        select i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
          from pg_index i join pg_class c on c.oid = i.indexrelid
         where c.relnamespace = any($1)
    """,
    "function": """
        select p.oid::regprocedure::text,
               concat_ws(E'\n', 'owner ' || p.proowner::regrole::text,
                         'acl ' || array(select a::text from unnest(p.proacl) a order by 1)::text,
                         case when p.prokind = 'a' then 'aggregate' else pg_get_functiondef(p.oid) end)
          from pg_proc p where p.pronamespace = any($1)
    """,
    "trigger": """
        select t.tgrelid::regclass::text || '.' || t.tgname,
               pg_get_triggerdef(t.oid) || ' enabled ' || t.tgenabled::text
          from pg_trigger t join pg_class c on c.oid = t.tgrelid
         where c.relnamespace = any($1) and not t.tgisinternal
    """,
    "policy": """
        select p.polrelid::regclass::text || '.' || p.polname,
               concat_ws(' ', 'for', p.polcmd, case when p.polpermissive then 'permissive' else 'restrictive' end,
                         'to', array(select case when r = 0 then 'public' else r::regrole::text end
                                       from unnest(p.polroles) r order by 1),
                         'using', pg_get_expr(p.polqual, p.polrelid),
                         'with check', pg_get_expr(p.polwithcheck, p.polrelid))
          from pg_policy p join pg_class c on c.oid = p.polrelid
         where c.relnamespace = any($1)
    """,
    "view": """
        select c.oid::regclass::text, pg_get_viewdef(c.oid)
          from pg_class c where c.relnamespace = any($1) and c.relkind in ('v', 'm')
    """,
    "sequence": """
        select s.seqrelid::regclass::text,
               concat_ws(' ', s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmin, s.seqmax,
                         s.seqcache, s.seqcycle,
                         (select 'owned by ' || d.refobjid::regclass || '.' || a.attname
                            from pg_depend d
                            join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
                           where d.classid = 'pg_class'::regclass and d.objid = s.seqrelid
                             and d.deptype in ('a', 'i')))
          from pg_sequence s join pg_class c on c.oid = s.seqrelid
         where c.relnamespace = any($1)
    """,
    "type": """
        select t.oid::regtype::text,
               concat_ws(' ', 'kind', t.typtype, 'owner', t.typowner::regrole,
                         'base', nullif(t.typbasetype, 0)::regtype, 'not null', t.typnotnull,
                         'default', t.typdefault,
                         'labels', (select array_agg(e.enumlabel order by e.enumsortorder)
                                      from pg_enum e where e.enumtypid = t.oid),
                         'acl', array(select a::text from unnest(t.typacl) a order by 1))
          from pg_type t
          left join pg_class c on c.oid = t.typrelid
         where t.typnamespace = any($1)
           and t.typcategory <> 'A'                 -- array types come with their element type
           and (t.typrelid = 0 or c.relkind = 'c')  -- a table's row type comes with the table
    """,
    "extension": """
        select e.extname, e.extversion || ' in ' || e.extnamespace::regnamespace from pg_extension e
    """,
    "default privileges": """
        select concat_ws(' ', d.defaclrole::regrole, d.defaclnamespace::regnamespace, d.defaclobjtype),
               array(select a::text from unnest(d.defaclacl) a order by 1)::text
          from pg_default_acl d
    """,
    "comment": """
        select pg_describe_object(d.classoid, d.objoid, d.objsubid), d.description
          from pg_description d
         where d.objoid >= 16384  -- created after initdb: not PostgreSQL's own
    """,
    "publication": """
        select p.pubname || ' ' || r.prrelid::regclass, ''
          from pg_publication_rel r join pg_publication p on p.oid = r.prpubid
    """,
}


def schema_files() -> list[Path]:
    """The schema files in the order the Supabase CLI applies them.

    Each entry of [db.migrations] schema_paths is a path or glob relative to the supabase
    directory; a glob's matches are sorted, and a file already listed is not applied again.
    """
    config = tomllib.loads((SUPABASE_DIR / "config.toml").read_text(encoding="utf-8"))
    files: list[Path] = []
    for pattern in config["db"]["migrations"]["schema_paths"]:
        for match in sorted(glob.glob(str(SUPABASE_DIR / pattern))):
            path = Path(match).resolve()
            if path not in files:
                files.append(path)
    return files


async def catalog(conn: asyncpg.Connection) -> dict[str, dict[str, str]]:
    """category -> {object: description} of everything the comparison covers."""
    schemas = [r["oid"] for r in await conn.fetch(SCHEMAS_COMPARED)]
    found: dict[str, dict[str, str]] = {}
    for category, query in CATALOG.items():
        rows = await conn.fetch(query, schemas) if "$1" in query else await conn.fetch(query)
        found[category] = {str(r[0]): str(r[1]) for r in rows}
    tables = await conn.fetch(
        "select oid::regclass::text as name from pg_class where relnamespace = any($1) and relkind in ('r', 'p')",
        schemas,
    )
    found["rows"] = {}
    for table in tables:
        # The timestamps a row gets from now() differ between any two databases.
        rows = await conn.fetch(
            f"select (to_jsonb(t) - 'created_at' - 'updated_at')::text as row from {table['name']} t"
        )
        found["rows"][table["name"]] = "\n".join(sorted(r["row"] for r in rows))
    return found


def lines(snapshot: dict[str, dict[str, str]]) -> list[str]:
    """One line per line of every description, prefixed with its category and object."""
    out = []
    for category, objects in snapshot.items():
        for key in sorted(objects):
            out += [f"{category} {key}: {line}" for line in objects[key].splitlines() or [""]]
    return out


def difference(migrated: dict[str, dict[str, str]], declared: dict[str, dict[str, str]]) -> str:
    return "\n".join(
        difflib.unified_diff(
            lines(migrated), lines(declared), "supabase/migrations", "supabase/schemas", n=2, lineterm=""
        )
    )


@asynccontextmanager
async def empty_database(server_dsn: str) -> AsyncIterator[str]:
    name = f"chunk_ocr_schema_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(server_dsn)
    try:
        await conn.execute(f'create database "{name}"')
        yield with_database(server_dsn, name)
    finally:
        await conn.execute(f'drop database if exists "{name}" with (force)')
        await conn.close()


async def apply_schema_files(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("set client_min_messages = warning")
        async with conn.transaction():
            await conn.execute(PLAIN_POSTGRES_BOOTSTRAP.read_text(encoding="utf-8"))
        for path in schema_files():
            async with conn.transaction():
                try:
                    await conn.execute(path.read_text(encoding="utf-8"))
                except asyncpg.PostgresError as exc:
                    pytest.fail(f"{path.relative_to(SUPABASE_DIR)} does not apply: {exc}")
    finally:
        await conn.close()


def test_config_lists_every_schema_file() -> None:
    listed = schema_files()
    on_disk = sorted(p.resolve() for p in (SUPABASE_DIR / "schemas").glob("*.sql"))
    assert listed == on_disk
    assert len(listed) >= 2


async def test_schema_files_declare_what_the_migrations_build(postgres_server_dsn: str) -> None:
    async with (
        empty_database(postgres_server_dsn) as migrated_dsn,
        empty_database(postgres_server_dsn) as declared_dsn,
    ):
        await migrate(migrated_dsn, plain_postgres=True)
        await apply_schema_files(declared_dsn)
        migrated_conn = await asyncpg.connect(migrated_dsn)
        declared_conn = await asyncpg.connect(declared_dsn)
        try:
            migrated, declared = await catalog(migrated_conn), await catalog(declared_conn)

            # The comparison sees the schema at all: queries that found nothing would agree too.
            claim = migrated["function"]["ocr_claim_next_chunk(text,uuid,text)"]
            assert "for update skip locked" in claim
            assert "acl {postgres=X/postgres,service_role=X/postgres}" in claim
            assert len(migrated["policy"]) == 6  # 5 on our tables, 1 on realtime.messages
            assert "authenticated=w/postgres" in migrated["column"]["documents.filename"]
            assert '"id": "ocr-chunks"' in migrated["rows"]["storage.buckets"]

            diff = difference(migrated, declared)
            if diff:
                pytest.fail(
                    "supabase/schemas/ differs from what supabase/migrations builds"
                    " ('-' migrations, '+' schema files):\n" + diff,
                    pytrace=False,
                )

            # And it would see a change: alter the declared database, one thing of each kind.
            changes = declared_conn.transaction()
            await changes.start()
            await declared_conn.execute(
                """
                alter function public.ocr_due_pending_chunks(integer, double precision, text) volatile;
                grant execute on function public.ocr_get_chunk(uuid) to authenticated;
                alter table public.documents alter column engine set default 'tesseract';
                alter table public.matters disable row level security;
                alter table public.document_ocr_chunks drop constraint document_ocr_chunks_failed_check;
                drop index public.document_ocr_chunks_failed_idx;
                drop trigger document_ocr_chunks_engine on public.document_ocr_chunks;
                alter policy documents_member_select on public.documents to authenticated, anon;
                update storage.buckets set public = true where id = 'ocr-chunks';
                comment on table public.matters is 'a group of documents';
                """
            )
            changed = await catalog(declared_conn)
            await changes.rollback()
        finally:
            await migrated_conn.close()
            await declared_conn.close()
    assert {category for category in migrated if migrated[category] != changed[category]} == {
        "function",
        "column",
        "relation",
        "constraint",
        "index",
        "trigger",
        "policy",
        "rows",
        "comment",
    }
    assert "-function ocr_get_chunk(uuid): acl {postgres=X/postgres,service_role=X/postgres}" in (
        difference(migrated, changed).splitlines()
    )
