-- Local development seed (`supabase db reset` runs it after the migrations).
-- One matter for documents submitted from the command line; add members with
--   insert into public.matter_members (matter_id, user_id) values (...);
insert into public.matters (id, name)
values ('00000000-0000-4000-8000-000000000001', 'chunk-ocr')
on conflict (id) do nothing;
