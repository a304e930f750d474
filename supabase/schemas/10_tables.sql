-- The current schema, declared once: what every migration in supabase/migrations
-- adds up to, written as if it had been created in one go. The migrations stay the
-- history (append-only; they are what `supabase db push` and `chunk-ocr db migrate`
-- apply); these files say what the database IS. A test applies both to empty
-- databases and requires the results to be identical
-- (backend/tests/integration/db/test_declarative_schema.py), so a change is made
-- twice: a new migration, and the declaration here.
--
-- Files run in name order ([db.migrations] schema_paths in supabase/config.toml):
--   10_tables.sql     tables and their indexes
--   20_triggers.sql   updated_at, the status state machine, the chunk's engine and language
--   30_functions.sql  the lease protocol and every other ocr_* function the service calls
--   40_access.sql     row level security, grants, the storage bucket
--   50_autoscaling.sql  the autoscaler's demand (ocr_scaling_demand) and its role
--   60_realtime_progress.sql  progress broadcast to document:{id} (Realtime) and who receives it
--
-- Supabase provides auth.users, auth.uid(), storage.buckets and the roles anon,
-- authenticated and service_role; on a plain PostgreSQL the test suite creates them
-- first (backend/app/db/plain_postgres_bootstrap.sql).

-- A matter groups documents; access is decided per matter.
create table public.matters (
    id uuid primary key default gen_random_uuid(),
    name text not null check (length(name) between 1 and 500),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);

-- Who belongs to a matter, and as what:
--   viewer  reads the matter's documents, progress, chunks and results
--   member  also uploads, starts and retries OCR
--   owner   also manages membership (done with the service role; no API yet)
create table public.matter_members (
    matter_id uuid not null references public.matters (id) on delete cascade,
    user_id uuid not null references auth.users (id) on delete cascade,
    role text not null default 'member' check (role in ('owner', 'member', 'viewer')),
    created_at timestamptz not null default now(),
    primary key (matter_id, user_id)
);
-- the matters of a user (RLS checks membership by user)
create index matter_members_user_idx on public.matter_members (user_id);

-- One PDF to OCR, its status and its merged result.
--   ocr_status: pending -> processing -> completed | failed (completed only by the merge)
--   engine: the engine every chunk of the document runs (its chunks carry a copy)
--   language: what its pages are read in, tesseract's codes joined by + (eng, eng+deu, chi_sim;
--             app.core.languages states the same pattern); its chunks carry a copy too
--   finalize_*: the merge's lease, fenced like a chunk's by (worker id, attempt)
create table public.documents (
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
    finalize_worker_id text
        check (finalize_worker_id is null or length(finalize_worker_id) between 1 and 200),
    finalize_attempt integer not null default 0 check (finalize_attempt >= 0),
    finalize_heartbeat_at timestamptz,
    pages_failed integer not null default 0
        constraint documents_pages_failed_check check (pages_failed >= 0 and pages_failed <= page_count),
    language text not null default 'eng'
        check (length(language) between 1 and 200
               and language ~ '^[A-Za-z][A-Za-z0-9_]*(\+[A-Za-z][A-Za-z0-9_]*)*$'),
    merge_error text
        constraint documents_merge_error_check check (merge_error is null or length(merge_error) <= 4000),
    -- lets chunks reference (id, matter_id) so a chunk can never sit in another matter
    unique (id, matter_id),
    -- a completed document always points at a checksummed merged result
    constraint documents_check
        check (ocr_status <> 'completed' or (result_storage_path is not null and result_checksum is not null))
);
comment on column public.documents.pages_failed is
    'pages of the merged result that could not be read (see failed_pages in result.json); 0 when every page was read';
comment on column public.documents.merge_error is
    'the last retryable error that put the merge off, while the document waits for the next merge; null once merged or failed';
-- a matter's documents, newest first
create index documents_matter_idx on public.documents (matter_id, created_at desc);

-- One page range of a document, OCR'd by one worker at a time under a lease.
--   status: pending -> processing -> completed (terminal)
--                                 -> failed -> pending (retry)
--   lease token: (id, worker_id, attempt_count)
--   max_attempts: OCR_MAX_ATTEMPTS when the chunk was planned, so whether a failure
--                 is final is a fact of the row
create table public.document_ocr_chunks (
    id uuid primary key default gen_random_uuid(),
    matter_id uuid not null,
    document_id uuid not null,
    chunk_index integer not null check (chunk_index >= 0),
    page_start integer not null check (page_start >= 1),
    page_end integer not null,
    status text not null default 'pending'
        check (status in ('pending', 'processing', 'completed', 'failed')),
    attempt_count integer not null default 0 check (attempt_count >= 0),
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
    -- the document's engine, filled in by the document_ocr_chunks_engine trigger
    -- (the check still allows null: the column was added nullable and backfilled)
    engine text not null check (engine is null or length(engine) between 1 and 64),
    -- the document's language, filled in by the same trigger
    language text not null
        check (length(language) between 1 and 200
               and language ~ '^[A-Za-z][A-Za-z0-9_]*(\+[A-Za-z][A-Za-z0-9_]*)*$'),
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

-- Due pending rows, oldest first: what the reconciler re-enqueues (ocr_due_pending_chunks).
create index document_ocr_chunks_claimable_idx
    on public.document_ocr_chunks (next_attempt_at, created_at, chunk_index)
    where status = 'pending';
-- Processing rows by last sign of life: the stale sweep.
create index document_ocr_chunks_processing_heartbeat_idx
    on public.document_ocr_chunks ((coalesce(heartbeat_at, processing_started_at)))
    where status = 'processing';
-- A document's failed rows: retry and document status.
create index document_ocr_chunks_failed_idx
    on public.document_ocr_chunks (document_id)
    where status = 'failed';
-- A matter's chunks: RLS filters chunks by matter.
create index document_ocr_chunks_matter_idx
    on public.document_ocr_chunks (matter_id);
-- The fair claim (ocr_claim_next_chunk): each document's oldest due pending chunk,
-- found with one probe per document.
create index document_ocr_chunks_pending_by_document_idx
    on public.document_ocr_chunks (document_id, next_attempt_at, chunk_index)
    include (matter_id)
    where status = 'pending';
-- The fair claim: chunks in flight per matter (its prefix) and per document of a matter.
create index document_ocr_chunks_processing_by_owner_idx
    on public.document_ocr_chunks (matter_id, document_id)
    where status = 'processing';
-- the chunk a claim's holder holds (ocr_held_chunk, asked by every claim first)
create index document_ocr_chunks_processing_worker_idx
    on public.document_ocr_chunks (worker_id, processing_started_at)
    where status = 'processing';

-- A `chunk-ocr run` keeps the documents it starts to its own worker while it runs
-- (ocr_document_is_for); a reservation it does not renew lapses.
create table public.document_ocr_reservations (
    document_id uuid primary key references public.documents (id) on delete cascade,
    run_id text not null check (length(run_id) between 1 and 200),
    reserved_until timestamptz not null
);
comment on table public.document_ocr_reservations is
    'documents a `chunk-ocr run` keeps to its own worker until reserved_until (renewed while it runs)';
create index document_ocr_reservations_run_idx on public.document_ocr_reservations (run_id);
-- the reservations held now, which every claim of the fleet reads (lapsed ones of killed runs stay)
create index document_ocr_reservations_until_idx on public.document_ocr_reservations (reserved_until);
