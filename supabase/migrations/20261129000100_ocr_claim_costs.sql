-- Two costs of every claim. First, the fair claim reads the reservations once per claim.
--
-- ocr_claim_next_chunk asked ocr_document_is_for of each document with due chunks, one call
-- (one reservations probe) per waiting document on every claim. With 16 claimers over 10
-- documents of 1,000 chunks (bench.claims' load, each variant in turn, four rounds), the claim
-- ran at 1,854 a second against 2,121 with no such check at all. The documents a claim may
-- take from are now read into an array once, at its start: the run's own (p_run_id), else
-- those some run holds now, which the fleet's claims leave alone. Same rule, same answers;
-- 2,108 a second in the same rounds. The function's signature and grants are unchanged.
-- Reservations of killed runs lapse but stay, one row per document: the fleet's read of
-- the live ones goes through an index on reserved_until.
create index document_ocr_reservations_until_idx on public.document_ocr_reservations (reserved_until);

create or replace function public.ocr_claim_next_chunk(
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

-- ocr_held_chunk, which every claim asks first (ocr_claim_for_holder), looked for its holder
-- among all the chunks being processed, one by one: 0.7 ms a claim with 5,000 of them in
-- flight, 0.02 ms through this index (once the table's statistics know of them: analyzed
-- while none was in flight, the planner still scans them all).
create index document_ocr_chunks_processing_worker_idx
    on public.document_ocr_chunks (worker_id, processing_started_at)
    where status = 'processing';
