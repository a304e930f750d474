-- Triggers: rules every writer obeys, whoever it is (service, SQL console, a zombie
-- worker), because the database applies them.

-- updated_at ----------------------------------------------------------------------

create function public.ocr_touch_updated_at()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    new.updated_at := now();
    return new;
end;
$$;

create trigger matters_touch_updated_at before update on public.matters
    for each row execute function public.ocr_touch_updated_at();
create trigger documents_touch_updated_at before update on public.documents
    for each row execute function public.ocr_touch_updated_at();
create trigger document_ocr_chunks_touch_updated_at before update on public.document_ocr_chunks
    for each row execute function public.ocr_touch_updated_at();

-- The chunk state machine -----------------------------------------------------------
-- The same map as VALID_STATUS_TRANSITIONS in backend/app/models/ocr_chunk.py.
-- Raised with SQLSTATE OC001 so every client can recognise it by code.

create function public.ocr_chunk_transition_allowed(p_from text, p_to text)
returns boolean
language sql
immutable
set search_path = ''
as $$
    select (p_from, p_to) in (
        ('pending', 'processing'),
        ('processing', 'completed'),
        ('processing', 'failed'),
        ('failed', 'pending')
    );
$$;

create function public.ocr_chunk_status_guard()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_op = 'INSERT' then
        if new.status <> 'pending' then
            raise exception 'a new chunk must start pending, not %', new.status
                using errcode = 'OC001',
                      detail = json_build_object('from', null, 'to', new.status)::text;
        end if;
        return new;
    end if;
    if not public.ocr_chunk_transition_allowed(old.status, new.status) then
        raise exception 'invalid status transition % -> % for chunk %', old.status, new.status, old.id
            using errcode = 'OC001',
                  detail = json_build_object('from', old.status, 'to', new.status, 'chunk_id', old.id)::text;
    end if;
    return new;
end;
$$;

-- `update of status` fires whenever a statement assigns status, so assigning the
-- current value again is refused too: completed is terminal even for a no-op write.
create trigger document_ocr_chunks_status_guard
    before insert or update of status on public.document_ocr_chunks
    for each row execute function public.ocr_chunk_status_guard();

-- The chunk's engine and language ----------------------------------------------------
-- Both are the document's: every new chunk row gets them without the writer naming them
-- (ocr_create_chunks inserts without either).

create function public.ocr_chunk_engine_from_document()
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

create trigger document_ocr_chunks_engine before insert on public.document_ocr_chunks
    for each row execute function public.ocr_chunk_engine_from_document();
