-- Roles that mean something, and columns only the service writes.
--
-- matter_members.role:
--   viewer  reads the matter's documents, progress, chunks and results
--   member  also uploads, starts and retries OCR
--   owner   also manages membership (no API for it yet: done with the service role)
--
-- Every write that matters goes through the API or a worker, which connect as
-- the service role (BYPASSRLS) and check the caller's role themselves
-- (ocr_user_matter_role). Users (role authenticated) therefore get no INSERT at
-- all and UPDATE of one harmless column, filename, in matters where they may
-- act. The columns workers and the service trust - ocr_status, storage paths,
-- checksums, page_count, source_path, engine, the finalize lease - are
-- writable by the service role only.
--
-- Supabase's default privileges give anon and authenticated ALL on every new
-- table (TRUNCATE and DELETE included, and TRUNCATE ignores RLS), and earlier
-- migrations only added grants on top; so everything is revoked here first
-- and exactly what is meant granted back. Safe to run again.

-- 1. Who may do what --------------------------------------------------------------

-- The caller's role in a matter (null when not a member), for RLS policies.
create or replace function public.ocr_member_role(p_matter_id uuid)
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
create or replace function public.ocr_can_write(p_matter_id uuid)
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

-- A user's role in a matter, or null: for the API, which connects as the
-- service role (no RLS) and decides per route (404 for non-members, 403 for a
-- viewer acting).
create or replace function public.ocr_user_matter_role(p_matter_id uuid, p_user_id uuid)
returns text
language sql
stable
set search_path = ''
as $$
    select m.role from public.matter_members m where m.matter_id = p_matter_id and m.user_id = p_user_id;
$$;

-- 2. Row level security on documents --------------------------------------------------
-- Reading stays as it was (any member, ocr_is_matter_member). Users never insert
-- documents (the service does, as the service role): with no INSERT policy RLS
-- refuses every insert even if a host app grants the privilege back. UPDATE
-- needs a writing role, before and after.

drop policy if exists documents_member_insert on public.documents;
drop policy if exists documents_member_update on public.documents;
drop policy if exists documents_writer_update on public.documents;
create policy documents_writer_update on public.documents
    for update to authenticated
    using (public.ocr_can_write(matter_id))
    with check (public.ocr_can_write(matter_id));

-- 3. Privileges ---------------------------------------------------------------------

revoke all on public.matters, public.matter_members, public.documents,
    public.document_ocr_chunks from public, anon, authenticated;
grant select on public.matters, public.matter_members, public.documents,
    public.document_ocr_chunks to authenticated;
-- The only column a user may change; everything else is the service's.
grant update (filename) on public.documents to authenticated;
grant all on public.matters, public.matter_members, public.documents,
    public.document_ocr_chunks to service_role;

revoke execute on function
    public.ocr_member_role(uuid),
    public.ocr_can_write(uuid)
    from public, anon;
grant execute on function
    public.ocr_member_role(uuid),
    public.ocr_can_write(uuid)
    to authenticated, service_role;
revoke execute on function public.ocr_user_matter_role(uuid, uuid) from public, anon, authenticated;
grant execute on function public.ocr_user_matter_role(uuid, uuid) to service_role;
