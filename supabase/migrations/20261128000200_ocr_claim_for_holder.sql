-- One chunk per claim, whatever order a claim's calls run in.
--
-- A worker claims under a holder id unique to the claim (its id and a nonce), and a call whose
-- answer never came (a dropped connection, a database that stopped answering past the call's
-- timeout) is called again. ocr_held_chunk was asked first, then ocr_claim_next_chunk: but a
-- call the worker gave up on has not always run yet. A database that stopped answering runs
-- it when it wakes, beside the call that replaced it: both claimed, two chunks were leased to
-- one holder, and the one its worker never heard of waited, `processing`, for the stale sweep
-- and a second attempt.
--
-- ocr_claim_for_holder does both in one call, one call per holder at a time (a transaction
-- lock on the holder id): the second call waits for the first to commit, then finds the
-- chunk it leased and returns that one.
create function public.ocr_claim_for_holder(
    p_worker_id text,
    p_document_id uuid default null
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
    return query select * from public.ocr_claim_next_chunk(p_worker_id, p_document_id);
end;
$$;

revoke execute on function public.ocr_claim_for_holder(text, uuid) from public, anon, authenticated;
grant execute on function public.ocr_claim_for_holder(text, uuid) to service_role;
