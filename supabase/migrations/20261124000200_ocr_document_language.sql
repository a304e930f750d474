-- The language a document is read in. A Russian scan read as English comes back
-- as two-thirds of its characters; tesseract needs to be told (`-l rus`).
--
-- documents.language holds tesseract's syntax: codes of its trained data (eng,
-- chi_sim, deu_latf) joined by + (eng+deu). The same pattern and
-- bound as app.core.languages. Every chunk carries a copy, filled in from its
-- document by the trigger that already copies the engine, so a worker's claim
-- still returns everything the chunk needs in one round trip. Existing rows read
-- English, which is what every document was read in until now.
--
-- Users may not write it: 40_access grants them update of filename alone, and a
-- new column gets no grant.

alter table public.documents
    add column language text not null default 'eng'
        check (length(language) between 1 and 200
               and language ~ '^[A-Za-z][A-Za-z0-9_]*(\+[A-Za-z][A-Za-z0-9_]*)*$');

alter table public.document_ocr_chunks
    add column language text
        check (length(language) between 1 and 200
               and language ~ '^[A-Za-z][A-Za-z0-9_]*(\+[A-Za-z][A-Za-z0-9_]*)*$');

update public.document_ocr_chunks c
   set language = d.language
  from public.documents d
 where c.document_id = d.id
   and c.language is null;

-- The engine and the language are the document's: every new chunk row gets both without
-- the writer naming them (ocr_create_chunks inserts without either).
create or replace function public.ocr_chunk_engine_from_document()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if new.engine is null or new.language is null then
        select coalesce(new.engine, d.engine), coalesce(new.language, d.language)
          into new.engine, new.language
          from public.documents d
         where d.id = new.document_id;
    end if;
    return new;
end;
$$;

alter table public.document_ocr_chunks alter column language set not null;

-- ocr_create_document takes the language. A new argument is a new signature, and two
-- functions of one name would make PostgREST's RPC ambiguous: the old one goes.
drop function public.ocr_create_document(uuid, text, integer, text, uuid, text, text);

create function public.ocr_create_document(
    p_matter_id uuid,
    p_filename text,
    p_page_count integer,
    p_file_sha256 text,
    p_id uuid default null,
    p_source_path text default null,
    p_engine text default null,
    p_language text default null
)
returns setof public.documents
language sql
set search_path = ''
as $$
    insert into public.documents
        (id, matter_id, filename, source_path, page_count, file_sha256, engine, language)
    values (coalesce(p_id, gen_random_uuid()), p_matter_id, p_filename, p_source_path, p_page_count,
            p_file_sha256, coalesce(p_engine, 'auto'), coalesce(p_language, 'eng'))
    returning *;
$$;

revoke execute on function
    public.ocr_create_document(uuid, text, integer, text, uuid, text, text, text)
    from public, anon, authenticated;
grant execute on function
    public.ocr_create_document(uuid, text, integer, text, uuid, text, text, text)
    to service_role;
