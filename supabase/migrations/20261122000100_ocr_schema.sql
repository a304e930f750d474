-- Chunked OCR: matters, membership, documents and their page-range OCR chunks.
--
-- Applies to a Supabase project (`supabase db push`) and, for tests, to a plain
-- PostgreSQL 15+ after backend/tests/sql/supabase_bootstrap.sql has created
-- what Supabase provides (roles, auth.uid(), storage.buckets).

create table if not exists public.matters (
    id uuid primary key default gen_random_uuid(),
    name text not null check (length(name) between 1 and 500),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);

create table if not exists public.matter_members (
    matter_id uuid not null references public.matters (id) on delete cascade,
    user_id uuid not null references auth.users (id) on delete cascade,
    role text not null default 'member' check (role in ('owner', 'member', 'viewer')),
    created_at timestamptz not null default now(),
    primary key (matter_id, user_id)
);
create index if not exists matter_members_user_idx on public.matter_members (user_id);

create table if not exists public.documents (
    id uuid primary key default gen_random_uuid(),
    matter_id uuid not null references public.matters (id) on delete cascade,
    filename text not null check (length(filename) between 1 and 1024),
    source_path text check (source_path is null or length(source_path) <= 1024),
    page_count integer not null check (page_count >= 1),
    file_sha256 text not null check (file_sha256 ~ '^[0-9a-f]{64}$'),
    ocr_status text not null default 'pending'
        check (ocr_status in ('pending', 'processing', 'completed', 'failed')),
    engine text not null default 'auto' check (length(engine) between 1 and 64),
    result_storage_path text,
    result_checksum text check (result_checksum is null or result_checksum ~ '^[0-9a-f]{64}$'),
    error_message text,
    ocr_started_at timestamptz,
    ocr_completed_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    -- lets chunks reference (id, matter_id) so a chunk can never sit in another matter
    unique (id, matter_id),
    check (ocr_status <> 'completed' or (result_storage_path is not null and result_checksum is not null))
);
create index if not exists documents_matter_idx on public.documents (matter_id, created_at desc);

create table if not exists public.document_ocr_chunks (
    id uuid primary key default gen_random_uuid(),
    matter_id uuid not null,
    document_id uuid not null,
    chunk_index integer not null check (chunk_index >= 0),
    page_start integer not null check (page_start >= 1),
    page_end integer not null,
    status text not null default 'pending'
        check (status in ('pending', 'processing', 'completed', 'failed')),
    attempt_count integer not null default 0 check (attempt_count >= 0),
    -- OCR_MAX_ATTEMPTS when the chunk was planned: whether a failure is final is a fact of the row
    max_attempts integer not null default 3 check (max_attempts between 1 and 100),
    error_code text check (error_code is null or length(error_code) between 1 and 100),
    error_message text check (error_message is null or length(error_message) <= 4000),
    error_retryable boolean,
    next_attempt_at timestamptz not null default now(),
    worker_id text check (worker_id is null or length(worker_id) between 1 and 200),
    input_storage_path text,
    input_checksum text check (input_checksum is null or input_checksum ~ '^[0-9a-f]{64}$'),
    result_storage_path text,
    result_checksum text check (result_checksum is null or result_checksum ~ '^[0-9a-f]{64}$'),
    processing_started_at timestamptz,
    heartbeat_at timestamptz,
    processing_completed_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint document_ocr_chunks_document_fk foreign key (document_id, matter_id)
        references public.documents (id, matter_id) on delete cascade,
    constraint document_ocr_chunks_document_chunk_key unique (document_id, chunk_index),
    constraint document_ocr_chunks_page_range_check check (page_end >= page_start),
    -- a row in processing holds a lease: who, which attempt, since when
    constraint document_ocr_chunks_lease_check check (
        status <> 'processing'
        or (worker_id is not null and attempt_count >= 1 and processing_started_at is not null)
    ),
    -- a completed row always points at a checksummed result
    constraint document_ocr_chunks_result_check check (
        status <> 'completed'
        or (result_storage_path is not null and result_checksum is not null
            and processing_completed_at is not null)
    ),
    constraint document_ocr_chunks_failed_check check (status <> 'failed' or error_code is not null)
);

-- Hot paths: claim-next scans due pending rows in FIFO order; the stale sweep
-- scans processing rows by heartbeat; retry scans failed rows.
create index if not exists document_ocr_chunks_claimable_idx
    on public.document_ocr_chunks (next_attempt_at, created_at, chunk_index)
    where status = 'pending';
create index if not exists document_ocr_chunks_processing_heartbeat_idx
    on public.document_ocr_chunks ((coalesce(heartbeat_at, processing_started_at)))
    where status = 'processing';
create index if not exists document_ocr_chunks_failed_idx
    on public.document_ocr_chunks (document_id)
    where status = 'failed';
create index if not exists document_ocr_chunks_matter_idx
    on public.document_ocr_chunks (matter_id);

-- updated_at ----------------------------------------------------------------

create or replace function public.ocr_touch_updated_at()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    new.updated_at := now();
    return new;
end;
$$;

drop trigger if exists matters_touch_updated_at on public.matters;
create trigger matters_touch_updated_at before update on public.matters
    for each row execute function public.ocr_touch_updated_at();
drop trigger if exists documents_touch_updated_at on public.documents;
create trigger documents_touch_updated_at before update on public.documents
    for each row execute function public.ocr_touch_updated_at();
drop trigger if exists document_ocr_chunks_touch_updated_at on public.document_ocr_chunks;
create trigger document_ocr_chunks_touch_updated_at before update on public.document_ocr_chunks
    for each row execute function public.ocr_touch_updated_at();

-- The state machine ------------------------------------------------------------
-- The same map as VALID_STATUS_TRANSITIONS in backend/app/models/ocr_chunk.py.
-- Raised with SQLSTATE OC001 so every client can recognise it by code.

create or replace function public.ocr_chunk_transition_allowed(p_from text, p_to text)
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

create or replace function public.ocr_chunk_status_guard()
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
drop trigger if exists document_ocr_chunks_status_guard on public.document_ocr_chunks;
create trigger document_ocr_chunks_status_guard
    before insert or update of status on public.document_ocr_chunks
    for each row execute function public.ocr_chunk_status_guard();
