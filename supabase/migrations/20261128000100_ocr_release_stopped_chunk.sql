-- A worker that stops (SIGTERM or Ctrl-C past its grace period) hands back the chunk it
-- was reading without charging the chunk an attempt: the chunk did nothing wrong, and a
-- chunk whose attempts a few deploys in a row used up stayed failed for good.
--
-- ocr_release_chunk fails the row under its lease token, as ocr_fail_chunk does, with
-- error_code 'worker_stopped' (retryable), and gives the attempt back by raising the row's
-- max_attempts by one (at most 100, the column's own limit). attempt_count stays as it
-- is: it is part of the lease token, and a later attempt must never reuse a token.
-- The retry rule is unchanged (retryable and attempt_count < max_attempts); a
-- worker_stopped row is due again at once, like a worker_timeout one.

create function public.ocr_release_chunk(
    p_chunk_id uuid,
    p_worker_id text,
    p_attempt integer,
    p_error_message text
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
declare
    v_row public.document_ocr_chunks;
begin
    update public.document_ocr_chunks
       set status = 'failed',
           error_code = 'worker_stopped',
           error_message = left(p_error_message, 4000),
           error_retryable = true,
           max_attempts = least(max_attempts + 1, 100)
     where id = p_chunk_id
       and status = 'processing'
       and worker_id = p_worker_id
       and attempt_count = p_attempt
    returning * into v_row;
    if found then
        perform public.ocr_refresh_document_status(v_row.document_id);
        return next v_row;
    end if;
end;
$$;

revoke execute on function public.ocr_release_chunk(uuid, text, integer, text) from public, anon, authenticated;
grant execute on function public.ocr_release_chunk(uuid, text, integer, text) to service_role;

-- Send failed chunks back to pending. Automatic (p_force false): only rows whose error
-- is retryable and that have attempts left; worker_timeout and worker_stopped rows are
-- due at once, others after the backoff. Manual (p_force true, a person asked): every
-- failed row of the scope, due at once.
create or replace function public.ocr_retry_failed_chunks(
    p_document_id uuid default null,
    p_base_seconds double precision default 30,
    p_cap_seconds double precision default 600,
    p_force boolean default false
)
returns setof public.document_ocr_chunks
language plpgsql
set search_path = ''
as $$
declare
    v_row public.document_ocr_chunks;
    v_documents uuid[] := '{}';
begin
    for v_row in
        with due as (
            select id
              from public.document_ocr_chunks
             where status = 'failed'
               and (p_document_id is null or document_id = p_document_id)
               and (p_force or (coalesce(error_retryable, false) and attempt_count < max_attempts))
               for update skip locked
        )
        update public.document_ocr_chunks c
           set status = 'pending',
               next_attempt_at = case
                   when p_force or c.error_code in ('worker_timeout', 'worker_stopped') then now()
                   else now() + make_interval(
                       secs => public.ocr_backoff_seconds(c.attempt_count, p_base_seconds, p_cap_seconds))
               end
          from due
         where c.id = due.id
        returning c.*
    loop
        if not v_row.document_id = any (v_documents) then
            v_documents := v_documents || v_row.document_id;
        end if;
        return next v_row;
    end loop;
    perform public.ocr_refresh_document_status(d) from unnest(v_documents) as d;
end;
$$;
