-- What a Supabase project provides before any migration runs (roles anon,
-- authenticated, service_role; auth.uid()/auth.jwt(); storage.buckets/objects;
-- realtime.messages, realtime.send(), realtime.topic()), so
-- supabase/migrations apply to a plain PostgreSQL 15+. Applied only by the test
-- suite and by `chunk-ocr` to its own embedded server (or with `db migrate
-- --plain-postgres`); never shipped as a migration and never needed on Supabase.

do $$
begin
    if not exists (select from pg_roles where rolname = 'anon') then
        create role anon nologin noinherit;
    end if;
    if not exists (select from pg_roles where rolname = 'authenticated') then
        create role authenticated nologin noinherit;
    end if;
    if not exists (select from pg_roles where rolname = 'service_role') then
        create role service_role nologin noinherit bypassrls;
    end if;
end
$$;

create schema if not exists auth;
create schema if not exists storage;
create schema if not exists extensions;

grant usage on schema public, auth, storage to anon, authenticated, service_role;

create table if not exists auth.users (
    id uuid primary key default gen_random_uuid(),
    email text unique,
    created_at timestamptz not null default now()
);

-- As in Supabase: the caller's identity comes from the JWT claims PostgREST
-- puts in the transaction setting request.jwt.claims.
create or replace function auth.jwt() returns jsonb
language sql stable as $$
    select coalesce(nullif(current_setting('request.jwt.claims', true), ''), '{}')::jsonb;
$$;

create or replace function auth.uid() returns uuid
language sql stable as $$
    select nullif(auth.jwt() ->> 'sub', '')::uuid;
$$;

create or replace function auth.role() returns text
language sql stable as $$
    select auth.jwt() ->> 'role';
$$;

grant execute on function auth.jwt(), auth.uid(), auth.role() to anon, authenticated, service_role;

create table if not exists storage.buckets (
    id text primary key,
    name text not null unique,
    owner uuid,
    public boolean default false,
    file_size_limit bigint,
    allowed_mime_types text[],
    created_at timestamptz default now(),
    updated_at timestamptz default now()
);

create table if not exists storage.objects (
    id uuid primary key default gen_random_uuid(),
    bucket_id text references storage.buckets (id),
    name text,
    owner uuid,
    metadata jsonb,
    created_at timestamptz default now(),
    updated_at timestamptz default now(),
    unique (bucket_id, name)
);
alter table storage.objects enable row level security;

-- Supabase Realtime's side of the database: the table Broadcast from Database writes to and the
-- functions its policies and senders call, as the Realtime server creates them in a project
-- (its tenant migrations). Realtime partitions realtime.messages by day and drops partitions
-- after three days; here one default partition holds everything and nothing reads it but tests.
create schema if not exists realtime;
grant usage on schema realtime to anon, authenticated, service_role;

create table if not exists realtime.messages (
    topic text not null,
    extension text not null,
    payload jsonb,
    event text,
    private boolean default false,
    updated_at timestamp without time zone not null default now(),
    inserted_at timestamp without time zone not null default now(),
    id uuid not null default gen_random_uuid(),
    broadcasted_at timestamp without time zone,
    constraint messages_pkey primary key (id, inserted_at)
) partition by range (inserted_at);
create table if not exists realtime.messages_default partition of realtime.messages default;
create index if not exists messages_inserted_at_topic_index
    on realtime.messages (inserted_at desc, topic)
    where extension = 'broadcast' and private is true;
-- Private channels: a client may join a topic when a policy lets its role read (receive) or
-- insert (send) a message of that topic, with realtime.topic() set to it.
alter table realtime.messages enable row level security;
grant select, insert, update on realtime.messages to anon, authenticated, service_role;

-- The channel topic being authorised: Realtime sets it (set_config('realtime.topic', ...,
-- true)) before it checks a joining client against the policies.
create or replace function realtime.topic() returns text
language sql stable as $$
    select nullif(current_setting('realtime.topic', true), '')::text;
$$;

-- Broadcast from the database: the message is a row; Realtime reads committed rows from the
-- WAL and pushes each to the clients joined to its topic that the policies let read it. As in
-- Supabase, the payload gets the message id unless it has one, the topic stays set for the
-- rest of the transaction, and a failure is a warning, never an error for the caller.
create or replace function realtime.send(
    payload jsonb, event text, topic text, private boolean default true
) returns void
language plpgsql as $$
declare
    message_id uuid := gen_random_uuid();
begin
    begin
        perform set_config('realtime.topic', topic, true);
        insert into realtime.messages (id, payload, event, topic, private, extension)
        values (message_id,
                case when payload ? 'id' then payload else jsonb_set(payload, '{id}', to_jsonb(message_id)) end,
                event, topic, private, 'broadcast');
    exception when others then
        raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
    end;
end;
$$;
-- Callers with the privilege are Supabase's administrative roles (postgres among them), not the
-- API roles: a trigger that broadcasts must run as its owner.
revoke execute on function realtime.send(jsonb, text, text, boolean) from public;
grant execute on function realtime.topic() to anon, authenticated, service_role;
