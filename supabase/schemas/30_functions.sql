-- Every ocr_* function the service calls. The repository (backend/app/db/repository.py)
-- makes each database call as one of these, by name with named arguments, over asyncpg
-- or PostgREST RPC alike. Only the service role may call them (40_access.sql), except
-- ocr_chunk_progress, which members may call too.
--
-- The lease protocol: every state change a worker makes is one of these functions,
-- atomic, deciding with the database's clock (now()). The lease token is
-- (chunk id, worker_id, attempt_count); heartbeat, complete and fail act only while the
-- row is still `processing` under that token, and say whether they did (a row / true)
-- or not (no row / false): a zombie's late write changes nothing.
--
-- The hot-path functions are PL/pgSQL rather than SQL: a SQL function that modifies
-- data is never inlined and, before PostgreSQL 18, is planned again on every call,
-- while PL/pgSQL keeps each statement's plan for the session.

-- Documents and matters --------------------------------------------------------------

create function public.ocr_create_document(
    p_matter_id uuid,
    p_filename text,
    p_page_count integer,
    p_file_sha256 text,
    p_id uuid default null,
    p_source_path text default null,
    p_engine text default null,
    p_language text default null
)
returns setof public.documents
language sql
set search_path = ''
as $$
    insert into public.documents
        (id, matter_id, filename, source_path, page_count, file_sha256, engine, language)
    values (coalesce(p_id, gen_random_uuid()), p_matter_id, p_filename, p_source_path, p_page_count,
            p_file_sha256, coalesce(p_engine, 'auto'), coalesce(p_language, 'eng'))
    returning *;
$$;

create function public.ocr_get_document(p_document_id uuid)
returns setof public.documents
language sql
stable
set search_path = ''
as $$
    select * from public.documents where id = p_document_id;
$$;

-- The document a stopped `chunk-ocr run` left under way for a file: the newest of the matter
-- with its SHA-256, engine and language whose OCR is under way.
create function public.ocr_unfinished_document(
    p_matter_id uuid,
    p_file_sha256 text,
    p_engine text,
    p_language text
)
returns setof public.documents
language sql
stable
set search_path = ''
as $$
    select *
      from public.documents
     where matter_id = p_matter_id
       and file_sha256 = p_file_sha256
       and engine = p_engine
       and language = p_language
       and ocr_status = 'processing'
     order by created_at desc
     limit 1;
$$;

-- The number of documents removed (0 or 1): a function returning void has no JSON answer.
create function public.ocr_delete_document(p_document_id uuid)
returns integer
language sql
set search_path = ''
as $$
    with removed as (delete from public.documents where id = p_document_id returning 1)
    select count(*)::integer from removed;
$$;

-- The oldest matter with this name, created when there is none (for command-line use).
create function public.ocr_get_or_create_matter(p_name text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_id uuid;
begin
    perform pg_advisory_xact_lock(hashtext('ocr_get_or_create_matter:' || p_name));
    select id into v_id from public.matters where name = p_name order by created_at limit 1;
    if v_id is null then
        insert into public.matters (name) values (p_name) returning id into v_id;
    end if;
    return v_id;
end;
$$;

-- What a document's status must be given its chunks. completed is set only by the
-- merge (ocr_complete_finalize), so it is never undone here.
create function public.ocr_refresh_document_status(p_document_id uuid)
returns text
language plpgsql
set search_path = ''
as $$
declare
    v_movable integer;
    v_stuck integer;
    v_status text;
begin
    select count(*) filter (
               where status in ('pending', 'processing')
                  or (status = 'failed' and coalesce(error_retryable, false)
                      and attempt_count < max_attempts)),
           count(*) filter (
               where status = 'failed'
                 and not (coalesce(error_retryable, false) and attempt_count < max_attempts))
      into v_movable, v_stuck
      from public.document_ocr_chunks
     where document_id = p_document_id;

    update public.documents d
       set ocr_status = case
               when v_movable = 0 and v_stuck > 0 then 'failed'
               else 'processing'
           end,
           error_message = case
               when v_movable = 0 and v_stuck > 0
                   then format('%s chunk(s) failed and cannot be retried automatically', v_stuck)
               else null
           end,
           ocr_started_at = coalesce(d.ocr_started_at, now())
     where d.id = p_document_id
       and d.ocr_status <> 'completed'
       and (v_movable > 0 or v_stuck > 0)
    returning d.ocr_status into v_status;

    if v_status is null then
        select ocr_status into v_status from public.documents where id = p_document_id;
    end if;
    return v_status;
end;
$$;

-- Starting a document -----------------------------------------------------------------

-- Create the chunk rows of one document in one statement.
-- p_chunks: [{"chunk_index": 0, "page_start": 1, "page_end": 10,
--             "input_storage_path": "...", "input_checksum": "...", "matter_id": "..."?}, ...]
create function public.ocr_create_chunks(
    p_document_id uuid,
    p_chunks jsonb,
    p_max_attempts integer default 3
)
returns setof public.document_ocr_chunks
language sql
set search_path = ''
as $$
    insert into public.document_ocr_chunks
        (matter_id, document_id, chunk_index, page_start, page_end, input_storage_path, input_checksum,
         max_attempts)
    select coalesce((c ->> 'matter_id')::uuid, d.matter_id),
           d.id,
           (c ->> 'chunk_index')::integer,
           (c ->> 'page_start')::integer,
           (c ->> 'page_end')::integer,
           c ->> 'input_storage_path',
           c ->> 'input_checksum',
           p_max_attempts
      from public.documents d
     cross join lateral jsonb_array_elements(p_chunks) as c
     where d.id = p_document_id
    returning *;
$$;

-- Start a document in one atomic step: its chunk rows and its move to processing,
-- under the document's row lock, so concurrent starts queue here and every one after
-- the first is refused with SQLSTATE OC002 (409 in the API). No row when the document
-- does not exist. A chunk the planner read (its text layer; the element names its stored
-- result) is created completed in the same step, as one attempt held by 'planner'.
create function public.ocr_start_document(
    p_document_id uuid,
    p_chunks jsonb,
    p_max_attempts integer default 3
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
declare
    v_status text;
begin
    select ocr_status into v_status from public.documents where id = p_document_id for update;
    if not found then
        return;
    end if;
    if v_status <> 'pending'
       or exists (select 1 from public.document_ocr_chunks where document_id = p_document_id) then
        raise exception 'OCR of document % has already started', p_document_id
            using errcode = 'OC002',
                  detail = json_build_object('document_id', p_document_id, 'status', v_status)::text;
    end if;
    perform public.ocr_create_chunks(p_document_id, p_chunks, p_max_attempts);
    with read as (
        select (c ->> 'chunk_index')::integer as chunk_index
          from jsonb_array_elements(p_chunks) as c
         where c ->> 'result_storage_path' is not null
    )
    update public.document_ocr_chunks k
       set status = 'processing',
           attempt_count = 1,
           worker_id = 'planner',
           processing_started_at = now(),
           heartbeat_at = now()
      from read
     where k.document_id = p_document_id
       and k.chunk_index = read.chunk_index;
    update public.document_ocr_chunks k
       set status = 'completed',
           result_storage_path = c ->> 'result_storage_path',
           result_checksum = c ->> 'result_checksum',
           processing_completed_at = now()
      from jsonb_array_elements(p_chunks) as c
     where k.document_id = p_document_id
       and k.chunk_index = (c ->> 'chunk_index')::integer
       and c ->> 'result_storage_path' is not null;
    update public.documents
       set ocr_status = 'processing',
           ocr_started_at = coalesce(ocr_started_at, now()),
           error_message = null
     where id = p_document_id;
    return query
        select * from public.document_ocr_chunks
         where document_id = p_document_id
         order by chunk_index;
end;
$$;

-- Run reservations (a `chunk-ocr run` keeps its documents to its own worker) ----------------

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

-- The chunk lease ---------------------------------------------------------------------

-- Claim one chunk by id. A chunk that is not pending, not yet due, or locked by a
-- concurrent claim yields no row.
create function public.ocr_claim_chunk(p_chunk_id uuid, p_worker_id text)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
begin
    return query
        with target as (
            select id
              from public.document_ocr_chunks
             where id = p_chunk_id
               and status = 'pending'
               and next_attempt_at <= now()
               for update skip locked
        )
        update public.document_ocr_chunks c
           set status = 'processing',
               attempt_count = c.attempt_count + 1,
               worker_id = p_worker_id,
               processing_started_at = now(),
               heartbeat_at = now(),
               processing_completed_at = null
          from target
         where c.id = target.id
        returning c.*;
end;
$$;

-- The fair claim: what every chunk job calls. A job claims the chunk this function
-- picks, not necessarily the chunk it names (each due pending chunk has its own job, so
-- there are as many jobs as chunks to claim; a job that finds nothing is a no-op):
--
--   1. the matter with the fewest chunks being processed now;
--   2. in it, the document with the fewest chunks being processed now;
--   3. among equals, the document whose oldest due chunk has waited longest;
--   4. in that document, its oldest due chunk, lowest index first.
--
-- So a huge document cannot starve a small one submitted after it, and two large
-- documents share the workers evenly. Rows other claimers hold are skipped, so N
-- claimers never wait on each other. Cost: a few index probes per document with due
-- chunks (a loose index scan finds the documents; in-flight counts stop at 64, beyond
-- which the longest wait decides). p_document_id keeps the claim within one document.
-- p_run_id keeps it to the documents that are for that run, null to the fleet's
-- (ocr_document_is_for's rule, with the reservations read once per claim into an array rather
-- than once per waiting document: 16 claimers over 10 documents of 1,000 chunks, bench.claims,
-- claimed 2,108 chunks a second so against 1,854, medians of four interleaved rounds).
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
    v_reserved uuid[];  -- a run's documents (p_run_id), else those some run holds now
begin
    if p_run_id is null then
        v_reserved := array(select r.document_id
                              from public.document_ocr_reservations r
                             where r.reserved_until > now());
    else
        v_reserved := array(select r.document_id
                              from public.document_ocr_reservations r
                             where r.run_id = p_run_id);
    end if;
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
           and (w.document_id = any(v_reserved)) = (p_run_id is not null)  -- in the run's, or in none held
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

-- A claim whose answer was lost: each claim is made under a holder id unique to it (the
-- worker's id and a nonce), and a worker whose claim call failed asks first for the chunk that
-- holder already holds, so a claim that committed before the connection dropped is taken up,
-- not left `processing` for the stale sweep. Processing rows are few (at most the fleet's job
-- slots) and the stale sweep's partial index lists exactly them.
create function public.ocr_held_chunk(p_worker_id text)
returns setof public.document_ocr_chunks
language sql
stable
set search_path = ''
as $$
    select *
      from public.document_ocr_chunks
     where status = 'processing'
       and worker_id = p_worker_id
     order by processing_started_at desc
     limit 1;
$$;

-- One chunk per claim: the chunk this holder already holds, else the next one claimed for it,
-- one call per holder at a time (a transaction lock on the holder id). A call its worker gave
-- up on (a database that stopped answering runs it when it wakes) and the call that replaced it
-- then lease one chunk between them, not two.
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

-- Extend the lease; false when it is lost (the worker stops and writes nothing).
create function public.ocr_heartbeat_chunk(
    p_chunk_id uuid,
    p_worker_id text,
    p_attempt integer
)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
    update public.document_ocr_chunks
       set heartbeat_at = now()
     where id = p_chunk_id
       and status = 'processing'
       and worker_id = p_worker_id
       and attempt_count = p_attempt;
    return found;
end;
$$;

-- Complete the attempt with its stored, checksummed result.
create function public.ocr_complete_chunk(
    p_chunk_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_result_storage_path text,
    p_result_checksum text
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
begin
    return query
        update public.document_ocr_chunks
           set status = 'completed',
               result_storage_path = p_result_storage_path,
               result_checksum = p_result_checksum,
               processing_completed_at = now(),
               heartbeat_at = now(),
               error_code = null,
               error_message = null,
               error_retryable = null
         where id = p_chunk_id
           and status = 'processing'
           and worker_id = p_worker_id
           and attempt_count = p_attempt
        returning *;
end;
$$;

-- Fail the attempt (retryable or not) and bring the document's status up to date.
create function public.ocr_fail_chunk(
    p_chunk_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_error_code text,
    p_error_message text,
    p_retryable boolean
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
declare
    v_row public.document_ocr_chunks;
begin
    update public.document_ocr_chunks
       set status = 'failed',
           error_code = p_error_code,
           error_message = left(p_error_message, 4000),
           error_retryable = p_retryable
     where id = p_chunk_id
       and status = 'processing'
       and worker_id = p_worker_id
       and attempt_count = p_attempt
    returning * into v_row;
    if found then
        perform public.ocr_refresh_document_status(v_row.document_id);
        return next v_row;
    end if;
end;
$$;

-- A worker that stops (SIGTERM, Ctrl-C) past its grace hands its chunk back: failed as
-- worker_stopped (retryable, due at once) under its lease token, the attempt given back
-- by raising max_attempts by one (at most 100). attempt_count stays: it is in the token.
create function public.ocr_release_chunk(
    p_chunk_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_error_message text
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
declare
    v_row public.document_ocr_chunks;
begin
    update public.document_ocr_chunks
       set status = 'failed',
           error_code = 'worker_stopped',
           error_message = left(p_error_message, 4000),
           error_retryable = true,
           max_attempts = least(max_attempts + 1, 100)
     where id = p_chunk_id
       and status = 'processing'
       and worker_id = p_worker_id
       and attempt_count = p_attempt
    returning * into v_row;
    if found then
        perform public.ocr_refresh_document_status(v_row.document_id);
        return next v_row;
    end if;
end;
$$;

-- Recovery: the stale sweep, retries, the reconciler ---------------------------------

-- Processing rows whose heartbeat is older than the threshold (read only).
create function public.ocr_detect_stale_chunks(p_threshold_seconds double precision)
returns setof public.document_ocr_chunks
language sql
stable
set search_path = ''
as $$
    select *
      from public.document_ocr_chunks
     where status = 'processing'
       and coalesce(heartbeat_at, processing_started_at)
           < now() - make_interval(secs => p_threshold_seconds)
     order by coalesce(heartbeat_at, processing_started_at);
$$;

-- Fail stale processing rows with worker_timeout (retryable, due at once on retry).
-- p_chunk_id narrows it to one row. Safe on every worker at once: rows another
-- sweeper holds are skipped, and a heartbeat that landed first makes the row no
-- longer match.
create function public.ocr_sweep_stale_chunks(
    p_threshold_seconds double precision,
    p_chunk_id uuid default null
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
declare
    v_row public.document_ocr_chunks;
    v_documents uuid[] := '{}';
begin
    for v_row in
        with stale as (
            select id
              from public.document_ocr_chunks
             where status = 'processing'
               and (p_chunk_id is null or id = p_chunk_id)
               and coalesce(heartbeat_at, processing_started_at)
                   < now() - make_interval(secs => p_threshold_seconds)
               for update skip locked
        )
        update public.document_ocr_chunks c
           set status = 'failed',
               error_code = 'worker_timeout',
               error_message = format('no heartbeat for more than %s s from worker %s (attempt %s)',
                                      p_threshold_seconds, c.worker_id, c.attempt_count),
               error_retryable = true
          from stale
         where c.id = stale.id
        returning c.*
    loop
        if not v_row.document_id = any (v_documents) then
            v_documents := v_documents || v_row.document_id;
        end if;
        return next v_row;
    end loop;
    perform public.ocr_refresh_document_status(d) from unnest(v_documents) as d;
end;
$$;

-- Seconds to wait before attempt n+1 after n attempts: exponential from the base,
-- capped, with equal jitter (half fixed, half random) so a burst of failures does not
-- come back as a burst.
create function public.ocr_backoff_seconds(
    p_attempt_count integer,
    p_base_seconds double precision,
    p_cap_seconds double precision
)
returns double precision
language sql
volatile
set search_path = ''
as $$
    select d / 2 + random() * d / 2
      from (select least(p_cap_seconds,
                         p_base_seconds * power(2, greatest(p_attempt_count - 1, 0))) as d) as x;
$$;

-- Send failed chunks back to pending. Automatic (p_force false): only rows whose error
-- is retryable and that have attempts left; worker_timeout and worker_stopped rows are
-- due at once, others after the backoff. Manual (p_force true, a person asked): every failed row of
-- the scope, due at once.
create function public.ocr_retry_failed_chunks(
    p_document_id uuid default null,
    p_base_seconds double precision default 30,
    p_cap_seconds double precision default 600,
    p_force boolean default false
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
declare
    v_row public.document_ocr_chunks;
    v_documents uuid[] := '{}';
begin
    for v_row in
        with due as (
            select id
              from public.document_ocr_chunks
             where status = 'failed'
               and (p_document_id is null or document_id = p_document_id)
               and (p_force or (coalesce(error_retryable, false) and attempt_count < max_attempts))
               for update skip locked
        )
        update public.document_ocr_chunks c
           set status = 'pending',
               next_attempt_at = case
                   when p_force or c.error_code in ('worker_timeout', 'worker_stopped') then now()
                   else now() + make_interval(
                       secs => public.ocr_backoff_seconds(c.attempt_count, p_base_seconds, p_cap_seconds))
               end
          from due
         where c.id = due.id
        returning c.*
    loop
        if not v_row.document_id = any (v_documents) then
            v_documents := v_documents || v_row.document_id;
        end if;
        return next v_row;
    end loop;
    perform public.ocr_refresh_document_status(d) from unnest(v_documents) as d;
end;
$$;

-- Pending rows due at least p_overdue_seconds ago, oldest first: what the reconciler
-- re-enqueues.
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

-- The queue as an operator watches it, in one row, for the /metrics scrape. Each count reads
-- one partial index of the live queue (pending, processing, failed rows), never the completed
-- rows, which grow with every document ever read; so completed chunks are not counted here.
--   due                 pending and claimable now: the predicate ocr_claim_next_chunk claims by
--   overdue             due for longer than p_overdue_seconds (the sweep's rescue threshold), plus
--                       failed rows the automatic retry would send back (retryable, attempts
--                       left) that have waited longer than that for it
--   oldest_due_seconds  how long the longest-waiting due chunk has been due; 0 when none is
-- due, overdue and oldest_due_seconds are the fleet's: they leave out the documents a `chunk-ocr
-- run` holds now (its own worker takes their chunks); pending, processing and failed count all.
create function public.ocr_queue_metrics(p_overdue_seconds double precision default 90)
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

-- The finalize (merge) lease ------------------------------------------------------------
-- Fenced like a chunk's by (document id, finalize_worker_id, finalize_attempt): one
-- merge of a document at a time.

-- What the sweep re-enqueues: merges nobody holds (or whose holder stopped
-- heartbeating), never one that is running; and repairs of completed documents whose
-- holder stopped heartbeating before it finished.
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

-- Take the merge of a document whose chunks have all completed, unless a live lease
-- holds it. A completed document may be taken too: that is a repair (its merged result
-- went missing or stopped verifying).
create function public.ocr_claim_finalize(
    p_document_id uuid,
    p_worker_id text,
    p_lease_seconds double precision
)
returns setof public.documents
language plpgsql
set search_path = ''
as $$
begin
    return query
        update public.documents d
           set finalize_worker_id = p_worker_id,
               finalize_attempt = d.finalize_attempt + 1,
               finalize_heartbeat_at = now()
         where d.id = p_document_id
           and d.ocr_status in ('processing', 'completed')
           and (d.finalize_worker_id is null
                or d.finalize_heartbeat_at < now() - make_interval(secs => p_lease_seconds))
           and exists (select 1 from public.document_ocr_chunks c where c.document_id = d.id)
           and not exists (
               select 1 from public.document_ocr_chunks c
                where c.document_id = d.id and c.status <> 'completed')
        returning d.*;
end;
$$;

create function public.ocr_heartbeat_finalize(
    p_document_id uuid,
    p_worker_id text,
    p_attempt integer
)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
    update public.documents
       set finalize_heartbeat_at = now()
     where id = p_document_id
       and finalize_worker_id = p_worker_id
       and finalize_attempt = p_attempt;
    return found;
end;
$$;

-- Write the merged result and complete the document, under the lease, with how many of its
-- pages could not be read (clearing why an earlier merge was put off).
create function public.ocr_complete_finalize(
    p_document_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_result_storage_path text,
    p_result_checksum text,
    p_pages_failed integer default 0
)
returns setof public.documents
language plpgsql
set search_path = ''
as $$
begin
    return query
        update public.documents
           set ocr_status = 'completed',
               result_storage_path = p_result_storage_path,
               result_checksum = p_result_checksum,
               pages_failed = p_pages_failed,
               error_message = null,
               merge_error = null,
               ocr_completed_at = case when ocr_status = 'completed'
                                       then coalesce(ocr_completed_at, now()) else now() end,
               finalize_worker_id = null,
               finalize_heartbeat_at = null
         where id = p_document_id
           and finalize_worker_id = p_worker_id
           and finalize_attempt = p_attempt
        returning *;
end;
$$;

-- Give the lease up: after a retryable error (the next finalize may start at once; with
-- p_deferred_message it is kept as merge_error) or, with p_failed_message, after a permanent
-- one: the document fails, a completed one too (its merged result is gone and cannot be
-- rebuilt, so it needs a person).
create function public.ocr_release_finalize(
    p_document_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_failed_message text default null,
    p_deferred_message text default null
)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
    update public.documents
       set finalize_worker_id = null,
           finalize_heartbeat_at = null,
           ocr_status = case when p_failed_message is not null then 'failed' else ocr_status end,
           error_message = coalesce(left(p_failed_message, 4000), error_message),
           merge_error = case when p_failed_message is not null then null
                              else coalesce(left(p_deferred_message, 4000), merge_error) end
     where id = p_document_id
       and finalize_worker_id = p_worker_id
       and finalize_attempt = p_attempt;
    return found;
end;
$$;

-- Chunk reads and writes outside the lease ------------------------------------------------

create function public.ocr_get_chunk(p_chunk_id uuid)
returns setof public.document_ocr_chunks
language sql
stable
set search_path = ''
as $$
    select * from public.document_ocr_chunks where id = p_chunk_id;
$$;

create function public.ocr_list_chunks(
    p_document_id uuid default null,
    p_status text default null,
    p_limit integer default null
)
returns setof public.document_ocr_chunks
language sql
stable
set search_path = ''
as $$
    select *
      from public.document_ocr_chunks
     where (p_document_id is null or document_id = p_document_id)
       and (p_status is null or status = p_status)
     order by document_id, chunk_index
     limit p_limit;
$$;

-- Compare-and-set: no row when the chunk was not in p_expected. A null error code or
-- message keeps what the row has.
create function public.ocr_update_chunk_status(
    p_chunk_id uuid,
    p_expected text,
    p_new text,
    p_error_code text default null,
    p_error_message text default null
)
returns setof public.document_ocr_chunks
language sql
set search_path = ''
as $$
    update public.document_ocr_chunks
       set status = p_new,
           error_code = coalesce(p_error_code, error_code),
           error_message = coalesce(p_error_message, error_message)
     where id = p_chunk_id and status = p_expected
    returning *;
$$;

create function public.ocr_set_chunk_result(
    p_chunk_id uuid,
    p_result_storage_path text,
    p_result_checksum text
)
returns setof public.document_ocr_chunks
language sql
set search_path = ''
as $$
    update public.document_ocr_chunks
       set result_storage_path = p_result_storage_path,
           result_checksum = p_result_checksum
     where id = p_chunk_id and status in ('processing', 'completed')
    returning *;
$$;

-- Progress aggregates of one document. Security invoker: an authenticated caller only
-- counts rows RLS lets them see.
create function public.ocr_chunk_progress(p_document_id uuid)
returns table (
    document_id uuid,
    total integer,
    pending integer,
    processing integer,
    completed integer,
    failed integer,
    failed_retryable integer,
    pages_total integer,
    pages_completed integer,
    first_started_at timestamptz,
    last_completed_at timestamptz
)
language sql
stable
set search_path = ''
as $$
    select p_document_id,
           count(*)::integer,
           count(*) filter (where status = 'pending')::integer,
           count(*) filter (where status = 'processing')::integer,
           count(*) filter (where status = 'completed')::integer,
           count(*) filter (where status = 'failed')::integer,
           count(*) filter (where status = 'failed' and coalesce(error_retryable, false)
                                  and attempt_count < max_attempts)::integer,
           coalesce(sum(page_end - page_start + 1), 0)::integer,
           coalesce(sum(page_end - page_start + 1) filter (where status = 'completed'), 0)::integer,
           min(processing_started_at),
           max(processing_completed_at) filter (where status = 'completed')
      from public.document_ocr_chunks
     where document_id = p_document_id;
$$;

-- Membership, for the API ------------------------------------------------------------------
-- The API connects as the service role (no RLS) and checks access itself before every
-- document route: 404 for non-members, 403 for a viewer acting.

-- Whether a user belongs to a matter.
create function public.ocr_user_is_matter_member(p_matter_id uuid, p_user_id uuid)
returns boolean
language sql
stable
set search_path = ''
as $$
    select exists (
        select 1 from public.matter_members m where m.matter_id = p_matter_id and m.user_id = p_user_id
    );
$$;

-- A user's role in a matter, or null.
create function public.ocr_user_matter_role(p_matter_id uuid, p_user_id uuid)
returns text
language sql
stable
set search_path = ''
as $$
    select m.role from public.matter_members m where m.matter_id = p_matter_id and m.user_id = p_user_id;
$$;

-- What a progress poller needs in one round trip: the document and its chunk
-- aggregates, or nothing when the document does not exist or the user is not a member
-- of its matter (the API answers 404 for both).
create function public.ocr_document_progress_for_user(p_document_id uuid, p_user_id uuid)
returns jsonb
language sql
stable
set search_path = ''
as $$
    select jsonb_build_object(
               'document', to_jsonb(d),
               'progress', (select to_jsonb(p) from public.ocr_chunk_progress(d.id) p))
      from public.documents d
     where d.id = p_document_id
       and public.ocr_user_is_matter_member(d.matter_id, p_user_id);
$$;
