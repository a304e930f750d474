"""`chunk-ocr submit | status | result | retry`: one document at a time, on the local stack."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Any
from uuid import UUID

from app.api.schemas import ProgressView
from app.core.config import Settings
from app.local.stack import cli_matter, open_stack
from app.models.document import Document, DocumentStatus
from app.services.merge import document_result
from app.services.planner import start_document
from app.services.recovery import retry_failed


async def submit(
    settings: Settings, pdf: Path, *, engine: str, chunk_pages: int | None, matter: UUID | None
) -> UUID:
    stack = await open_stack(settings)
    try:
        started = await start_document(
            stack.service,
            stack.store,
            stack.queue,
            pdf,
            matter_id=await cli_matter(stack, matter),
            engine=engine,
            chunk_pages=chunk_pages,
        )
    finally:
        await stack.close()
    return started.document.id


async def status(settings: Settings, document_id: str, *, as_json: bool) -> None:
    stack = await open_stack(settings)
    try:
        document = await stack.service.get_document(document_id)
        progress = await stack.service.get_chunk_progress(document.id)
        failed = await stack.service.get_failed_chunks(document.id)
        location = _result_location(stack.store.location, document)
    finally:
        await stack.close()
    view = ProgressView.of(document, progress, datetime.now(UTC))
    if as_json:
        body: dict[str, Any] = {
            "document": document.model_dump(mode="json", by_alias=True),
            # the body GET /documents/{id}/ocr/progress returns
            "progress": view.model_dump(mode="json", by_alias=True),
            "failedChunks": [c.model_dump(mode="json", by_alias=True) for c in failed],
            "resultLocation": location,
        }
        print(json.dumps(body, indent=2))
        return
    eta = f", about {view.eta_seconds:.0f} s left" if view.eta_seconds is not None else ""
    print(
        f"{document.filename}: {view.status.value}, {view.pages_done}/{view.pages_total} pages "
        f"({view.percent:.1f}%){eta}, chunks: {view.completed} completed, {view.processing} processing, "
        f"{view.pending} pending, {view.failed} failed"
    )
    for chunk in failed:
        print(
            f"  chunk {chunk.chunk_index} (pages {chunk.page_start}-{chunk.page_end}): "
            f"{chunk.error_code}: {chunk.error_message}"
        )
    if location is not None:
        print(f"  result: {location} (`chunk-ocr result {document.id}` prints it, verified)")


def _result_location(location: Any, document: Document) -> str | None:
    if document.ocr_status is not DocumentStatus.COMPLETED or not document.result_storage_path:
        return None
    return str(location(document.result_storage_path))


async def result(settings: Settings, document_id: str, *, out_dir: Path | None, fmt: str) -> None:
    """Print the merged result (text, or the JSON with pages and confidences), or write it into
    out_dir as <name>.txt / <name>.json; verified against its checksum, rebuilt if it was lost."""
    stack = await open_stack(settings)
    try:
        document = await stack.service.get_document(document_id)
        # not completed: ResultPendingError (retryable, exit 1) or ResultNotReadyError (failed, exit 2)
        merged = await document_result(stack.service, stack.store, stack.queue, document)
    finally:
        await stack.close()
    data = merged.text().encode("utf-8") if fmt == "txt" else merged.to_bytes()
    if out_dir is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = out_dir / f"{output_stem(document.filename, document.id)}.{fmt}"
    await asyncio.to_thread(out_dir.mkdir, parents=True, exist_ok=True)
    await asyncio.to_thread(target.write_bytes, data)
    print(target)


def output_stem(filename: str, document_id: UUID) -> str:
    """The stored file name's stem, without any directory part (of either separator)."""
    stem = PurePath(filename.replace("\\", "/")).stem.strip()
    return stem if stem and stem not in (".", "..") else str(document_id)


async def retry(settings: Settings, document_id: str) -> tuple[UUID, int]:
    stack = await open_stack(settings)
    try:
        document = await stack.service.get_document(document_id)
        retried = await retry_failed(stack.service, stack.queue, document.id, force=True)
    finally:
        await stack.close()
    return document.id, len(retried)
