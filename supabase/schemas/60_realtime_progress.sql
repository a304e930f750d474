-- Progress pushed over Supabase Realtime Broadcast (docs/REALTIME.md): a throttled trigger on
-- chunk status, an unthrottled one on document status, both sending the progress route's
-- payload to the private topic document:{id} with realtime.send(), and the policy on
-- realtime.messages that lets only the members of the document's matter receive it.
--
-- Supabase provides the realtime schema (realtime.messages, realtime.send(), realtime.topic());
-- on a plain PostgreSQL the bootstrap creates stand-ins (backend/app/db/plain_postgres_bootstrap.sql).
--
-- Rate: a change of the document's status (processing, completed, completed_with_errors,
-- failed), of its pages_failed or of why its merge was put off (merge_error) is always sent,
-- so the final state is never lost. A change of
-- its chunks' counts alone (a claim, a completion, a failure, a retry) is sent at most once
-- per 250 ms per document, however many chunks move: ocr_progress_broadcasts holds when each
-- document last sent one.

-- When each document last sent a progress-only message. Its row is created with the first
-- status message of the document (a document starts pending, and moves to processing when its
-- chunks are created) and goes with the document. Updated at most four times a second per
-- document, never an indexed column: HOT updates, hence the room left in each page.
create table public.ocr_progress_broadcasts (
    document_id uuid primary key references public.documents (id) on delete cascade,
    sent_at timestamptz not null default '-infinity'
) with (fillfactor = 50);

-- The progress of one document as the progress route presents it (api/schemas.py
-- ProgressView, from ocr_chunk_progress): status completed_with_errors for a completed
-- document with unread pages, percent 100 once completed, and the ETA of pages left at the
-- rate seen so far once two chunks have completed.
create function public.ocr_progress_payload(p_document_id uuid)
returns jsonb
language sql
stable
set search_path = ''
as $$
    select jsonb_build_object(
               'documentId', d.id,
               'status', case when d.ocr_status = 'completed' and d.pages_failed > 0
                              then 'completed_with_errors' else d.ocr_status end,
               'total', p.total,
               'pending', p.pending,
               'processing', p.processing,
               'completed', p.completed,
               'failed', p.failed,
               'pagesDone', p.pages_completed,
               'pagesTotal', p.pages_total,
               'pagesFailed', d.pages_failed,
               'mergeError', case when d.ocr_status = 'processing' then d.merge_error end,
               'percent', case when d.ocr_status = 'completed' then 100.0
                               when p.pages_total = 0 then 0.0
                               else round(100.0 * p.pages_completed / p.pages_total, 2) end,
               'etaSeconds', case
                   when d.ocr_status = 'processing' and p.completed >= 2 and p.pages_completed > 0
                        and p.last_completed_at > p.first_started_at
                   then round(greatest(0.0,
                            (p.pages_total - p.pages_completed)
                            * extract(epoch from p.last_completed_at - p.first_started_at)
                            / p.pages_completed
                            - greatest(0.0, extract(epoch from now() - p.last_completed_at))), 1)
               end,
               'updatedAt', d.updated_at)
      from public.documents d
     cross join lateral public.ocr_chunk_progress(d.id) p
     where d.id = p_document_id;
$$;

-- Send the document's progress to its topic. A broadcast that cannot be sent is a warning
-- (realtime.send's own rule), never a failed chunk or document write.
create function public.ocr_send_progress(p_document_id uuid)
returns void
language plpgsql
set search_path = ''
as $$
declare
    v_payload jsonb := public.ocr_progress_payload(p_document_id);
begin
    if v_payload is null then
        return;
    end if;
    begin
        perform realtime.send(v_payload, 'progress', 'document:' || p_document_id::text, true);
    exception when others then
        raise warning 'ocr progress broadcast of document % not sent: %', p_document_id, sqlerrm;
    end;
end;
$$;

-- A chunk changed status: send the document's progress unless it sent one in the last 250 ms.
-- One statement on the document's throttle row, which never waits: a transaction that finds
-- the row locked (another is sending this document's progress right now, in a transaction not
-- yet committed) skips, as one that finds it sent too recently does. Many chunks completing at
-- once in their own transactions so neither queue behind each other nor deadlock here.
-- Security definer: realtime.send is for the database's owner roles, and any writer's change
-- (the service role's, the API's, a worker's) is broadcast.
create function public.ocr_broadcast_chunk_progress()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    with due as (
        select b.document_id
          from public.ocr_progress_broadcasts b
         where b.document_id = new.document_id
           and b.sent_at <= clock_timestamp() - interval '250 milliseconds'
           for update skip locked
    )
    update public.ocr_progress_broadcasts b
       set sent_at = clock_timestamp()
      from due
     where b.document_id = due.document_id;
    if found then
        perform public.ocr_send_progress(new.document_id);
    end if;
    return null;
end;
$$;

-- The document's status (or its count of unread pages) changed: always sent.
create function public.ocr_broadcast_document_status()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    -- Never waits either: only this trigger inserts, under the document's row lock.
    insert into public.ocr_progress_broadcasts (document_id)
    values (new.id)
    on conflict (document_id) do nothing;
    perform public.ocr_send_progress(new.id);
    return null;
end;
$$;

-- After the statement's rows have all changed, so a statement that moves many chunks of one
-- document (a sweep, a retry) sends the state after all of them, once.
create trigger document_ocr_chunks_broadcast_progress
    after update of status on public.document_ocr_chunks
    for each row
    when (old.status is distinct from new.status)
    execute function public.ocr_broadcast_chunk_progress();

create trigger documents_broadcast_status
    after update of ocr_status, pages_failed, merge_error on public.documents
    for each row
    when (old.ocr_status is distinct from new.ocr_status
          or old.pages_failed is distinct from new.pages_failed
          or old.merge_error is distinct from new.merge_error)
    execute function public.ocr_broadcast_document_status();

-- Who may receive: a member of the document's matter, on that document's topic only ------

-- Whether the caller may receive the broadcasts of a topic: `document:{id}` of a document in
-- a matter they belong to. Any other topic (another app's, a malformed id) is not ours: false.
create function public.ocr_can_receive_topic(p_topic text)
returns boolean
language sql
stable
security definer -- reads documents whatever the caller's own policies let them see
set search_path = ''
as $$
    select exists (
        select 1
          from public.documents d
         where d.id = case
                   when p_topic ~ '^document:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                   then substr(p_topic, 10)::uuid
               end
           and public.ocr_is_matter_member(d.matter_id)
    );
$$;

-- Supabase's pattern for private channels: Realtime sets realtime.topic to the topic a client
-- joins, with the client's JWT claims, and lets it receive broadcasts when it can read a
-- message of that topic. Members read their documents' topics; nobody may send on them (no
-- insert policy): progress comes from the database only.
create policy ocr_document_progress_member_read on realtime.messages
    for select to authenticated
    using (
        extension = 'broadcast'
        and topic = (select realtime.topic())
        and (select public.ocr_can_receive_topic(realtime.topic()))
    );

-- Privileges -----------------------------------------------------------------------------------

alter table public.ocr_progress_broadcasts enable row level security;
revoke all on public.ocr_progress_broadcasts from public, anon, authenticated;
grant all on public.ocr_progress_broadcasts to service_role;

revoke execute on function
    public.ocr_progress_payload(uuid),
    public.ocr_send_progress(uuid)
    from public, anon, authenticated;
grant execute on function
    public.ocr_progress_payload(uuid),
    public.ocr_send_progress(uuid)
    to service_role;
-- The policy calls it as the joining user.
revoke execute on function public.ocr_can_receive_topic(text) from public, anon;
grant execute on function public.ocr_can_receive_topic(text) to authenticated, service_role;
