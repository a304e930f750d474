"""A PostgREST stand-in at the HTTP level, answering from the real test database.

supabase-py talks HTTP to it through respx, exactly as it would to a Supabase
project: the same URLs, query syntax, JSON bodies and headers. Requests are
answered the way PostgREST answers them - an RPC runs the named SQL function
with named arguments (404 PGRST202 when no function has that name and those
argument names), table requests become SQL - and database errors come back as
PostgREST error bodies with its status codes. So the Supabase repository is
tested against the real SQL contract, not against canned responses.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import asyncpg
import httpx

SUPABASE_URL = "https://project-ref.supabase.co"
SERVICE_ROLE_KEY = "test-service-role-key.not-a-placeholder"
_TABLES = frozenset({"documents", "document_ocr_chunks", "matters", "matter_members"})
_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")

# PostgREST's SQLSTATE -> HTTP status (docs.postgrest.org, "Errors").
_STATUS_BY_SQLSTATE = {"23505": 409, "23503": 409, "42501": 401, "42883": 404, "42P01": 404}


@dataclass
class Call:
    method: str
    path: str
    params: list[tuple[str, str]]
    headers: httpx.Headers
    body: Any


@dataclass
class FakePostgrest:
    pool: asyncpg.Pool
    calls: list[Call] = field(default_factory=list)
    fail_next: list[httpx.Response] = field(default_factory=list)  # injected outages, served first

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        path = request.url.path.removeprefix("/rest/v1/")
        self.calls.append(
            Call(request.method, path, parse_qsl(request.url.query.decode()), request.headers, body)
        )
        if self.fail_next:
            return self.fail_next.pop(0)
        try:
            if path.startswith("rpc/"):
                return await self._rpc(path.removeprefix("rpc/"), body or {})
            return await self._table(request.method, path, self.calls[-1].params, body)
        except asyncpg.PostgresError as exc:
            status = _STATUS_BY_SQLSTATE.get(exc.sqlstate, 400)
            error = {"code": exc.sqlstate, "message": str(exc), "details": exc.detail, "hint": exc.hint}
            return httpx.Response(status, json=error)

    async def _rpc(self, function: str, args: dict[str, Any]) -> httpx.Response:
        signature = await self.pool.fetchrow(
            """
            select p.proretset, p.prorettype::regtype::text as returns,
                   coalesce(p.proargnames[1:p.pronargs], '{}') as names,
                   coalesce((select array_agg(t::regtype::text order by i)
                               from unnest(p.proargtypes::oid[]) with ordinality as a(t, i)), '{}') as types,
                   p.pronargdefaults
              from pg_proc p
             where p.pronamespace = 'public'::regnamespace and p.proname = $1
            """,
            function,
        )
        names: list[str] = list(signature["names"]) if signature else []
        required = names[: len(names) - signature["pronargdefaults"]] if signature else []
        if signature is None or not set(args) <= set(names) or not set(required) <= set(args):
            return httpx.Response(
                404,
                json={
                    "code": "PGRST202",
                    "message": f"Could not find the function public.{function}({', '.join(sorted(args))})",
                    "details": "Searched for the function with the given argument names",
                    "hint": None,
                },
            )
        typed = dict(zip(names, signature["types"], strict=True))
        arguments = ", ".join(
            f"{name} => ($1::jsonb -> '{name}')"
            if typed[name] == "jsonb"
            else f"{name} => ($1::jsonb ->> '{name}')::{typed[name]}"
            for name in args
        )
        call = f"public.{function}({arguments})"
        if signature["proretset"]:
            sql = f"select coalesce(jsonb_agg(to_jsonb(r)), '[]'::jsonb) from {call} r"
        else:
            sql = f"select to_jsonb({call})"
        result = await self.pool.fetchval(sql, json.dumps(args))
        body = "null" if result is None else result  # a function returning NULL answers JSON null
        return httpx.Response(200, content=body.encode(), headers={"content-type": "application/json"})

    async def _table(
        self, method: str, table: str, params: list[tuple[str, str]], body: Any
    ) -> httpx.Response:
        assert table in _TABLES, table
        where, values, order, limit = [], [], [], None
        for key, value in params:
            if key == "select":
                assert value == "*", value
            elif key == "order":
                for part in value.split(","):
                    column, _, direction = part.partition(".")
                    assert _IDENT.match(column)
                    order.append(f"t.{column} {'desc' if direction == 'desc' else 'asc'}")
            elif key == "limit":
                limit = int(value)
            else:
                assert _IDENT.match(key), key
                operator, _, operand = value.partition(".")
                if operator == "eq":
                    values.append(operand)
                    where.append(f"t.{key}::text = ${len(values)}")
                elif operator == "in":
                    values.append([v.strip('"') for v in operand.strip("()").split(",")])
                    where.append(f"t.{key}::text = any(${len(values)}::text[])")
                else:
                    raise AssertionError(f"operator {operator} is not used by the repository")
        condition = f" where {' and '.join(where)}" if where else ""
        aggregate = "select coalesce(jsonb_agg(to_jsonb(w)), '[]'::jsonb) from w"
        if method == "GET":
            sql = f"select t.* from public.{table} t{condition}"
            sql += f" order by {', '.join(order)}" if order else ""
            sql += f" limit {limit}" if limit is not None else ""
            result = await self.pool.fetchval(f"with w as ({sql}) {aggregate}", *values)
        elif method == "POST":
            records = body if isinstance(body, list) else [body]
            # only the columns the client sent: the others take their defaults, as with PostgREST
            columns = sorted({c for r in records for c in r})
            assert all(_IDENT.match(c) for c in columns)
            listed = ", ".join(columns)
            sql = (
                f"insert into public.{table} ({listed}) select {listed} "
                f"from jsonb_populate_recordset(null::public.{table}, $1) returning *"
            )
            result = await self.pool.fetchval(f"with w as ({sql}) {aggregate}", json.dumps(records))
        elif method == "PATCH":
            assert all(_IDENT.match(c) for c in body)
            sets = ", ".join(f"{c} = r.{c}" for c in body)
            n = len(values) + 1
            sql = (
                f"update public.{table} t set {sets} "
                f"from jsonb_populate_record(null::public.{table}, ${n}) r{condition} returning t.*"
            )
            result = await self.pool.fetchval(f"with w as ({sql}) {aggregate}", *values, json.dumps(body))
        elif method == "DELETE":
            await self.pool.execute(f"delete from public.{table} t{condition}", *values)
            return httpx.Response(204)
        else:
            raise AssertionError(method)
        return httpx.Response(200, content=result.encode(), headers={"content-type": "application/json"})
