-- A claim whose answer was lost. ocr_claim_next_chunk commits when PostgreSQL runs it; if the
-- connection then drops before the row reaches the worker (a restart, a failover, a network
-- cut), the worker cannot tell a claim that happened from one that did not. Claiming again
-- would take a second chunk and leave the first `processing` with nobody on it until the
-- stale sweep fails it (its threshold later, and a second attempt).
--
-- So each claim is made under a holder id unique to that claim (the worker's id and a nonce),
-- and a worker whose claim call failed first asks for the chunk that holder already holds.
-- Processing rows are few (at most the fleet's job slots), and the partial index of the
-- stale sweep lists exactly them, so the lookup needs no index of its own.
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

revoke execute on function public.ocr_held_chunk(text) from public, anon, authenticated;
grant execute on function public.ocr_held_chunk(text) to service_role;
