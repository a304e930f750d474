-- Queue metrics for the /metrics scrape (docs/METRICS.md): chunks by state, due and overdue
-- chunks, and the age of the oldest due chunk, read in one call that the API makes over
-- asyncpg or PostgREST RPC alike.

-- The queue as an operator watches it, in one row, for the /metrics scrape. Each count reads
-- one partial index of the live queue (pending, processing, failed rows), never the completed
-- rows, which grow with every document ever read; so completed chunks are not counted here.
--   due                 pending and claimable now: the predicate ocr_claim_next_chunk claims by
--   overdue             due for longer than p_overdue_seconds (the sweep's rescue threshold), plus
--                       failed rows the automatic retry would send back (retryable, attempts
--                       left) that have waited longer than that for it
--   oldest_due_seconds  how long the longest-waiting due chunk has been due; 0 when none is
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
              from public.document_ocr_chunks
             where status = 'pending' and next_attempt_at <= now()),
           (select count(*)
              from public.document_ocr_chunks
             where status = 'pending'
               and next_attempt_at <= now() - make_interval(secs => p_overdue_seconds))
           + (select count(*)
                from public.document_ocr_chunks
               where status = 'failed'
                 and coalesce(error_retryable, false)
                 and attempt_count < max_attempts
                 and updated_at <= now() - make_interval(secs => p_overdue_seconds)),
           coalesce(extract(epoch from now() - (select min(next_attempt_at)
                                                  from public.document_ocr_chunks
                                                 where status = 'pending' and next_attempt_at <= now())),
                    0)::double precision;
$$;

revoke execute on function public.ocr_queue_metrics(double precision) from public, anon, authenticated;
grant execute on function public.ocr_queue_metrics(double precision) to service_role;
