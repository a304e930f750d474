-- Pages fail alone: a page that cannot be read (too large, a render error, a decompression
-- bomb, a page lost in a damaged file) is recorded as failed in its chunk's result, the chunk
-- completes, and the document completes without it. The merge counts those pages and
-- records the count here, so whoever reads the document (the progress poller, a backend)
-- sees "completed with errors" without opening the result; which pages and why are in
-- result.json (failed_pages).

alter table public.documents
    add column pages_failed integer not null default 0
        constraint documents_pages_failed_check check (pages_failed >= 0 and pages_failed <= page_count);

comment on column public.documents.pages_failed is
    'pages of the merged result that could not be read (see failed_pages in result.json); 0 when every page was read';

-- The merge records how many pages failed as it completes the document.
drop function public.ocr_complete_finalize(uuid, text, integer, text, text);

create function public.ocr_complete_finalize(
    p_document_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_result_storage_path text,
    p_result_checksum text,
    p_pages_failed integer default 0
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
               pages_failed = p_pages_failed,
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

revoke execute on function public.ocr_complete_finalize(uuid, text, integer, text, text, integer)
    from public, anon, authenticated;
grant execute on function public.ocr_complete_finalize(uuid, text, integer, text, text, integer)
    to service_role;
