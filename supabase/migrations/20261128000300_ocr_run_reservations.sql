-- A `chunk-ocr run` keeps its documents to its own worker, and keeps its worker to them.
--
-- `run` starts a worker inside the command. On the same DATABASE_URL and REDIS_URL as a
-- fleet, that worker took the fleet's chunk jobs from the shared queue and claimed whatever
-- the fair claim picked, the fleet's documents included: a chunk of an engine the laptop
-- cannot build (google-vision without credentials) failed for good as engine_unavailable, and
-- a result was written to the run's store. The fleet's workers likewise claimed the run's
-- chunks, with engines and languages they may not have.
--
-- A run now reserves each document it starts or takes up again, for a while it renews as it
-- goes on. A reserved document's chunks are claimed only by claims made for that run, and
-- those claim nothing else; the sweep of the fleet leaves its due chunks and its merge to the
-- run, and the run's own sweep sees only them. A reservation that is not renewed (the run was
-- killed) lapses, and the fleet takes the document up; a run that ends releases its own.
-- Reservations are the service's alone: no user reads or writes this table.
create table public.document_ocr_reservations (
    document_id uuid primary key references public.documents (id) on delete cascade,
    run_id text not null check (length(run_id) between 1 and 200),
    reserved_until timestamptz not null
);
comment on table public.document_ocr_reservations is
    'documents a `chunk-ocr run` keeps to its own worker until reserved_until (renewed while it runs)';
create index document_ocr_reservations_run_idx on public.document_ocr_reservations (run_id);

alter table public.document_ocr_reservations enable row level security;
revoke all on public.document_ocr_reservations from public, anon, authenticated;
grant all on public.document_ocr_reservations to service_role;

-- Reserve a document for a run (a later run takes it over), until p_seconds from now.
create function public.ocr_reserve_document(
    p_document_id uuid,
    p_run_id text,
    p_seconds double precision
)
returns void
language sql
set search_path = ''
as $$
    insert into public.document_ocr_reservations (document_id, run_id, reserved_until)
    values (p_document_id, p_run_id, now() + make_interval(secs => p_seconds))
    on conflict (document_id) do update
        set run_id = excluded.run_id, reserved_until = excluded.reserved_until;
$$;

-- Renew every reservation of a run until p_seconds from now; how many it holds.
create function public.ocr_renew_reservations(p_run_id text, p_seconds double precision)
returns integer
language sql
set search_path = ''
as $$
    with renewed as (
        update public.document_ocr_reservations
           set reserved_until = now() + make_interval(secs => p_seconds)
         where run_id = p_run_id
        returning 1)
    select count(*)::integer from renewed;
$$;

-- A run that ends hands its documents back to the fleet; how many it held.
create function public.ocr_release_reservations(p_run_id text)
returns integer
language sql
set search_path = ''
as $$
    with released as (
        delete from public.document_ocr_reservations where run_id = p_run_id returning 1)
    select count(*)::integer from released;
$$;

-- Whether work of this document is for the run p_run_id (null: the fleet's workers and sweeps).
-- A run's claims and sweeps see only what it reserved, lapsed or not; the fleet's see every
-- document that no run holds now.
create function public.ocr_document_is_for(p_document_id uuid, p_run_id text)
returns boolean
language sql
stable
set search_path = ''
as $$
    select case
        when p_run_id is null then not exists (
            select 1 from public.document_ocr_reservations r
             where r.document_id = p_document_id and r.reserved_until > now())
        else exists (
            select 1 from public.document_ocr_reservations r
             where r.document_id = p_document_id and r.run_id = p_run_id)
    end;
$$;

drop function public.ocr_claim_for_holder(text, uuid);
drop function public.ocr_claim_next_chunk(text, uuid);
drop function public.ocr_due_pending_chunks(integer, double precision);
drop function public.ocr_documents_ready_to_merge(integer, double precision);

-- As before, among the documents that are for p_run_id (ocr_document_is_for).
create function public.ocr_claim_next_chunk(
    p_worker_id text,
    p_document_id uuid default null,
    p_run_id text default null
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
declare
    busy_cap constant integer := 64;  -- counted up to this many in flight; beyond it, equals
    v_document uuid;
    v_chunk uuid;
begin
    for v_document in
        -- each document with pending chunks, with its matter and its oldest pending chunk's
        -- due time: one index probe per document (the first entry of each in the index)
        with recursive waiting(document_id, matter_id, due_since) as (
            (select c.document_id, c.matter_id, c.next_attempt_at
               from public.document_ocr_chunks c
              where c.status = 'pending'
                and (p_document_id is null or c.document_id = p_document_id)
              order by c.document_id, c.next_attempt_at
              limit 1)
            union all
            select n.document_id, n.matter_id, n.next_attempt_at
              from waiting w
             cross join lateral (
                   select c.document_id, c.matter_id, c.next_attempt_at
                     from public.document_ocr_chunks c
                    where c.status = 'pending'
                      and c.document_id > w.document_id
                    order by c.document_id, c.next_attempt_at
                    limit 1) n
             where p_document_id is null
        )
        select w.document_id
          from waiting w
         where w.due_since <= now()
           and public.ocr_document_is_for(w.document_id, p_run_id)
         order by (select count(*) from (select 1
                                           from public.document_ocr_chunks c
                                          where c.matter_id = w.matter_id
                                            and c.status = 'processing'
                                          limit busy_cap) m),
                  (select count(*) from (select 1
                                           from public.document_ocr_chunks c
                                          where c.matter_id = w.matter_id
                                            and c.document_id = w.document_id
                                            and c.status = 'processing'
                                          limit busy_cap) b),
                  w.due_since,
                  w.document_id
    loop
        select c.id
          into v_chunk
          from public.document_ocr_chunks c
         where c.document_id = v_document
           and c.status = 'pending'
           and c.next_attempt_at <= now()
         order by c.next_attempt_at, c.chunk_index
         limit 1
           for update skip locked;
        if v_chunk is not null then
            return query
                update public.document_ocr_chunks c
                   set status = 'processing',
                       attempt_count = c.attempt_count + 1,
                       worker_id = p_worker_id,
                       processing_started_at = now(),
                       heartbeat_at = now(),
                       processing_completed_at = null
                 where c.id = v_chunk
                returning c.*;
            return;
        end if;
    end loop;
end;
$$;

create function public.ocr_claim_for_holder(
    p_worker_id text,
    p_document_id uuid default null,
    p_run_id text default null
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
begin
    perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('ocr_claim:' || p_worker_id, 0));
    return query select * from public.ocr_held_chunk(p_worker_id);
    if found then
        return;
    end if;
    return query select * from public.ocr_claim_next_chunk(p_worker_id, p_document_id, p_run_id);
end;
$$;

create function public.ocr_due_pending_chunks(
    p_limit integer default 1000,
    p_overdue_seconds double precision default 0,
    p_run_id text default null
)
returns setof public.document_ocr_chunks
language sql
stable
set search_path = ''
as $$
    select *
      from public.document_ocr_chunks c
     where c.status = 'pending'
       and c.next_attempt_at <= now() - make_interval(secs => p_overdue_seconds)
       and public.ocr_document_is_for(c.document_id, p_run_id)
     order by c.next_attempt_at, c.created_at, c.chunk_index
     limit p_limit;
$$;

create function public.ocr_documents_ready_to_merge(
    p_limit integer default 100,
    p_lease_seconds double precision default 90,
    p_run_id text default null
)
returns setof public.documents
language sql
stable
set search_path = ''
as $$
    select d.*
      from public.documents d
     where (d.ocr_status = 'processing'
            or (d.ocr_status = 'completed' and d.finalize_worker_id is not null))
       and (d.finalize_worker_id is null
            or d.finalize_heartbeat_at < now() - make_interval(secs => p_lease_seconds))
       and exists (select 1 from public.document_ocr_chunks c where c.document_id = d.id)
       and not exists (
           select 1 from public.document_ocr_chunks c
            where c.document_id = d.id and c.status <> 'completed')
       and public.ocr_document_is_for(d.id, p_run_id)
     order by d.updated_at
     limit p_limit;
$$;

-- The fleet's autoscaling demand leaves out what a run reserved: the fleet's workers cannot
-- claim it, and scaling up for it (or not down to zero while a laptop runs) costs for nothing.
create or replace function public.ocr_scaling_demand()
returns integer
language sql
stable
security definer -- the autoscaler's role reads this number, not the tables
set search_path = ''
as $$
    select ((select count(*)
               from public.document_ocr_chunks c
              where c.status = 'pending' and c.next_attempt_at <= now()
                and not exists (select 1 from public.document_ocr_reservations r
                                 where r.document_id = c.document_id and r.reserved_until > now()))
          + (select count(*)
               from public.document_ocr_chunks c
              where c.status = 'processing'
                and not exists (select 1 from public.document_ocr_reservations r
                                 where r.document_id = c.document_id and r.reserved_until > now()))
          + (select count(*)
               from public.document_ocr_chunks c
              where c.status = 'failed'
                and coalesce(c.error_retryable, false)
                and c.attempt_count < c.max_attempts
                and not exists (select 1 from public.document_ocr_reservations r
                                 where r.document_id = c.document_id and r.reserved_until > now()))
          + (select count(*)
               from public.documents d
              where (d.ocr_status = 'processing'
                     or (d.ocr_status = 'completed' and d.finalize_worker_id is not null))
                and exists (select 1 from public.document_ocr_chunks c where c.document_id = d.id)
                and not exists (
                    select 1 from public.document_ocr_chunks c
                     where c.document_id = d.id and c.status <> 'completed')
                and not exists (select 1 from public.document_ocr_reservations r
                                 where r.document_id = d.id and r.reserved_until > now())))::integer;
$$;

-- The queue's gauges that say whether the fleet keeps up (due, overdue, the oldest due chunk's
-- age) leave out what a run reserved, as the demand does: a laptop reading a large file on one
-- process had the fleet's alert on a chunk due for 10 minutes fire while the run went on.
create or replace function public.ocr_queue_metrics(p_overdue_seconds double precision default 90)
returns table (
    pending bigint,
    processing bigint,
    failed bigint,
    due bigint,
    overdue bigint,
    oldest_due_seconds double precision
)
language sql
stable
set search_path = ''
as $$
    select (select count(*) from public.document_ocr_chunks where status = 'pending'),
           (select count(*) from public.document_ocr_chunks where status = 'processing'),
           (select count(*) from public.document_ocr_chunks where status = 'failed'),
           (select count(*)
              from public.document_ocr_chunks c
             where c.status = 'pending' and c.next_attempt_at <= now()
               and not exists (select 1 from public.document_ocr_reservations r
                                 where r.document_id = c.document_id and r.reserved_until > now())),
           (select count(*)
              from public.document_ocr_chunks c
             where c.status = 'pending'
               and c.next_attempt_at <= now() - make_interval(secs => p_overdue_seconds)
               and not exists (select 1 from public.document_ocr_reservations r
                                 where r.document_id = c.document_id and r.reserved_until > now()))
           + (select count(*)
                from public.document_ocr_chunks c
               where c.status = 'failed'
                 and coalesce(c.error_retryable, false)
                 and c.attempt_count < c.max_attempts
                 and c.updated_at <= now() - make_interval(secs => p_overdue_seconds)
                 and not exists (select 1 from public.document_ocr_reservations r
                                 where r.document_id = c.document_id and r.reserved_until > now())),
           coalesce(extract(epoch from now() - (select min(c.next_attempt_at)
                                                  from public.document_ocr_chunks c
                                                 where c.status = 'pending' and c.next_attempt_at <= now()
                                                   and not exists (select 1 from public.document_ocr_reservations r
                                 where r.document_id = c.document_id and r.reserved_until > now()))),
                    0)::double precision;
$$;

revoke execute on function
    public.ocr_reserve_document(uuid, text, double precision),
    public.ocr_renew_reservations(text, double precision),
    public.ocr_release_reservations(text),
    public.ocr_document_is_for(uuid, text),
    public.ocr_claim_next_chunk(text, uuid, text),
    public.ocr_claim_for_holder(text, uuid, text),
    public.ocr_due_pending_chunks(integer, double precision, text),
    public.ocr_documents_ready_to_merge(integer, double precision, text)
    from public, anon, authenticated;
grant execute on function
    public.ocr_reserve_document(uuid, text, double precision),
    public.ocr_renew_reservations(text, double precision),
    public.ocr_release_reservations(text),
    public.ocr_document_is_for(uuid, text),
    public.ocr_claim_next_chunk(text, uuid, text),
    public.ocr_claim_for_holder(text, uuid, text),
    public.ocr_due_pending_chunks(integer, double precision, text),
    public.ocr_documents_ready_to_merge(integer, double precision, text)
    to service_role;
