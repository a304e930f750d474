-- Drop the functions nothing calls any more. supabase/schemas/ declares the schema
-- without them.
--
-- ocr_record_chunk_result: stored a chunk's result on the row before completing, so
--   that a worker dying in between left the result findable. A chunk result's
--   storage path is now derived from what the row already knows (matter, document,
--   chunk index, input checksum, engine), so any later attempt finds and verifies it
--   without that write; ocr_complete_chunk records path and checksum when the attempt
--   completes.
-- ocr_set_document_status: set a document's status directly. A document's status now
--   moves only through ocr_start_document, ocr_refresh_document_status and the
--   finalize lease (ocr_complete_finalize, ocr_release_finalize).

drop function if exists public.ocr_record_chunk_result(uuid, text, integer, text, text);
drop function if exists public.ocr_set_document_status(uuid, text, text, text, text);
