-- Faults that happen every week: a double start, a merge run twice, an engine
-- silently swapped. Three additions, each enforced here rather than in workers:
--
-- 1. The engine is the document's and travels with every chunk row, so a
--    worker runs what was asked (or fails the chunk engine_unavailable).
-- 2. Starting a document is one atomic step: its chunk rows and its move to
--    processing happen in one statement under the document's row lock, and a
--    second start is refused with SQLSTATE OC002 (409 in the API).
-- 3. Finalize (the merge) holds a lease on the document, fenced like a chunk's
--    by (document id, worker id, finalize attempt): one merge at a time, and
--    the sweep re-enqueues only a merge whose lease expired.

-- 1. The chunk's engine ----------------------------------------------------------

alter table public.document_ocr_chunks
    add column if not exists engine text check (engine is null or length(engine) between 1 and 64);

update public.document_ocr_chunks c
   set engine = d.engine
  from public.documents d
 where c.document_id = d.id
   and c.engine is null;

-- Every writer gets the document's engine without naming it (ocr_create_chunks
-- predates the column and still inserts without it).
create or replace function public.ocr_chunk_engine_from_document()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if new.engine is null then
        select d.engine into new.engine from public.documents d where d.id = new.document_id;
    end if;
    return new;
end;
$$;

drop trigger if exists document_ocr_chunks_engine on public.document_ocr_chunks;
create trigger document_ocr_chunks_engine before insert on public.document_ocr_chunks
    for each row execute function public.ocr_chunk_engine_from_document();

alter table public.document_ocr_chunks alter column engine set not null;

-- 2. Starting a document, atomically ----------------------------------------------
-- Locks the document row, so concurrent starts queue here and every one after
-- the first finds the document already processing. Returns no row when the
-- document does not exist.

create or replace function public.ocr_start_document(
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
    return query select * from public.ocr_create_chunks(p_document_id, p_chunks, p_max_attempts);
    update public.documents
       set ocr_status = 'processing',
           ocr_started_at = coalesce(ocr_started_at, now()),
           error_message = null
     where id = p_document_id;
end;
$$;

-- 3. The finalize lease ---------------------------------------------------------------

alter table public.documents
    add column if not exists finalize_worker_id text
        check (finalize_worker_id is null or length(finalize_worker_id) between 1 and 200),
    add column if not exists finalize_attempt integer not null default 0 check (finalize_attempt >= 0),
    add column if not exists finalize_heartbeat_at timestamptz;

-- Take the merge of a document whose chunks have all completed, unless a live
-- lease holds it. A completed document may be taken too: that is a repair
-- (its merged result went missing or stopped verifying).
create or replace function public.ocr_claim_finalize(
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

create or replace function public.ocr_heartbeat_finalize(
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

-- Write the merged result and complete the document, under the lease.
create or replace function public.ocr_complete_finalize(
    p_document_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_result_storage_path text,
    p_result_checksum text
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
               error_message = null,
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

-- Give the lease up: after a retryable error (the next finalize may start at
-- once) or, with p_failed_message, after a permanent one: the document fails,
-- a completed one too (its merged result is gone and cannot be rebuilt, so it
-- needs a person; left completed, every read would ask for the repair again).
create or replace function public.ocr_release_finalize(
    p_document_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_failed_message text default null
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
           error_message = coalesce(left(p_failed_message, 4000), error_message)
     where id = p_document_id
       and finalize_worker_id = p_worker_id
       and finalize_attempt = p_attempt;
    return found;
end;
$$;

-- What the sweep re-enqueues: merges nobody holds (or whose holder stopped
-- heartbeating), never one that is running; and repairs of completed
-- documents whose holder stopped heartbeating before it finished.
drop function if exists public.ocr_documents_ready_to_merge(integer);
create or replace function public.ocr_documents_ready_to_merge(
    p_limit integer default 100,
    p_lease_seconds double precision default 90
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
     order by d.updated_at
     limit p_limit;
$$;

-- Grants: as for the other lease functions, workers (service role) only.
revoke execute on function
    public.ocr_start_document(uuid, jsonb, integer),
    public.ocr_claim_finalize(uuid, text, double precision),
    public.ocr_heartbeat_finalize(uuid, text, integer),
    public.ocr_complete_finalize(uuid, text, integer, text, text),
    public.ocr_release_finalize(uuid, text, integer, text),
    public.ocr_documents_ready_to_merge(integer, double precision)
    from public, anon, authenticated;
grant execute on function
    public.ocr_start_document(uuid, jsonb, integer),
    public.ocr_claim_finalize(uuid, text, double precision),
    public.ocr_heartbeat_finalize(uuid, text, integer),
    public.ocr_complete_finalize(uuid, text, integer, text, text),
    public.ocr_release_finalize(uuid, text, integer, text),
    public.ocr_documents_ready_to_merge(integer, double precision)
    to service_role;
