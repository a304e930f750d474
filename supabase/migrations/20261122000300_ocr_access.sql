-- Access: row level security by matter membership, grants, and the bucket.
--
-- Users (role authenticated, JWT sub = auth.uid()) see the matters they are
-- members of and the documents and chunks of those matters. Chunk state is
-- changed only by workers, which use the service role (BYPASSRLS) and the
-- lease functions; users never write chunk rows.

create or replace function public.ocr_is_matter_member(p_matter_id uuid)
returns boolean
language sql
stable
security definer -- reads matter_members without recursing into its own policy
set search_path = ''
as $$
    select exists (
        select 1
          from public.matter_members m
         where m.matter_id = p_matter_id
           and m.user_id = (select auth.uid())
    );
$$;

alter table public.matters enable row level security;
alter table public.matter_members enable row level security;
alter table public.documents enable row level security;
alter table public.document_ocr_chunks enable row level security;

drop policy if exists matters_member_select on public.matters;
create policy matters_member_select on public.matters
    for select to authenticated
    using (public.ocr_is_matter_member(id));

drop policy if exists matter_members_select on public.matter_members;
create policy matter_members_select on public.matter_members
    for select to authenticated
    using (user_id = (select auth.uid()) or public.ocr_is_matter_member(matter_id));

drop policy if exists documents_member_select on public.documents;
create policy documents_member_select on public.documents
    for select to authenticated
    using (public.ocr_is_matter_member(matter_id));

drop policy if exists documents_member_insert on public.documents;
create policy documents_member_insert on public.documents
    for insert to authenticated
    with check (public.ocr_is_matter_member(matter_id));

drop policy if exists documents_member_update on public.documents;
create policy documents_member_update on public.documents
    for update to authenticated
    using (public.ocr_is_matter_member(matter_id))
    with check (public.ocr_is_matter_member(matter_id));

drop policy if exists document_ocr_chunks_member_select on public.document_ocr_chunks;
create policy document_ocr_chunks_member_select on public.document_ocr_chunks
    for select to authenticated
    using (public.ocr_is_matter_member(matter_id));

-- Grants. Supabase's default privileges hand every new table to anon too; be
-- explicit so the schema means the same on any PostgreSQL.
revoke all on public.matters, public.matter_members, public.documents,
    public.document_ocr_chunks from anon;
grant select on public.matters, public.matter_members to authenticated;
grant select, insert, update on public.documents to authenticated;
grant select on public.document_ocr_chunks to authenticated;
grant all on public.matters, public.matter_members, public.documents,
    public.document_ocr_chunks to service_role;

-- The lease protocol is for workers (service role) only; progress is readable
-- by members through RLS.
revoke execute on function
    public.ocr_create_chunks(uuid, jsonb, integer),
    public.ocr_claim_chunk(uuid, text),
    public.ocr_claim_next_chunk(text, uuid),
    public.ocr_heartbeat_chunk(uuid, text, integer),
    public.ocr_record_chunk_result(uuid, text, integer, text, text),
    public.ocr_complete_chunk(uuid, text, integer, text, text),
    public.ocr_fail_chunk(uuid, text, integer, text, text, boolean),
    public.ocr_refresh_document_status(uuid),
    public.ocr_set_document_status(uuid, text, text, text, text),
    public.ocr_get_or_create_matter(text),
    public.ocr_user_is_matter_member(uuid, uuid),
    public.ocr_document_progress_for_user(uuid, uuid),
    public.ocr_detect_stale_chunks(double precision),
    public.ocr_sweep_stale_chunks(double precision, uuid),
    public.ocr_retry_failed_chunks(uuid, double precision, double precision, boolean),
    public.ocr_due_pending_chunks(integer, double precision),
    public.ocr_documents_ready_to_merge(integer),
    public.ocr_backoff_seconds(integer, double precision, double precision),
    public.ocr_chunk_progress(uuid)
    from public, anon, authenticated;
grant execute on function
    public.ocr_create_chunks(uuid, jsonb, integer),
    public.ocr_claim_chunk(uuid, text),
    public.ocr_claim_next_chunk(text, uuid),
    public.ocr_heartbeat_chunk(uuid, text, integer),
    public.ocr_record_chunk_result(uuid, text, integer, text, text),
    public.ocr_complete_chunk(uuid, text, integer, text, text),
    public.ocr_fail_chunk(uuid, text, integer, text, text, boolean),
    public.ocr_refresh_document_status(uuid),
    public.ocr_set_document_status(uuid, text, text, text, text),
    public.ocr_get_or_create_matter(text),
    public.ocr_user_is_matter_member(uuid, uuid),
    public.ocr_document_progress_for_user(uuid, uuid),
    public.ocr_detect_stale_chunks(double precision),
    public.ocr_sweep_stale_chunks(double precision, uuid),
    public.ocr_retry_failed_chunks(uuid, double precision, double precision, boolean),
    public.ocr_due_pending_chunks(integer, double precision),
    public.ocr_documents_ready_to_merge(integer),
    public.ocr_backoff_seconds(integer, double precision, double precision),
    public.ocr_chunk_progress(uuid)
    to service_role;
grant execute on function public.ocr_chunk_progress(uuid) to authenticated;
grant execute on function public.ocr_is_matter_member(uuid) to authenticated, service_role;
revoke execute on function public.ocr_is_matter_member(uuid) from public, anon;

-- Private bucket for chunk inputs, chunk results and merged results. Keep in
-- step with [storage.buckets.ocr-chunks] in supabase/config.toml.
insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types)
values ('ocr-chunks', 'ocr-chunks', false, 524288000,
        array['application/pdf', 'application/json', 'text/plain'])
on conflict (id) do nothing;
