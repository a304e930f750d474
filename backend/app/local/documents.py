"""`chunk-ocr submit | status | result | retry`: one document at a time, on the local stack.

Each command opens the stack, calls the documents service (app.services.documents)
once, closes the stack and presents what came back.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Any
from uuid import UUID

from app.api.schemas import ProgressView
from app.core.config import Settings
from app.core.errors import InvalidInputError
from app.local.stack import cli_matter, open_stack
from app.models.document import DocumentStatus
from app.services.documents import DocumentStatusReport, Retried


async def submit(
    settings: Settings,
    pdf: Path,
    *,
    engine: str,
    language: str,
    chunk_pages: int | None,
    matter: UUID | None,
) -> UUID:
    stack = await open_stack(settings)
    try:
        documents = stack.documents
        started = await documents.submit(
            pdf,
            matter_id=await cli_matter(stack, matter),
            engine=engine,
            language=language,
            chunk_pages=chunk_pages,
        )
    finally:
        await stack.close()
    return started.document.id


async def status(settings: Settings, document_id: str, *, as_json: bool) -> None:
    stack = await open_stack(settings)
    try:
        report = await stack.documents.status(document_id)
    finally:
        await stack.close()
    print_status(report, as_json=as_json)


def print_status(report: DocumentStatusReport, *, as_json: bool) -> None:
    document = report.document
    view = ProgressView.of(document, report.progress, datetime.now(UTC))
    if as_json:
        body: dict[str, Any] = {
            "document": document.model_dump(mode="json", by_alias=True),
            # the body GET /documents/{id}/ocr/progress returns
            "progress": view.model_dump(mode="json", by_alias=True),
            "failedChunks": [c.model_dump(mode="json", by_alias=True) for c in report.failed_chunks],
            "resultLocation": report.result_location,
        }
        print(json.dumps(body, indent=2))
        return
    eta = f", about {view.eta_seconds:.0f} s left" if view.eta_seconds is not None else ""
    print(
        f"{document.filename}: {view.status.value}, {view.pages_done}/{view.pages_total} pages "
        f"({view.percent:.1f}%){eta}, chunks: {view.completed} completed, {view.processing} processing, "
        f"{view.pending} pending, {view.failed} failed"
    )
    for chunk in report.failed_chunks:
        print(
            f"  chunk {chunk.chunk_index} (pages {chunk.page_start}-{chunk.page_end}): "
            f"{chunk.error_code}: {chunk.error_message}"
        )
    if document.merge_error and document.ocr_status is DocumentStatus.PROCESSING:
        print(
            f"  merge put off (a worker tries again; merges started: {document.finalize_attempt}): "
            f"{document.merge_error}"
        )
    if document.pages_failed:
        print(
            f"  {document.pages_failed} of {document.page_count} pages could not be read "
            f"(`chunk-ocr result {document.id} --format json` lists them with the reason)"
        )
    if report.result_location is not None:
        print(f"  result: {report.result_location} (`chunk-ocr result {document.id}` prints it, verified)")


async def result(settings: Settings, document_id: str, *, out_dir: Path | None, fmt: str) -> None:
    """Print the merged result (text, or the JSON with pages and confidences), or write it into
    out_dir as <name>.txt / <name>.json; verified against its checksum, rebuilt if it was lost."""
    if fmt == "pdf":
        await _result_pdf(settings, document_id, out_dir)
        return
    stack = await open_stack(settings)
    try:
        # not completed: ResultPendingError (retryable, exit 1) or ResultNotReadyError (failed, exit 2)
        document, merged = await stack.documents.result_of(document_id)
    finally:
        await stack.close()
    if merged.failed_pages:
        numbers = ", ".join(str(f.page_number) for f in merged.failed_pages[:10])
        more = ", ..." if len(merged.failed_pages) > 10 else ""
        print(
            f"chunk-ocr: warning: {len(merged.failed_pages)} of {merged.page_count} pages could not be "
            f"read and have no text (pages {numbers}{more}; the JSON says why)",
            file=sys.stderr,
        )
    data = merged.text().encode("utf-8") if fmt == "txt" else merged.to_bytes()
    if out_dir is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = out_dir / f"{output_stem(document.filename, document.id)}.{fmt}"
    await asyncio.to_thread(out_dir.mkdir, parents=True, exist_ok=True)
    await asyncio.to_thread(target.write_bytes, data)
    print(target)


async def _result_pdf(settings: Settings, document_id: str, out_dir: Path | None) -> None:
    """The searchable PDF into out_dir as <name>.ocr.pdf (never over the original's name), or to a
    stdout that is not a terminal."""
    if out_dir is None and sys.stdout.isatty():
        raise InvalidInputError("a PDF is not printed to a terminal: give --out DIR, or redirect stdout")
    stack = await open_stack(settings)
    try:
        document = await stack.documents.get(document_id)
        with tempfile.TemporaryDirectory(prefix="chunk-ocr-result-") as tmp:
            scratch = Path(tmp) / "result.pdf"
            stored = await stack.documents.searchable_pdf(document)
            await stack.documents.searchable_pdf_file(document, stored, scratch)  # verified
            if out_dir is None:
                await asyncio.to_thread(_copy_to_stdout, scratch)
                return
            target = out_dir / f"{output_stem(document.filename, document.id)}.ocr.pdf"
            await asyncio.to_thread(out_dir.mkdir, parents=True, exist_ok=True)
            await asyncio.to_thread(shutil.move, scratch, target)
            await asyncio.to_thread(as_user_file, target)
    finally:
        await stack.close()
    print(target)


def as_user_file(path: Path) -> None:
    """Give a file written for the user the mode the user's umask asks for (the store writes its
    own objects owner-only, and a verified copy comes out of it that way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    path.chmod(0o666 & ~mask)


def _copy_to_stdout(path: Path) -> None:
    with path.open("rb") as source:
        shutil.copyfileobj(source, sys.stdout.buffer, 1 << 20)
    sys.stdout.buffer.flush()


def output_stem(filename: str, document_id: UUID) -> str:
    """The stored file name's stem, without any directory part (of either separator)."""
    stem = PurePath(filename.replace("\\", "/")).stem.strip()
    return stem if stem and stem not in (".", "..") else str(document_id)


async def retry(settings: Settings, document_id: str) -> Retried:
    stack = await open_stack(settings)
    try:
        return await stack.documents.retry(document_id)
    finally:
        await stack.close()
