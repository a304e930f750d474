-- The lease protocol. Every state change a worker makes is one of these
-- functions, each a single atomic statement that decides with the database's
-- clock (now()). Workers call them through asyncpg or PostgREST RPC alike.
--
-- Lease token = (chunk id, worker_id, attempt_count). heartbeat, complete and
-- fail act only while the row is still `processing` under that token, and say
-- whether they did (a row / true) or not (no row / false): a zombie's late
-- write changes nothing.

-- Create the chunk rows of one document in one statement (so one transaction).
-- p_chunks: [{"chunk_index": 0, "page_start": 1, "page_end": 10,
--             "input_storage_path": "...", "input_checksum": "...", "matter_id": "..."?}, ...]
create or replace function public.ocr_create_chunks(
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

-- Claim one chunk by id (the arq job carries the id). A chunk that is not
-- pending, not yet due, or locked by a concurrent claim yields no row.
create or replace function public.ocr_claim_chunk(p_chunk_id uuid, p_worker_id text)
returns setof public.document_ocr_chunks
language sql
set search_path = ''
as $$
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
$$;

-- Claim the oldest due pending chunk (optionally of one document), skipping
-- rows other claimers hold, so N claimers never wait on each other.
create or replace function public.ocr_claim_next_chunk(
    p_worker_id text,
    p_document_id uuid default null
)
returns setof public.document_ocr_chunks
language sql
set search_path = ''
as $$
    with target as (
        select id
          from public.document_ocr_chunks
         where status = 'pending'
           and next_attempt_at <= now()
           and (p_document_id is null or document_id = p_document_id)
         order by next_attempt_at, created_at, chunk_index
         limit 1
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
$$;

create or replace function public.ocr_heartbeat_chunk(
    p_chunk_id uuid,
    p_worker_id text,
    p_attempt integer
)
returns boolean
language sql
set search_path = ''
as $$
    with beat as (
        update public.document_ocr_chunks
           set heartbeat_at = now()
         where id = p_chunk_id
           and status = 'processing'
           and worker_id = p_worker_id
           and attempt_count = p_attempt
        returning 1
    )
    select exists (select 1 from beat);
$$;

-- Record the stored result of the current attempt before completing, so that
-- if the worker dies between the two, the next attempt finds a result that
-- still verifies and completes without running OCR again.
create or replace function public.ocr_record_chunk_result(
    p_chunk_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_result_storage_path text,
    p_result_checksum text
)
returns boolean
language sql
set search_path = ''
as $$
    with recorded as (
        update public.document_ocr_chunks
           set result_storage_path = p_result_storage_path,
               result_checksum = p_result_checksum,
               heartbeat_at = now()
         where id = p_chunk_id
           and status = 'processing'
           and worker_id = p_worker_id
           and attempt_count = p_attempt
        returning 1
    )
    select exists (select 1 from recorded);
$$;

create or replace function public.ocr_complete_chunk(
    p_chunk_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_result_storage_path text,
    p_result_checksum text
)
returns setof public.document_ocr_chunks
language sql
set search_path = ''
as $$
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
$$;

-- What a document's status must be given its chunks. completed is set only by
-- the merge (finalize), so it is never undone here.
create or replace function public.ocr_refresh_document_status(p_document_id uuid)
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

create or replace function public.ocr_fail_chunk(
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

-- Processing rows whose heartbeat is older than the threshold (read only).
create or replace function public.ocr_detect_stale_chunks(p_threshold_seconds double precision)
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

-- Fail stale processing rows with worker_timeout (retryable, due at once on
-- retry). p_chunk_id narrows it to one row. Safe on every worker at once:
-- rows another sweeper holds are skipped, and a heartbeat that landed first
-- makes the row no longer match.
create or replace function public.ocr_sweep_stale_chunks(
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

-- Seconds to wait before attempt n+1 after n attempts: exponential from the
-- base, capped, with equal jitter (half fixed, half random) so a burst of
-- failures does not come back as a burst.
create or replace function public.ocr_backoff_seconds(
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

-- Send failed chunks back to pending. Automatic (p_force false): only rows
-- whose error is retryable and that have attempts left; worker_timeout rows
-- are due at once, others after the backoff. Manual (p_force true, a person
-- asked): every failed row of the scope, due at once.
create or replace function public.ocr_retry_failed_chunks(
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
                   when p_force or c.error_code = 'worker_timeout' then now()
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

-- Pending rows due at least p_overdue_seconds ago, oldest first: what the
-- reconciler re-enqueues.
create or replace function public.ocr_due_pending_chunks(
    p_limit integer default 1000,
    p_overdue_seconds double precision default 0
)
returns setof public.document_ocr_chunks
language sql
stable
set search_path = ''
as $$
    select *
      from public.document_ocr_chunks
     where status = 'pending'
       and next_attempt_at <= now() - make_interval(secs => p_overdue_seconds)
     order by next_attempt_at, created_at, chunk_index
     limit p_limit;
$$;

-- Progress aggregates of one document. Security invoker: an authenticated
-- caller only counts rows RLS lets them see.
create or replace function public.ocr_chunk_progress(p_document_id uuid)
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

-- Documents whose chunks have all completed but whose merge has not been
-- written yet: the reconciler enqueues their finalize job again.
create or replace function public.ocr_documents_ready_to_merge(p_limit integer default 100)
returns setof public.documents
language sql
stable
set search_path = ''
as $$
    select d.*
      from public.documents d
     where d.ocr_status = 'processing'
       and exists (select 1 from public.document_ocr_chunks c where c.document_id = d.id)
       and not exists (
           select 1 from public.document_ocr_chunks c
            where c.document_id = d.id and c.status <> 'completed')
     order by d.updated_at
     limit p_limit;
$$;

-- Set a document's OCR status, stamping start and completion with database time.
create or replace function public.ocr_set_document_status(
    p_document_id uuid,
    p_ocr_status text,
    p_result_storage_path text default null,
    p_result_checksum text default null,
    p_error_message text default null
)
returns setof public.documents
language sql
set search_path = ''
as $$
    update public.documents
       set ocr_status = p_ocr_status,
           result_storage_path = coalesce(p_result_storage_path, result_storage_path),
           result_checksum = coalesce(p_result_checksum, result_checksum),
           error_message = p_error_message,
           ocr_started_at = case when p_ocr_status = 'processing'
                                 then coalesce(ocr_started_at, now()) else ocr_started_at end,
           ocr_completed_at = case when p_ocr_status = 'completed' then now() else null end
     where id = p_document_id
    returning *;
$$;

-- The oldest matter with this name, created when there is none (for command-line use).
create or replace function public.ocr_get_or_create_matter(p_name text)
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

-- Whether a user belongs to a matter: for the API, which connects as the
-- service role (no RLS) and checks access itself before every document route.
create or replace function public.ocr_user_is_matter_member(p_matter_id uuid, p_user_id uuid)
returns boolean
language sql
stable
set search_path = ''
as $$
    select exists (
        select 1 from public.matter_members m where m.matter_id = p_matter_id and m.user_id = p_user_id
    );
$$;

-- What a progress poller needs in one round trip: the document and its chunk
-- aggregates, or nothing when the document does not exist or the user is not
-- a member of its matter (the API answers 404 for both).
create or replace function public.ocr_document_progress_for_user(p_document_id uuid, p_user_id uuid)
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
