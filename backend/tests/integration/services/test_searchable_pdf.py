"""The searchable PDF end to end on real PostgreSQL, Redis, tesseract and PDFs.

A mixed document (scanned and born-digital pages) is OCR'd chunk by chunk; each
chunk's text layer is stored beside its result, finalize grafts them onto the
original, and result.pdf is checked by tools that are not ours: pdftotext for
the text, PDFium for where each word sits and for what the pages look like,
qpdf for the file's structure.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from uuid import UUID

import pikepdf
import pypdfium2 as pdfium
from arq.connections import ArqRedis
from structlog.testing import capture_logs

from app.models.document import Document, DocumentStatus
from app.models.results import ChunkResult, MergedResult
from app.pdf.samples import make_scanned_pdf
from app.services.finalize import FinalizeOutcome
from app.services.planner import StartedDocument, start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime
from app.storage.base import get_verified
from app.storage.checksums import sha256_hex
from tests.pdf_factories import cer, make_mixed_pdf
from tests.pdf_tools import pdftotext, qpdf_check

KINDS = "sdss"  # scanned, born-digital, scanned, scanned: chunks of 2 pages mix both
OCR_DPI = 300


async def ocr(runtime: Runtime, arq_redis: ArqRedis, pdf: Path, matter_id: UUID) -> StartedDocument:
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        pdf,
        matter_id=matter_id,
        engine="auto",
        chunk_pages=2,
        workers=2,
    )
    for chunk in started.chunks:
        await runtime.processor.process(str(chunk.id))
    assert await runtime.finalizer.finalize(started.document.id) is FinalizeOutcome.COMPLETED
    return started


async def merged_of(runtime: Runtime, document_id: UUID) -> tuple[Document, MergedResult]:
    document = await runtime.service.get_document(document_id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    assert document.result_storage_path is not None
    assert document.result_checksum is not None
    data = await get_verified(runtime.store, document.result_storage_path, document.result_checksum)
    return document, MergedResult.model_validate_json(data)


def stored_file(runtime: Runtime, path: str) -> Path:
    return runtime.settings.local_storage_dir / runtime.settings.storage_bucket / path


def render(pdf: Path, index: int) -> bytes:
    document = pdfium.PdfDocument(pdf)
    try:
        return bytes(document[index].render(scale=100 / 72).to_pil().tobytes())
    finally:
        document.close()


async def test_result_pdf_is_the_original_with_the_ocr_text_over_each_word(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    source = tmp_path / "mixed.pdf"
    make_mixed_pdf(source, KINDS, seed=7)
    started = await ocr(runtime, arq_redis, source, matter_id)
    document, merged = await merged_of(runtime, started.document.id)

    # stored once, named with its checksum in the merged result (whose checksum the row records)
    assert merged.searchable_pdf is not None
    output = stored_file(runtime, merged.searchable_pdf.path)
    data = output.read_bytes()
    assert sha256_hex(data) == merged.searchable_pdf.sha256
    assert len(data) == merged.searchable_pdf.bytes
    assert merged.searchable_pdf.path.endswith("/result.pdf")

    # each chunk with OCR'd words stored its layer beside its JSON, named with its checksum
    results = []
    for chunk in await runtime.service.get_chunks_by_document(document.id):
        assert chunk.result_storage_path is not None
        assert chunk.result_checksum is not None
        result = ChunkResult.model_validate_json(
            await get_verified(runtime.store, chunk.result_storage_path, chunk.result_checksum)
        )
        results.append(result)
        assert result.text_layer is not None  # every chunk of this file has a scanned page
        layer = await get_verified(runtime.store, result.text_layer.path, result.text_layer.sha256)
        assert len(pikepdf.open(io.BytesIO(layer)).pages) == chunk.page_count

    # the structure holds, and nothing about the pages changed but the invisible text
    qpdf_check(output)
    with pikepdf.open(source) as before, pikepdf.open(output) as after:
        assert len(after.pages) == len(before.pages) == len(KINDS)
        for old, new in zip(before.pages, after.pages, strict=True):
            assert list(new.mediabox) == list(old.mediabox)
            assert int(new.obj.get("/Rotate", 0)) == int(old.obj.get("/Rotate", 0))
        for index, kind in enumerate(KINDS):
            if kind == "d":  # a born-digital page keeps its own content, byte for byte
                assert (
                    after.pages[index].obj.Contents.read_bytes()
                    == before.pages[index].obj.Contents.read_bytes()
                )
    for index in range(len(KINDS)):
        assert render(output, index) == render(source, index), f"page {index + 1} looks different"
    ocr_pages = sum(1 for kind in KINDS if kind == "s")
    assert output.stat().st_size <= source.stat().st_size + 10_240 * ocr_pages

    # pdftotext reads the OCR text, page by page
    pages = {p.page_number: p for r in results for p in r.pages}
    for number, kind in enumerate(KINDS, start=1):
        if kind == "s":
            assert cer(pages[number].text, pdftotext(output, number)) < 0.01

    # and PDFium finds each OCR word inside its box, within a few points
    found, total = 0, 0
    pdf = pdfium.PdfDocument(output)
    try:
        for number, kind in enumerate(KINDS, start=1):
            if kind != "s":
                continue
            page = pdf[number - 1]
            height = page.get_height()
            text = page.get_textpage()
            for word in pages[number].words or ():
                x0, y0, x1, y1 = (v * 72 / OCR_DPI for v in word.bbox)
                tolerance = 3.0
                inside = text.get_text_bounded(
                    left=x0 - tolerance,
                    bottom=height - y1 - tolerance,
                    right=x1 + tolerance,
                    top=height - y0 + tolerance,
                )
                total += 1
                found += word.text in inside
    finally:
        pdf.close()
    assert total > 200
    assert found == total, f"{total - found} of {total} words not within 3 pt of their boxes"


async def test_a_lost_text_layer_is_rendered_again_without_ocr(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    source = tmp_path / "scan.pdf"
    make_mixed_pdf(source, "ss", seed=8)
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        source,
        matter_id=matter_id,
        engine="tesseract",
        chunk_pages=2,
    )
    (chunk,) = started.chunks
    await runtime.processor.process(str(chunk.id))
    done = await runtime.service.get_chunk(chunk.id)
    assert done.result_storage_path is not None
    assert done.result_checksum is not None
    result = ChunkResult.model_validate_json(
        await get_verified(runtime.store, done.result_storage_path, done.result_checksum)
    )
    assert result.text_layer is not None
    layer = stored_file(runtime, result.text_layer.path)
    layer.write_bytes(layer.read_bytes()[:-200])  # cut short: it no longer verifies

    assert await runtime.finalizer.finalize(started.document.id) is FinalizeOutcome.COMPLETED
    _, merged = await merged_of(runtime, started.document.id)
    assert merged.searchable_pdf is not None
    output = stored_file(runtime, merged.searchable_pdf.path)
    assert cer(result.pages[0].text, pdftotext(output, 1)) < 0.01
    again = await runtime.service.get_chunk(chunk.id)
    assert again.result_checksum == done.result_checksum  # the result was not redone: no OCR ran


async def test_a_document_no_page_of_which_needed_ocr_has_no_searchable_pdf(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    source = tmp_path / "born.pdf"
    make_mixed_pdf(source, "dd", seed=9)
    started = await ocr(runtime, arq_redis, source, matter_id)
    _, merged = await merged_of(runtime, started.document.id)
    assert merged.searchable_pdf is None
    for chunk in await runtime.service.get_chunks_by_document(started.document.id):
        assert chunk.result_storage_path is not None
        assert chunk.result_checksum is not None
        result = ChunkResult.model_validate_json(
            await get_verified(runtime.store, chunk.result_storage_path, chunk.result_checksum)
        )
        assert result.text_layer is None


async def test_a_missing_result_pdf_is_grafted_again_by_the_next_finalize(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    source = tmp_path / "scan.pdf"
    make_mixed_pdf(source, "s", seed=10)
    started = await ocr(runtime, arq_redis, source, matter_id)
    _, merged = await merged_of(runtime, started.document.id)
    assert merged.searchable_pdf is not None
    output = stored_file(runtime, merged.searchable_pdf.path)
    kept = tmp_path / "kept.pdf"
    shutil.move(output, kept)

    assert await runtime.finalizer.finalize(started.document.id) is FinalizeOutcome.COMPLETED
    _, again = await merged_of(runtime, started.document.id)
    assert again.searchable_pdf == merged.searchable_pdf  # the same bytes, grafted again
    assert output.read_bytes() == kept.read_bytes()
    assert await runtime.finalizer.finalize(started.document.id) is FinalizeOutcome.ALREADY_DONE


async def test_a_truncated_original_is_made_searchable_on_its_repaired_chunks(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """The original is the damaged file itself; the chunks were cut from its repair, lost pages
    as placeholders. The searchable PDF is built on the chunks joined back together, so it has
    every page of the document in its place, and the pages that were read are searchable."""
    source = tmp_path / "truncated.pdf"
    make_scanned_pdf(source, pages=4, seed=12)
    source.write_bytes(source.read_bytes()[: int(source.stat().st_size * 0.7)])
    with capture_logs() as logs:
        started = await ocr(runtime, arq_redis, source, matter_id)
    # rebuilt once, when inspected: the cut reads that copy (it rebuilt the file a second time)
    assert [entry["event"] for entry in logs].count("pdf_repaired") == 1
    _, merged = await merged_of(runtime, started.document.id)
    read = [p.page_number for p in merged.pages if p.text.strip()]
    assert read  # the pages kept were read
    assert [f.code for f in merged.failed_pages] == ["page_lost"] * (4 - len(read))
    assert merged.searchable_pdf is not None
    output = stored_file(runtime, merged.searchable_pdf.path)
    qpdf_check(output)
    with pikepdf.open(output) as pdf:
        assert len(pdf.pages) == 4
    for number in read:
        assert cer(merged.pages[number - 1].text, pdftotext(output, number)) < 0.05


async def test_a_scan_whose_own_ocr_layer_is_garbage_gets_ours_in_its_place(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """The scanner's layer is garbage, so the page is OCR'd; result.pdf has our text, not both."""
    source = tmp_path / "rescanned.pdf"
    texts = make_scanned_pdf(source, 2, seed=3)
    garbage = " ".join(["~;|.^,"] * 60)
    with pikepdf.open(source, allow_overwriting_input=True) as pdf:
        for page in pdf.pages:
            font = pdf.make_indirect(pikepdf.Dictionary(Type="/Font", Subtype="/Type1", BaseFont="/Courier"))
            page.obj.Resources.Font = pikepdf.Dictionary(F9=font)
            page.contents_add(pdf.make_stream(b"BT 3 Tr /F9 8 Tf 40 700 Td (%s) Tj ET" % garbage.encode()))
        pdf.save(source)
    assert garbage.split()[0] in pdftotext(source, 1)  # what a reader got from the scanner's file

    started = await ocr(runtime, arq_redis, source, matter_id)
    _, merged = await merged_of(runtime, started.document.id)
    assert merged.searchable_pdf is not None
    output = stored_file(runtime, merged.searchable_pdf.path)
    qpdf_check(output)
    for number, expected in enumerate(texts, start=1):
        read = pdftotext(output, number)
        assert garbage.split()[0] not in read
        assert cer(expected, read) < 0.02, number
        assert render(output, number - 1) == render(source, number - 1)
