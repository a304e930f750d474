"""Merge a document whose chunks have all completed.

Idempotent: a completed document is left alone, and running it twice writes
the same bytes to the same paths. Every chunk result is verified against its
row's checksum; one that does not verify (or is missing, or does not parse)
is OCR'd again and its row pointed at the new result, never merged as it is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from uuid import UUID

from pydantic import ValidationError

from app.core.errors import OCRError
from app.core.logging import get_logger
from app.models.document import Document, DocumentStatus
from app.models.ocr_chunk import DocumentOCRChunk
from app.models.results import ChunkResult, MergedChunk, MergedResult, PageText
from app.services.chunk_processor import ChunkProcessor
from app.services.ocr_chunk_service import OCRChunkService
from app.storage.base import BlobStore, get_verified
from app.storage.checksums import sha256_hex
from app.storage.errors import StorageError
from app.storage.paths import chunk_result_path, merged_json_path, merged_text_path

log = get_logger(__name__)


class MergeError(OCRError):
    """The chunk results do not add up to the document (a gap or an overlap in pages)."""

    code = "merge_failed"


@dataclass
class Finalizer:
    service: OCRChunkService
    store: BlobStore
    processor: ChunkProcessor
    low_confidence_threshold: float = 0.7

    async def finalize(self, document_id: UUID | str) -> Document | None:
        document = await self.service.get_document(document_id)
        if document.ocr_status is DocumentStatus.COMPLETED:
            return document
        progress = await self.service.get_chunk_progress(document.id)
        if not progress.is_complete:
            log.info(
                "finalize_not_ready",
                document_id=str(document.id),
                completed=progress.completed,
                total=progress.total,
            )
            return None
        started = time.perf_counter()
        chunks = sorted(await self.service.get_chunks_by_document(document.id), key=lambda c: c.page_start)
        verified = [await self._verified_result(chunk) for chunk in chunks]
        merged = self._merge(document, [c for c, _ in verified], [r for _, r in verified])
        text_obj = await self.store.put(
            merged_text_path(document.matter_id, document.id), merged.text().encode("utf-8"), "text/plain"
        )
        json_obj = await self.store.put(
            merged_json_path(document.matter_id, document.id), merged.to_bytes(), "application/json"
        )
        done = await self.service.set_document_status(
            document.id,
            DocumentStatus.COMPLETED,
            result_storage_path=json_obj.path,
            result_checksum=json_obj.sha256,
        )
        log.info(
            "document_finalized",
            document_id=str(document.id),
            pages=merged.page_count,
            chunks=len(chunks),
            low_confidence_pages=len(merged.low_confidence_pages),
            text_bytes=text_obj.size,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return done

    async def _verified_result(self, chunk: DocumentOCRChunk) -> tuple[DocumentOCRChunk, ChunkResult]:
        try:
            if not chunk.result_storage_path or not chunk.result_checksum:
                raise MergeError(f"chunk {chunk.chunk_index} is completed without a result")
            data = await get_verified(self.store, chunk.result_storage_path, chunk.result_checksum)
            result = ChunkResult.model_validate_json(data)
            if (
                result.document_id != chunk.document_id
                or not result.covers_its_range()
                or (
                    result.page_start,
                    result.page_end,
                )
                != (chunk.page_start, chunk.page_end)
            ):
                raise MergeError(f"chunk {chunk.chunk_index}'s stored result is for other pages")
        except (StorageError, ValidationError, MergeError) as exc:
            log.warning(
                "chunk_result_rejected",
                document_id=str(chunk.document_id),
                chunk_id=str(chunk.id),
                chunk_index=chunk.chunk_index,
                path=chunk.result_storage_path,
                reason=getattr(exc, "code", type(exc).__name__),
            )
            return await self._redo(chunk)
        return chunk, result

    async def _redo(self, chunk: DocumentOCRChunk) -> tuple[DocumentOCRChunk, ChunkResult]:
        """OCR the chunk again, store the new result and point the row at it."""
        result = await self.processor.recognize(chunk)
        data = result.to_bytes()
        path = chunk_result_path(chunk.matter_id, chunk.document_id, chunk.chunk_index, sha256_hex(data))
        stored = await self.store.put(path, data, "application/json")
        updated = await self.service.update_result(chunk.id, stored.path, stored.sha256)
        log.info("chunk_result_redone", chunk_id=str(chunk.id), chunk_index=chunk.chunk_index, path=path)
        return updated, result

    def _merge(
        self, document: Document, chunks: list[DocumentOCRChunk], results: list[ChunkResult]
    ) -> MergedResult:
        pages = [
            PageText(page_number=p.page_number, text=p.text, confidence=p.confidence, source=p.source)
            for r in results
            for p in r.pages
        ]
        if [p.page_number for p in pages] != list(range(1, document.page_count + 1)):
            raise MergeError(
                f"chunk results of document {document.id} do not cover pages 1-{document.page_count}"
            )
        # Blank pages carry no evidence either way: they count neither in the mean nor as low.
        with_text = [p for p in pages if p.text.strip()]
        mean = sum(p.confidence for p in with_text) / len(with_text) if with_text else 0.0
        low = tuple(
            p.page_number
            for p in with_text
            if p.source == "ocr" and p.confidence < self.low_confidence_threshold
        )
        return MergedResult(
            document_id=document.id,
            filename=document.filename,
            page_count=document.page_count,
            engines=tuple(sorted({r.engine for r in results})),
            mean_confidence=round(mean, 4),
            low_confidence_threshold=self.low_confidence_threshold,
            low_confidence_pages=low,
            pages=tuple(pages),
            chunks=tuple(
                MergedChunk(
                    chunk_index=c.chunk_index,
                    page_start=c.page_start,
                    page_end=c.page_end,
                    result_storage_path=c.result_storage_path or "",
                    result_checksum=c.result_checksum or "",
                )
                for c in chunks
            ),
        )
