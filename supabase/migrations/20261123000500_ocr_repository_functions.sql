-- The last table operations of the chunk repository, as functions.
--
-- The repository (backend/app/db/repository.py) now makes every call as a call
-- of an ocr_* function with named arguments, over a connector with two
-- implementations (asyncpg, and PostgREST RPC for supabase-py). These seven were
-- still written twice, once as SQL and once as a PostgREST table query; each is
-- the statement the asyncpg repository ran, unchanged. Only the service role
-- may call them, as with the lease functions.

create or replace function public.ocr_create_document(
    p_matter_id uuid,
    p_filename text,
    p_page_count integer,
    p_file_sha256 text,
    p_id uuid default null,
    p_source_path text default null,
    p_engine text default null
)
returns setof public.documents
language sql
set search_path = ''
as $$
    insert into public.documents (id, matter_id, filename, source_path, page_count, file_sha256, engine)
    values (coalesce(p_id, gen_random_uuid()), p_matter_id, p_filename, p_source_path, p_page_count,
            p_file_sha256, coalesce(p_engine, 'auto'))
    returning *;
$$;

create or replace function public.ocr_get_document(p_document_id uuid)
returns setof public.documents
language sql
stable
set search_path = ''
as $$
    select * from public.documents where id = p_document_id;
$$;

-- The number of documents removed (0 or 1): a function returning void has no JSON answer.
create or replace function public.ocr_delete_document(p_document_id uuid)
returns integer
language sql
set search_path = ''
as $$
    with removed as (delete from public.documents where id = p_document_id returning 1)
    select count(*)::integer from removed;
$$;

create or replace function public.ocr_get_chunk(p_chunk_id uuid)
returns setof public.document_ocr_chunks
language sql
stable
set search_path = ''
as $$
    select * from public.document_ocr_chunks where id = p_chunk_id;
$$;

create or replace function public.ocr_list_chunks(
    p_document_id uuid default null,
    p_status text default null,
    p_limit integer default null
)
returns setof public.document_ocr_chunks
language sql
stable
set search_path = ''
as $$
    select *
      from public.document_ocr_chunks
     where (p_document_id is null or document_id = p_document_id)
       and (p_status is null or status = p_status)
     order by document_id, chunk_index
     limit p_limit;
$$;

-- Compare-and-set: no row when the chunk was not in p_expected. A null error
-- code or message keeps what the row has.
create or replace function public.ocr_update_chunk_status(
    p_chunk_id uuid,
    p_expected text,
    p_new text,
    p_error_code text default null,
    p_error_message text default null
)
returns setof public.document_ocr_chunks
language sql
set search_path = ''
as $$
    update public.document_ocr_chunks
       set status = p_new,
           error_code = coalesce(p_error_code, error_code),
           error_message = coalesce(p_error_message, error_message)
     where id = p_chunk_id and status = p_expected
    returning *;
$$;

create or replace function public.ocr_set_chunk_result(
    p_chunk_id uuid,
    p_result_storage_path text,
    p_result_checksum text
)
returns setof public.document_ocr_chunks
language sql
set search_path = ''
as $$
    update public.document_ocr_chunks
       set result_storage_path = p_result_storage_path,
           result_checksum = p_result_checksum
     where id = p_chunk_id and status in ('processing', 'completed')
    returning *;
$$;

revoke execute on function
    public.ocr_create_document(uuid, text, integer, text, uuid, text, text),
    public.ocr_get_document(uuid),
    public.ocr_delete_document(uuid),
    public.ocr_get_chunk(uuid),
    public.ocr_list_chunks(uuid, text, integer),
    public.ocr_update_chunk_status(uuid, text, text, text, text),
    public.ocr_set_chunk_result(uuid, text, text)
    from public, anon, authenticated;
grant execute on function
    public.ocr_create_document(uuid, text, integer, text, uuid, text, text),
    public.ocr_get_document(uuid),
    public.ocr_delete_document(uuid),
    public.ocr_get_chunk(uuid),
    public.ocr_list_chunks(uuid, text, integer),
    public.ocr_update_chunk_status(uuid, text, text, text, text),
    public.ocr_set_chunk_result(uuid, text, text)
    to service_role;
