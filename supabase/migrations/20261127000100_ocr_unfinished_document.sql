-- `chunk-ocr run` of a file a stopped run left under way (Ctrl-C, a closed laptop, a worker
-- that died) goes on with that document instead of starting the file again: this finds it.
--
-- The newest document of the matter with the same file (its SHA-256), engine and language
-- whose OCR is under way. A completed document is not taken (running a file again reads it
-- again), nor a failed one (`chunk-ocr retry` sends its failed chunks back). Within a matter
-- documents are read by documents_matter_idx (matter_id, created_at desc), newest first.
-- Only the service role may call it, as every ocr_* function of the repository.

create function public.ocr_unfinished_document(
    p_matter_id uuid,
    p_file_sha256 text,
    p_engine text,
    p_language text
)
returns setof public.documents
language sql
stable
set search_path = ''
as $$
    select *
      from public.documents
     where matter_id = p_matter_id
       and file_sha256 = p_file_sha256
       and engine = p_engine
       and language = p_language
       and ocr_status = 'processing'
     order by created_at desc
     limit 1;
$$;

revoke execute on function public.ocr_unfinished_document(uuid, text, text, text) from public, anon, authenticated;
grant execute on function public.ocr_unfinished_document(uuid, text, text, text) to service_role;
