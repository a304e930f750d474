"""Documents: what the API, the command line and `chunk-ocr run` do with a document.

One application service over the chunk service, the blob store and the job
queue, so each use case is written once: submit a PDF, start a registered one,
retry its failed chunks, read its verified result, report its status. The
entry points only parse their input, call one of these, and present what comes
back (JSON, a line on the terminal, a file). The worker's jobs go to the chunk
processor and the finalizer, which are services of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from uuid import UUID

from app.core.errors import InvalidInputError, QueueUnavailableError, RepositoryUnavailableError
from app.core.languages import DEFAULT_LANGUAGE, check_language, language_codes
from app.core.logging import get_logger
from app.engines.languages import not_installed
from app.engines.registry import available_engines
from app.engines.specs import engine_spec
from app.models.document import Document, DocumentStatus
from app.models.ocr_chunk import ChunkProgress, DocumentOCRChunk
from app.models.results import MergedResult, StoredFile
from app.services.merge import (
    document_result,
    searchable_pdf_file,
    searchable_pdf_local_file,
    searchable_pdf_of,
)
from app.services.ocr_chunk_service import OCRChunkService
from app.services.planner import StartedDocument, plan_document, start_document
from app.services.queue import JobQueue
from app.services.recovery import retry_failed
from app.services.resume import resume_document
from app.services.text_reader import TextReader
from app.services.validation import IdLike
from app.storage.base import BlobStore

FINISHED = frozenset({DocumentStatus.COMPLETED, DocumentStatus.FAILED})


class EngineNotOfferedError(InvalidInputError):
    """No worker can run the engine asked for (unknown, or no worker has what it needs)."""

    code = "engine_unavailable"


class LanguageNotOfferedError(InvalidInputError):
    """No worker's tesseract reads the language asked for (its trained data is not installed)."""

    code = "language_unavailable"


log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class DocumentStatusReport:
    """A document, its chunks' aggregates, its failed chunks, and where its result is stored."""

    document: Document
    progress: ChunkProgress
    failed_chunks: list[DocumentOCRChunk]
    result_location: str | None

    @property
    def finished(self) -> bool:
        return self.document.ocr_status in FINISHED


@dataclass(frozen=True, slots=True)
class Retried:
    document_id: UUID
    chunks: list[DocumentOCRChunk]


@dataclass(frozen=True, slots=True)
class Documents:
    service: OCRChunkService
    store: BlobStore
    queue: JobQueue
    reader: TextReader | None = None  # where pages are read at planning (None: by the workers)

    # -- access (the API's callers are users; the command line acts as the operator) ----------

    async def readable(self, document_id: IdLike, user: UUID) -> Document:
        """The document, if the user belongs to its matter (DocumentNotFoundError otherwise)."""
        return await self.service.get_document_for_user(document_id, user)

    async def actable(self, document_id: IdLike, user: UUID) -> Document:
        """The document, if the user may start or retry it (ForbiddenError for a viewer)."""
        return await self.service.get_document_for_writer(document_id, user)

    async def writable_matter(self, matter_id: IdLike, user: UUID) -> UUID:
        """The matter, if the user may upload into it."""
        return await self.service.check_matter_write_access(matter_id, user)

    async def matter_named(self, name: str) -> UUID:
        """The matter of that name, created the first time (the command line's shared matter)."""
        return await self.service.get_or_create_matter(name)

    # -- use cases ------------------------------------------------------------------------------

    async def offered_engine(self, name: str) -> str:
        """The engine, if it exists and (as far as the workers have said) some worker can run it.

        With no worker heard from lately, or Redis not answering, it cannot be known: the
        chunks then wait in the database until a worker that can run them takes them.
        """
        if name not in available_engines():
            shown = name if len(name) <= 40 else name[:40] + "..."  # an error echoes no payload
            raise EngineNotOfferedError(
                f"unknown OCR engine {shown!r}; choose one of {', '.join(available_engines())}"
            )
        try:
            offered = await self.queue.engine_offered(name)
        except QueueUnavailableError:
            offered = None
        if offered is False:
            raise EngineNotOfferedError(
                f"no worker can run the OCR engine {name!r} (credentials or binary missing)"
            )
        return name

    async def offered_language(self, engine: str, language: str) -> str:
        """The language, if it is well formed and (for an engine that reads with tesseract, as far
        as the workers have said) some worker reads every code of it.

        As with engines, no word from any worker (or no Redis) cannot be known, and is accepted:
        a worker without the language fails the chunks for good (`engine_unavailable`).
        """
        check_language(language)
        if not engine_spec(engine).tesseract_languages:
            return language  # a hint to google-vision; nothing to text-layer and null
        try:
            workers = await self.queue.worker_languages()
        except QueueUnavailableError:
            workers = []
        codes = set(language_codes(language))
        if not workers or any(codes <= reads for reads in workers):
            return language
        everywhere = set().union(*workers)
        if missing := [code for code in language_codes(language) if code not in everywhere]:
            raise LanguageNotOfferedError(not_installed(missing, everywhere, where=" on any worker"))
        raise LanguageNotOfferedError(
            f"no one worker reads every language of {language!r} "
            f"(workers read {', '.join('+'.join(sorted(reads)) for reads in workers)})"
        )

    async def submit(
        self,
        pdf: Path,
        *,
        matter_id: UUID,
        engine: str,
        language: str = DEFAULT_LANGUAGE,
        chunk_pages: int | None = None,
        workers: int = 1,
        filename: str | None = None,
        keep_source: bool = False,
        start: bool = True,
    ) -> StartedDocument:
        """Register a PDF as a document read in `language` and (with start) plan, cut and enqueue
        its chunks.

        keep_source stores the original in the bucket, so a document registered
        without start can be started later (start()). The document comes back as
        the database holds it after the start.
        """
        started = await start_document(
            self.service,
            self.store,
            self.queue,
            pdf,
            matter_id=matter_id,
            engine=engine,
            language=language,
            chunk_pages=chunk_pages,
            workers=workers,
            filename=filename,
            keep_source=keep_source,
            plan=start,
            reader=self.reader,
        )
        if not start:
            return started
        return await self._as_now(started)

    async def resume(
        self, pdf: Path, *, matter_id: UUID, engine: str, language: str = DEFAULT_LANGUAGE, searchable: bool
    ) -> StartedDocument | None:
        """The document a stopped run left under way for this file, taken up again
        (app.services.resume), or None: then submit starts it."""
        return await resume_document(
            self.service,
            self.queue,
            pdf,
            matter_id=matter_id,
            engine=engine,
            language=language,
            searchable=searchable,
        )

    async def _as_now(self, started: StartedDocument) -> StartedDocument:
        """started with its document as the database holds it now; as started, when the database
        stops answering after the start was committed: the document exists and its chunks are
        queued, so the caller must get its id, not an error (which had a user submit it again)."""
        try:
            return replace(started, document=await self.service.get_document(started.document.id))
        except RepositoryUnavailableError as exc:
            log.warning("document_reread_failed", document_id=str(started.document.id), error=str(exc))
            return started

    async def start(self, document: Document, *, chunk_pages: int | None = None) -> StartedDocument:
        """Plan a registered document from its stored source (OCRAlreadyStartedError the second
        time); the document comes back as it is now, processing."""
        await self.offered_engine(document.engine)
        await self.offered_language(document.engine, document.language)
        planned = await plan_document(
            self.service, self.store, self.queue, document, chunk_pages=chunk_pages, reader=self.reader
        )
        return await self._as_now(planned)

    async def retry(self, document_id: IdLike) -> Retried:
        """Every failed chunk of the document back to the queue, due now (a person asked)."""
        document = await self.service.get_document(document_id)
        chunks = await retry_failed(self.service, self.queue, document.id, force=True)
        return Retried(document.id, chunks)

    async def result(self, document: Document) -> MergedResult:
        """The merged result, verified against its checksum, rebuilt from the verified chunk
        results when it went missing (ResultPendingError while OCR runs, ResultNotReadyError
        for a failed document)."""
        return await document_result(self.service, self.store, self.queue, document)

    async def searchable_pdf(self, document: Document) -> StoredFile:
        """Where the searchable PDF is and its checksum (NoSearchablePdfError when there is none)."""
        return await searchable_pdf_of(self.service, self.store, self.queue, document)

    async def searchable_pdf_file(self, document: Document, stored: StoredFile, dest: Path) -> StoredFile:
        """The searchable PDF written to dest, verified (ResultRebuildingError while it is rebuilt)."""
        return await searchable_pdf_file(self.service, self.store, self.queue, document, stored, dest)

    async def searchable_pdf_local_file(self, document: Document, stored: StoredFile) -> Path | None:
        """The searchable PDF's own file, verified, where the store keeps one here (a local
        directory); None otherwise (ResultRebuildingError while it is rebuilt)."""
        return await searchable_pdf_local_file(self.service, self.store, self.queue, document, stored)

    async def signed_url(self, stored: StoredFile, expires_in: int) -> str | None:
        """A download URL from the blob store (Supabase Storage); None for a local directory."""
        return await self.store.signed_url(stored.path, expires_in)

    async def get(self, document_id: IdLike) -> Document:
        return await self.service.get_document(document_id)

    async def result_of(self, document_id: IdLike) -> tuple[Document, MergedResult]:
        document = await self.service.get_document(document_id)
        return document, await self.result(document)

    async def progress(self, document_id: IdLike, user: UUID) -> tuple[Document, ChunkProgress]:
        """The document and its chunks' aggregates in one round trip, for the user's pollers."""
        return await self.service.get_progress_for_user(document_id, user)

    async def chunks(self, document: Document) -> list[DocumentOCRChunk]:
        return await self.service.get_chunks_by_document(document.id)

    async def status(self, document_id: IdLike, *, with_failed: bool = True) -> DocumentStatusReport:
        """Where the document stands (the command line's `status`, and `run` while it waits)."""
        document = await self.service.get_document(document_id)
        progress = await self.service.get_chunk_progress(document.id)
        failed = await self.service.get_failed_chunks(document.id) if with_failed else []
        location = None
        if document.ocr_status is DocumentStatus.COMPLETED and document.result_storage_path:
            location = str(self.store.location(document.result_storage_path))
        return DocumentStatusReport(document, progress, failed, location)
