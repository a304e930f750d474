"""The searchable PDF: each chunk's text layer, then the original with those layers grafted on.

A chunk's text layer is a pure function of its input PDF and its JSON result
(app.pdf.text_layer), so it is stored beside the result as part of the same
attempt, named in the result with its checksum, and rendered again from the two
whenever it is missing or does not verify: no OCR is ever redone for it.

At finalize the original PDF (kept in the bucket as source.pdf) is copied page
by page with each OCR'd page's layer laid over it (app.pdf.graft), on disk, one
layer file at a time, so memory does not grow with the page count. Pages with
no words (a real text layer, a blank or a failed page) keep their content as it
was. The file is stored as result.pdf and named, with its checksum, in the merged
result, whose own checksum the document row records.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from app.core.errors import OCRError
from app.core.logging import get_logger
from app.models.document import Document
from app.models.ocr_chunk import DocumentOCRChunk
from app.models.results import ChunkResult, StoredFile
from app.pdf.errors import PdfError, TextLayerError
from app.pdf.graft import graft_text_layers
from app.pdf.join import is_sound, join_chunks
from app.pdf.text_layer import render_text_layer
from app.storage.base import BlobStore, StoredObject, get_verified, get_verified_file
from app.storage.errors import ChecksumMismatchError, ObjectNotFoundError, StorageError
from app.storage.paths import chunk_layer_path, merged_pdf_path, source_pdf_path

log = get_logger(__name__)


class SearchablePdfError(OCRError):
    """The original and the text layers could not be made into one PDF (an original too damaged to
    copy pages from, one whose pages differ from what was OCR'd). Permanent; the text stands."""

    code = "searchable_pdf_failed"


Put = Callable[[str, bytes, str], Awaitable[StoredObject]]
PutFile = Callable[[str, Path, str], Awaitable[StoredObject]]
Fetch = Callable[[DocumentOCRChunk], Awaitable[bytes]]


async def with_text_layer(put: Put, result_path: str, pdf: bytes, result: ChunkResult) -> ChunkResult:
    """result naming its stored text layer (rendered from pdf, the chunk's input); result as it
    is when no page has words."""
    if not result.has_words():
        return result
    layer = await asyncio.to_thread(render_text_layer, pdf, result.pages)
    stored = await put(chunk_layer_path(result_path), layer, "application/pdf")
    return result.model_copy(
        update={"text_layer": StoredFile(path=stored.path, sha256=stored.sha256, bytes=stored.size)}
    )


async def layer_bytes(
    store: BlobStore, chunk: DocumentOCRChunk, result: ChunkResult, fetch_input: Fetch
) -> bytes:
    """The chunk's text layer, verified against its result, or rendered again from its input."""
    if result.text_layer is not None:
        try:
            return await get_verified(store, result.text_layer.path, result.text_layer.sha256)
        except StorageError as exc:
            log.warning(
                "text_layer_unusable", chunk_id=str(chunk.id), path=result.text_layer.path, error=str(exc)
            )
    pdf = await fetch_input(chunk)
    return await asyncio.to_thread(render_text_layer, pdf, result.pages)


async def build_searchable_pdf(
    store: BlobStore,
    put_file: PutFile,
    document: Document,
    chunks: Sequence[DocumentOCRChunk],
    results: Sequence[ChunkResult],
    fetch_input: Fetch,
) -> StoredFile | None:
    """Store result.pdf for a document whose chunks and results are verified and in page order;
    None when no page was OCR'd or the original was not kept."""
    if not any(r.has_words() for r in results):
        return None
    source = source_pdf_path(document.matter_id, document.id)
    if document.source_path != source:
        log.warning("searchable_pdf_without_source", document_id=str(document.id))
        return None
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-pdf-") as tmp:
        work = Path(tmp)
        original = work / "source.pdf"
        await get_verified_file(store, source, document.file_sha256, original)
        if not await asyncio.to_thread(is_sound, original, document.page_count):
            original = await _joined_chunks(store, chunks, work)
        layers: list[tuple[int, Path]] = []
        for chunk, result in zip(chunks, results, strict=True):
            if not result.has_words():
                continue
            path = work / f"{chunk.chunk_index:05d}.pdf"
            await asyncio.to_thread(path.write_bytes, await layer_bytes(store, chunk, result, fetch_input))
            layers.append((chunk.page_start, path))
        output = work / "result.pdf"
        try:
            await asyncio.to_thread(graft_text_layers, original, layers, output)
        except (PdfError, TextLayerError) as exc:  # the text is not lost for it: the document completes
            log.warning(
                "searchable_pdf_failed", document_id=str(document.id), error_code=exc.code, error=str(exc)
            )
            raise SearchablePdfError(f"no searchable PDF could be made: {exc}") from exc
        stored = await put_file(merged_pdf_path(document.matter_id, document.id), output, "application/pdf")
    log.info(
        "searchable_pdf_built",
        document_id=str(document.id),
        layers=len(layers),
        bytes=stored.size,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return StoredFile(path=stored.path, sha256=stored.sha256, bytes=stored.size)


async def searchable_or_why(
    store: BlobStore,
    put_file: PutFile,
    document: Document,
    chunks: Sequence[DocumentOCRChunk],
    results: Sequence[ChunkResult],
    fetch_input: Fetch,
) -> tuple[StoredFile | None, str | None]:
    """build_searchable_pdf, or why there is none when grafting failed for good (the text stands)."""
    try:
        return await build_searchable_pdf(store, put_file, document, chunks, results, fetch_input), None
    except SearchablePdfError as exc:
        return None, exc.message


async def _joined_chunks(store: BlobStore, chunks: Sequence[DocumentOCRChunk], work: Path) -> Path:
    """The chunk inputs (the repaired pages OCR read) downloaded, verified and joined into one PDF."""
    inputs = []
    for chunk in chunks:
        if not chunk.input_storage_path or not chunk.input_checksum:
            raise SearchablePdfError(f"chunk {chunk.chunk_index} has no input to build the searchable PDF on")
        path = work / f"input-{chunk.chunk_index:05d}.pdf"
        await get_verified_file(store, chunk.input_storage_path, chunk.input_checksum, path)
        inputs.append(path)
    joined = work / "joined.pdf"
    try:
        await asyncio.to_thread(join_chunks, inputs, joined)
    except PdfError as exc:
        raise SearchablePdfError(f"no searchable PDF could be made: {exc}") from exc
    return joined


async def verifies(store: BlobStore, stored: StoredFile) -> bool:
    """Whether the stored file is there with its checksum (read to a scratch file, not to memory)."""
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-check-") as tmp:
        try:
            await get_verified_file(store, stored.path, stored.sha256, Path(tmp) / "check.pdf")
        except (ObjectNotFoundError, ChecksumMismatchError):
            return False
    return True
