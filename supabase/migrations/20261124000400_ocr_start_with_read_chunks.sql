-- Chunks read while planning. The planner reads the pages whose own text layer is their text
-- (engine auto or text-layer) itself, stores each such chunk's result like a worker would, and
-- names that result in the chunk's element of p_chunks (result_storage_path, result_checksum).
-- Those rows are created and completed in the same atomic step as the others, so a born-digital
-- document never puts a chunk on the queue, and workers only see pages that need OCR.
--
-- A chunk still starts pending (the state guard allows nothing else on insert) and moves
-- pending -> processing -> completed as one attempt held by 'planner', under the document's
-- row lock: no reader ever sees it in between.
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
