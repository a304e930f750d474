-- Autoscaling: the worker job slots the queue wants now, for an autoscaler that reads
-- PostgreSQL (docs/DEPLOY.md: KEDA's postgresql scaler, replicas = ceil(demand / slots per
-- worker)), and the role it reads it as.

-- A role with no login and no other privilege: the autoscaler logs in as a member of it and
-- reads one number. Roles are the cluster's, so it may exist already.
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
-- chunks and permanent failures never do, nor does the work of a document a `chunk-ocr run`
-- reserved (its own worker does it; the fleet's cannot claim it). Each count reads a partial
-- index of the live queue (pending, processing, failed) or the documents still processing.
create function public.ocr_scaling_demand()
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

revoke execute on function public.ocr_scaling_demand() from public, anon, authenticated;
grant usage on schema public to ocr_autoscaler;
grant execute on function public.ocr_scaling_demand() to ocr_autoscaler, service_role;
