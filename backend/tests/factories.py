"""Rows for tests, written with plain SQL so they do not depend on the code under test."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from pathlib import Path
from uuid import UUID

import asyncpg

from app.models.ocr_chunk import ChunkRange


async def make_matter(pool: asyncpg.Pool, name: str = "Matter") -> UUID:
    matter_id: UUID = await pool.fetchval("insert into public.matters (name) values ($1) returning id", name)
    return matter_id


async def make_user(pool: asyncpg.Pool, matter_id: UUID | None = None, *, role: str | None = None) -> UUID:
    """A user, a member of matter_id if given: with ``role`` (owner, member, viewer), else the default."""
    user_id: UUID = await pool.fetchval(
        "insert into auth.users (email) values ($1) returning id", f"{uuid.uuid4().hex}@example.com"
    )
    if matter_id is not None:
        if role is None:  # the column's default
            await pool.execute(
                "insert into public.matter_members (matter_id, user_id) values ($1, $2)", matter_id, user_id
            )
        else:
            await pool.execute(
                "insert into public.matter_members (matter_id, user_id, role) values ($1, $2, $3)",
                matter_id,
                user_id,
                role,
            )
    return user_id


async def make_document(pool: asyncpg.Pool, matter_id: UUID | None = None, page_count: int = 100) -> UUID:
    if matter_id is None:
        matter_id = await make_matter(pool)
    document_id: UUID = await pool.fetchval(
        """
        insert into public.documents (matter_id, filename, page_count, file_sha256)
        values ($1, 'scan.pdf', $2, $3) returning id
        """,
        matter_id,
        page_count,
        hashlib.sha256(uuid.uuid4().bytes).hexdigest(),
    )
    return document_id


def ranges(page_count: int, chunk_pages: int) -> list[ChunkRange]:
    return [
        ChunkRange(chunk_index=i, page_start=start, page_end=min(start + chunk_pages - 1, page_count))
        for i, start in enumerate(range(1, page_count + 1, chunk_pages))
    ]


def pdf_with_an_unreadable_page(path: Path, kinds: str) -> Path:
    """Pages by kind: 'd' a born-digital text page, 'h' a page too large to OCR at any useful
    resolution (make_huge_page_pdf: the engines record it as a failed page, page_too_large)."""
    from pypdf import PdfReader, PdfWriter

    from app.pdf.samples import make_born_digital_pdf
    from tests.pdf_factories import make_huge_page_pdf

    writer = PdfWriter()
    for index, kind in enumerate(kinds):
        part = path.with_suffix(f".part{index}.pdf")
        if kind == "h":
            make_huge_page_pdf(part)
        else:
            make_born_digital_pdf(part, 1, seed=index)
        writer.append(PdfReader(part))
    writer.write(path)
    return path


async def lose_chunk_input(
    pool: asyncpg.Pool, storage_root: Path, document_id: UUID, chunk_index: int
) -> None:
    """Delete a planned chunk's input object from local storage (a lost object: the worker fails
    the chunk with the permanent object_not_found, and the document needs a person)."""
    path = await pool.fetchval(
        "select input_storage_path from document_ocr_chunks where document_id = $1 and chunk_index = $2",
        document_id,
        chunk_index,
    )
    assert path, f"chunk {chunk_index} of {document_id} has no input object"
    await asyncio.to_thread(_unlink_object, storage_root, path)


def _unlink_object(storage_root: Path, path: str) -> None:
    """The local store keeps an object at <root>/<bucket>/<path>."""
    (found,) = list(storage_root.glob(f"*/{path}"))
    found.unlink()


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
