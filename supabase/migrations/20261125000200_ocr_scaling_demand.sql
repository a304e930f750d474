-- Autoscaling on the queue's real demand (docs/DEPLOY.md): one number, the worker job slots the
-- queue wants now, for an autoscaler that reads PostgreSQL (KEDA's postgresql scaler runs
-- `select public.ocr_scaling_demand()` and sets replicas = ceil(demand / slots per worker)).
--
-- The database is the source of truth: arq's queue in Redis counts deferred retries as if they
-- were due, and misses the chunks whose job Redis lost (the sweep re-enqueues them from here).
--
-- ocr_autoscaler is a role with no login and no other privilege: the autoscaler logs in as a
-- member of it (`create role keda login password '...' in role ocr_autoscaler`), reads this one
-- number and nothing else; the function is security definer, so it needs no table grant.

do $$
begin
    if not exists (select from pg_roles where rolname = 'ocr_autoscaler') then
        create role ocr_autoscaler nologin;
    end if;
end
$$;

-- How many worker job slots the queue wants now. A unit of work wants one while it is
--   due       a pending chunk whose next_attempt_at has come: what ocr_claim_next_chunk claims;
--   running   a processing chunk, whatever its heartbeat: a live lease holds a slot, and a stale
--             one needs a worker's sweep to be recovered (with no worker left, nobody sweeps);
--   retrying  a failed chunk the automatic retry sends back (retryable, attempts left): a
--             worker's sweep must do it, though it is usually done at once by the worker that
--             failed it;
--   merging   a document whose chunks have all completed and whose merge is not done (waiting
--             for its finalize job, running, or a repair of a completed document's result).
-- A pending chunk waiting out its backoff wants nothing until its time comes; completed
-- chunks and permanent failures never do. Each count reads a partial index of the live queue
-- (pending, processing, failed) or the documents still processing.
create or replace function public.ocr_scaling_demand()
returns integer
language sql
stable
security definer -- the autoscaler's role reads this number, not the tables
set search_path = ''
as $$
    select ((select count(*)
               from public.document_ocr_chunks
              where status = 'pending' and next_attempt_at <= now())
          + (select count(*) from public.document_ocr_chunks where status = 'processing')
          + (select count(*)
               from public.document_ocr_chunks
              where status = 'failed'
                and coalesce(error_retryable, false)
                and attempt_count < max_attempts)
          + (select count(*)
               from public.documents d
              where (d.ocr_status = 'processing'
                     or (d.ocr_status = 'completed' and d.finalize_worker_id is not null))
                and exists (select 1 from public.document_ocr_chunks c where c.document_id = d.id)
                and not exists (
                    select 1 from public.document_ocr_chunks c
                     where c.document_id = d.id and c.status <> 'completed')))::integer;
$$;

revoke execute on function public.ocr_scaling_demand() from public, anon, authenticated;
grant usage on schema public to ocr_autoscaler;
grant execute on function public.ocr_scaling_demand() to ocr_autoscaler, service_role;
