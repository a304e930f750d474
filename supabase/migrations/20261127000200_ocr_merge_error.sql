-- A merge put off by a retryable error (a store or a database that does not answer, a result
-- that cannot be written yet) leaves its document processing with every chunk read, and the
-- sweep enqueues the merge again. Nothing said so: `chunk-ocr status` and the progress poller
-- showed a document at 100 % that never completed, however often its merge failed.
--
-- documents.merge_error holds the last such error ("code: message") until a merge completes
-- the document (cleared) or fails it for good (cleared: error_message then says why). It never
-- means the document failed; ocr_status does.

alter table public.documents
    add column merge_error text
        constraint documents_merge_error_check check (merge_error is null or length(merge_error) <= 4000);

comment on column public.documents.merge_error is
    'the last retryable error that put the merge off, while the document waits for the next merge; null once merged or failed';

-- Give the merge lease up; with p_deferred_message (a retryable error) it is kept as merge_error.
drop function public.ocr_release_finalize(uuid, text, integer, text);

create function public.ocr_release_finalize(
    p_document_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_failed_message text default null,
    p_deferred_message text default null
)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
    update public.documents
       set finalize_worker_id = null,
           finalize_heartbeat_at = null,
           ocr_status = case when p_failed_message is not null then 'failed' else ocr_status end,
           error_message = coalesce(left(p_failed_message, 4000), error_message),
           merge_error = case when p_failed_message is not null then null
                              else coalesce(left(p_deferred_message, 4000), merge_error) end
     where id = p_document_id
       and finalize_worker_id = p_worker_id
       and finalize_attempt = p_attempt;
    return found;
end;
$$;

revoke execute on function public.ocr_release_finalize(uuid, text, integer, text, text)
    from public, anon, authenticated;
grant execute on function public.ocr_release_finalize(uuid, text, integer, text, text) to service_role;

-- The merge that completes the document clears it (as 20261124000100's, and merge_error).
drop function public.ocr_complete_finalize(uuid, text, integer, text, text, integer);

create function public.ocr_complete_finalize(
    p_document_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_result_storage_path text,
    p_result_checksum text,
    p_pages_failed integer default 0
)
returns setof public.documents
language plpgsql
set search_path = ''
as $$
begin
    return query
        update public.documents
           set ocr_status = 'completed',
               result_storage_path = p_result_storage_path,
               result_checksum = p_result_checksum,
               pages_failed = p_pages_failed,
               error_message = null,
               merge_error = null,
               ocr_completed_at = case when ocr_status = 'completed'
                                       then coalesce(ocr_completed_at, now()) else now() end,
               finalize_worker_id = null,
               finalize_heartbeat_at = null
         where id = p_document_id
           and finalize_worker_id = p_worker_id
           and finalize_attempt = p_attempt
        returning *;
end;
$$;

revoke execute on function public.ocr_complete_finalize(uuid, text, integer, text, text, integer)
    from public, anon, authenticated;
grant execute on function public.ocr_complete_finalize(uuid, text, integer, text, text, integer)
    to service_role;

-- The progress the poller and Realtime show says it too (mergeError, while processing), and a
-- merge put off (or a new reason) is pushed at once, as a change of status is.
create or replace function public.ocr_progress_payload(p_document_id uuid)
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

drop trigger documents_broadcast_status on public.documents;

create trigger documents_broadcast_status
    after update of ocr_status, pages_failed, merge_error on public.documents
    for each row
    when (old.ocr_status is distinct from new.ocr_status
          or old.pages_failed is distinct from new.pages_failed
          or old.merge_error is distinct from new.merge_error)
    execute function public.ocr_broadcast_document_status();
