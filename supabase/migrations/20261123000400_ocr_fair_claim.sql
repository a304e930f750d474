-- Fair claims: work from many documents and matters interleaves, so a huge
-- document cannot starve a small one submitted after it.
--
-- arq's queue is first in, first out, and a document's chunk jobs are enqueued
-- together: a 1-page document submitted behind a 2,000-page one used to wait for
-- every chunk of it. A chunk job now claims the chunk this function picks, not
-- necessarily the chunk it names (each due pending chunk still has its own job,
-- so there are always as many jobs as chunks to claim; a job that finds nothing
-- left is a logged no-op). The pick:
--
--   1. the matter with the fewest chunks being processed now;
--   2. in it, the document with the fewest chunks being processed now;
--   3. among equals, the document whose oldest due chunk has waited longest;
--   4. in that document, its oldest due chunk, lowest index first.
--
-- So while a large document holds every worker, the next free job slot goes to
-- the small one, and two large documents share the workers evenly.
--
-- Cost: per document with due chunks, a few index probes (a loose index scan finds
-- the documents; partial indexes count what each document and matter has in
-- flight, up to 64: beyond that, counts are equal and the longest wait decides).
-- With p_document_id the claim stays within that document, as before.

create index if not exists document_ocr_chunks_pending_by_document_idx
    on public.document_ocr_chunks (document_id, next_attempt_at, chunk_index)
    include (matter_id)
    where status = 'pending';
-- in flight per matter (its prefix) and per document of a matter (both columns)
create index if not exists document_ocr_chunks_processing_by_owner_idx
    on public.document_ocr_chunks (matter_id, document_id)
    where status = 'processing';

create or replace function public.ocr_claim_next_chunk(
    p_worker_id text,
    p_document_id uuid default null
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
