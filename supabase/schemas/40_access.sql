-- Access: who may read and write what.
--
-- Users (role authenticated, JWT sub = auth.uid()) read the matters they are members
-- of and the documents and chunks of those matters, and may rename a document in a
-- matter where they may act (owner, member). Every other write goes through the API
-- or a worker, which connect as the service role (BYPASSRLS), check the caller's role
-- themselves and change state only through the ocr_* functions. The columns the
-- service trusts (status, storage paths, checksums, page counts, source path, engine,
-- language, the finalize lease) are writable by the service role only.

-- Membership, for RLS policies and for clients --------------------------------------
-- Security definer: they read matter_members without recursing into its own policy.

-- Whether the caller belongs to a matter.
create function public.ocr_is_matter_member(p_matter_id uuid)
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

-- The caller's role in a matter (null when not a member); documented for clients.
create function public.ocr_member_role(p_matter_id uuid)
returns text
language sql
stable
security definer -- reads matter_members without recursing into its own policy
set search_path = ''
as $$
    select m.role
      from public.matter_members m
     where m.matter_id = p_matter_id
       and m.user_id = (select auth.uid());
$$;

-- Whether the caller may act (upload, start, retry, rename) in a matter.
create function public.ocr_can_write(p_matter_id uuid)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
    select exists (
        select 1
          from public.matter_members m
         where m.matter_id = p_matter_id
           and m.user_id = (select auth.uid())
           and m.role in ('owner', 'member')
    );
$$;

-- Row level security -------------------------------------------------------------------
-- Users read by membership. No INSERT or DELETE policy anywhere: RLS refuses those to
-- users even if a host app grants the privilege back. The only UPDATE is a document's,
-- by a writing role, before and after.

alter table public.matters enable row level security;
alter table public.matter_members enable row level security;
alter table public.documents enable row level security;
alter table public.document_ocr_chunks enable row level security;
alter table public.document_ocr_reservations enable row level security;  -- no policy: the service's alone

create policy matters_member_select on public.matters
    for select to authenticated
    using (public.ocr_is_matter_member(id));

create policy matter_members_select on public.matter_members
    for select to authenticated
    using (user_id = (select auth.uid()) or public.ocr_is_matter_member(matter_id));

create policy documents_member_select on public.documents
    for select to authenticated
    using (public.ocr_is_matter_member(matter_id));

create policy documents_writer_update on public.documents
    for update to authenticated
    using (public.ocr_can_write(matter_id))
    with check (public.ocr_can_write(matter_id));

create policy document_ocr_chunks_member_select on public.document_ocr_chunks
    for select to authenticated
    using (public.ocr_is_matter_member(matter_id));

-- Table privileges -----------------------------------------------------------------------
-- Supabase's default privileges give anon and authenticated ALL on every new table
-- (TRUNCATE and DELETE included, and TRUNCATE ignores RLS): revoke everything, then
-- grant exactly what is meant.

revoke all on public.matters, public.matter_members, public.documents,
    public.document_ocr_chunks from public, anon, authenticated;
grant select on public.matters, public.matter_members, public.documents,
    public.document_ocr_chunks to authenticated;
-- The only column a user may change; everything else is the service's.
grant update (filename) on public.documents to authenticated;
grant all on public.matters, public.matter_members, public.documents,
    public.document_ocr_chunks to service_role;
revoke all on public.document_ocr_reservations from public, anon, authenticated;
grant all on public.document_ocr_reservations to service_role;

-- Function privileges ----------------------------------------------------------------------
-- PostgreSQL lets PUBLIC execute every new function (and Supabase's default privileges
-- add anon and authenticated). The trigger functions keep that: a trigger runs its
-- function whoever writes. Everything the service calls is the service role's alone.

revoke execute on function
    public.ocr_create_document(uuid, text, integer, text, uuid, text, text, text),
    public.ocr_get_document(uuid),
    public.ocr_unfinished_document(uuid, text, text, text),
    public.ocr_delete_document(uuid),
    public.ocr_get_or_create_matter(text),
    public.ocr_refresh_document_status(uuid),
    public.ocr_create_chunks(uuid, jsonb, integer),
    public.ocr_start_document(uuid, jsonb, integer),
    public.ocr_reserve_document(uuid, text, double precision),
    public.ocr_renew_reservations(text, double precision),
    public.ocr_release_reservations(text),
    public.ocr_document_is_for(uuid, text),
    public.ocr_claim_chunk(uuid, text),
    public.ocr_claim_next_chunk(text, uuid, text),
    public.ocr_held_chunk(text),
    public.ocr_claim_for_holder(text, uuid, text),
    public.ocr_heartbeat_chunk(uuid, text, integer),
    public.ocr_complete_chunk(uuid, text, integer, text, text),
    public.ocr_fail_chunk(uuid, text, integer, text, text, boolean),
    public.ocr_release_chunk(uuid, text, integer, text),
    public.ocr_detect_stale_chunks(double precision),
    public.ocr_sweep_stale_chunks(double precision, uuid),
    public.ocr_backoff_seconds(integer, double precision, double precision),
    public.ocr_retry_failed_chunks(uuid, double precision, double precision, boolean),
    public.ocr_due_pending_chunks(integer, double precision, text),
    public.ocr_queue_metrics(double precision),
    public.ocr_documents_ready_to_merge(integer, double precision, text),
    public.ocr_claim_finalize(uuid, text, double precision),
    public.ocr_heartbeat_finalize(uuid, text, integer),
    public.ocr_complete_finalize(uuid, text, integer, text, text, integer),
    public.ocr_release_finalize(uuid, text, integer, text, text),
    public.ocr_get_chunk(uuid),
    public.ocr_list_chunks(uuid, text, integer),
    public.ocr_update_chunk_status(uuid, text, text, text, text),
    public.ocr_set_chunk_result(uuid, text, text),
    public.ocr_chunk_progress(uuid),
    public.ocr_user_is_matter_member(uuid, uuid),
    public.ocr_user_matter_role(uuid, uuid),
    public.ocr_document_progress_for_user(uuid, uuid)
    from public, anon, authenticated;
grant execute on function
    public.ocr_create_document(uuid, text, integer, text, uuid, text, text, text),
    public.ocr_get_document(uuid),
    public.ocr_unfinished_document(uuid, text, text, text),
    public.ocr_delete_document(uuid),
    public.ocr_get_or_create_matter(text),
    public.ocr_refresh_document_status(uuid),
    public.ocr_create_chunks(uuid, jsonb, integer),
    public.ocr_start_document(uuid, jsonb, integer),
    public.ocr_reserve_document(uuid, text, double precision),
    public.ocr_renew_reservations(text, double precision),
    public.ocr_release_reservations(text),
    public.ocr_document_is_for(uuid, text),
    public.ocr_claim_chunk(uuid, text),
    public.ocr_claim_next_chunk(text, uuid, text),
    public.ocr_held_chunk(text),
    public.ocr_claim_for_holder(text, uuid, text),
    public.ocr_heartbeat_chunk(uuid, text, integer),
    public.ocr_complete_chunk(uuid, text, integer, text, text),
    public.ocr_fail_chunk(uuid, text, integer, text, text, boolean),
    public.ocr_release_chunk(uuid, text, integer, text),
    public.ocr_detect_stale_chunks(double precision),
    public.ocr_sweep_stale_chunks(double precision, uuid),
    public.ocr_backoff_seconds(integer, double precision, double precision),
    public.ocr_retry_failed_chunks(uuid, double precision, double precision, boolean),
    public.ocr_due_pending_chunks(integer, double precision, text),
    public.ocr_queue_metrics(double precision),
    public.ocr_documents_ready_to_merge(integer, double precision, text),
    public.ocr_claim_finalize(uuid, text, double precision),
    public.ocr_heartbeat_finalize(uuid, text, integer),
    public.ocr_complete_finalize(uuid, text, integer, text, text, integer),
    public.ocr_release_finalize(uuid, text, integer, text, text),
    public.ocr_get_chunk(uuid),
    public.ocr_list_chunks(uuid, text, integer),
    public.ocr_update_chunk_status(uuid, text, text, text, text),
    public.ocr_set_chunk_result(uuid, text, text),
    public.ocr_chunk_progress(uuid),
    public.ocr_user_is_matter_member(uuid, uuid),
    public.ocr_user_matter_role(uuid, uuid),
    public.ocr_document_progress_for_user(uuid, uuid)
    to service_role;
-- Members may read progress (RLS decides what they count).
grant execute on function public.ocr_chunk_progress(uuid) to authenticated;
-- The membership functions: the policies call them as the user, and clients may ask.
revoke execute on function
    public.ocr_is_matter_member(uuid),
    public.ocr_member_role(uuid),
    public.ocr_can_write(uuid)
    from public, anon;
grant execute on function
    public.ocr_is_matter_member(uuid),
    public.ocr_member_role(uuid),
    public.ocr_can_write(uuid)
    to authenticated, service_role;

-- Storage ------------------------------------------------------------------------------------
-- The private bucket for chunk inputs, chunk results and merged results. Keep in step
-- with [storage.buckets.ocr-chunks] in supabase/config.toml. A row, not a schema
-- object: Supabase's schema diff does not see it, so the migration that inserts it
-- (20261122000300_ocr_access.sql) is what creates it in a project.
insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types)
values ('ocr-chunks', 'ocr-chunks', false, 524288000,
        array['application/pdf', 'application/json', 'text/plain'])
on conflict (id) do nothing;
