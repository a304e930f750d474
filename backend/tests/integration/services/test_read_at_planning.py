"""Pages whose text layer is their text are read while planning: their chunks are created
completed, with stored, checksummed results, and never reach the queue (issue 18)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from uuid import UUID

import pikepdf
import pytest
from arq.connections import ArqRedis

from app.core.config import Settings
from app.models.document import DocumentCreate, DocumentStatus
from app.models.ocr_chunk import ChunkStatus, DocumentOCRChunk
from app.models.results import ChunkResult
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from app.services import planner
from app.services.documents import Documents
from app.services.merge import read_merged
from app.services.queue import QUEUE_NAME, ArqJobQueue
from app.services.recovery import sweep
from app.services.runtime import Runtime
from app.services.text_reader import TextReader
from app.storage.base import get_verified
from tests.integration.conftest import burst_worker
from tests.layered_pdfs import LayeredPdf, hidden, line


@pytest.fixture
async def reader(pipeline_settings: Settings) -> AsyncIterator[TextReader]:
    reader = TextReader(pipeline_settings.model_copy(update={"read_text_at_planning": True}))
    yield reader
    await reader.close()


@pytest.fixture
def documents(runtime: Runtime, arq_redis: ArqRedis, reader: TextReader) -> Documents:
    return Documents(runtime.service, runtime.store, ArqJobQueue(arq_redis), reader)


async def _queued(arq_redis: ArqRedis) -> int:
    return int(await arq_redis.zcard(QUEUE_NAME))


async def _assert_read_at_planning(runtime: Runtime, chunk: DocumentOCRChunk) -> ChunkResult:
    """The chunk was completed by the planner, in one attempt, and its stored result verifies."""
    assert chunk.status is ChunkStatus.COMPLETED
    assert (chunk.worker_id, chunk.attempt_count) == ("planner", 1)
    assert chunk.result_storage_path
    assert chunk.result_checksum
    data = await get_verified(runtime.store, chunk.result_storage_path, chunk.result_checksum)
    result = ChunkResult.model_validate_json(data)
    assert (result.page_start, result.page_end) == (chunk.page_start, chunk.page_end)
    assert {p.source for p in result.pages} == {"text-layer"}
    return result


@pytest.mark.parametrize("engine", ["auto", "text-layer"])
async def test_a_born_digital_document_is_complete_when_its_start_returns(
    documents: Documents, runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, engine: str
) -> None:
    texts = make_born_digital_pdf(tmp_path / "born.pdf", pages=30, seed=5)

    started = await documents.submit(tmp_path / "born.pdf", matter_id=matter_id, engine=engine, workers=2)

    assert started.document.ocr_status is DocumentStatus.COMPLETED
    assert await _queued(arq_redis) == 0  # no chunk and no merge went to a worker
    chunks = await documents.chunks(started.document)
    assert [(c.page_start, c.page_end) for c in chunks] == [(1, 30)]  # one read run, one chunk
    for chunk in chunks:
        await _assert_read_at_planning(runtime, chunk)
    status = await documents.status(started.document.id)
    assert (status.progress.completed, status.progress.total, status.progress.pages_completed) == (1, 1, 30)
    merged = await read_merged(runtime.store, started.document)
    assert merged is not None
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]
    assert merged.searchable_pdf is None  # no page was OCR'd: the original is its own searchable PDF


async def test_only_scanned_pages_reach_the_workers(
    documents: Documents, runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    born = make_born_digital_pdf(tmp_path / "born.pdf", pages=24, seed=2)
    scanned = make_scanned_pdf(tmp_path / "scan.pdf", pages=2, seed=4)
    mixed = tmp_path / "mixed.pdf"
    with pikepdf.open(tmp_path / "born.pdf") as out, pikepdf.open(tmp_path / "scan.pdf") as scan:
        out.pages[12:12] = scan.pages  # pages 13-14 are scans between two runs of 12 text pages
        out.save(mixed)

    started = await documents.submit(mixed, matter_id=matter_id, engine="auto", workers=2)

    assert started.document.ocr_status is DocumentStatus.PROCESSING
    chunks = sorted(await documents.chunks(started.document), key=lambda c: c.page_start)
    read = [c for c in chunks if c.status is ChunkStatus.COMPLETED]
    left = [c for c in chunks if c.status is ChunkStatus.PENDING]
    assert [(c.page_start, c.page_end) for c in read] == [(1, 12), (15, 26)]
    assert sorted(p for c in left for p in range(c.page_start, c.page_end + 1)) == [13, 14]
    assert await _queued(arq_redis) == len(left)  # a job for each chunk to OCR, none for the others
    for chunk in read:
        await _assert_read_at_planning(runtime, chunk)

    await burst_worker(arq_redis, runtime).main()

    document = await documents.get(started.document.id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    merged = await read_merged(runtime.store, document)
    assert merged is not None
    assert [p.source for p in merged.pages] == ["text-layer"] * 12 + ["ocr"] * 2 + ["text-layer"] * 12
    assert [p.text.split() for p in merged.pages[:12]] == [t.split() for t in born[:12]]
    assert [p.text.split() for p in merged.pages[14:]] == [t.split() for t in born[12:]]
    for page, expected in zip(merged.pages[12:14], scanned, strict=True):
        assert expected.split()[0] in page.text  # the OCR'd pages hold their scan's words


async def test_an_engine_that_reads_no_text_layer_plans_as_before(
    documents: Documents, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "born.pdf", pages=6, seed=1)

    started = await documents.submit(
        tmp_path / "born.pdf", matter_id=matter_id, engine="tesseract", workers=2
    )

    assert {c.status for c in started.chunks} == {ChunkStatus.PENDING}
    assert await _queued(arq_redis) == len(started.chunks) == 6  # plan_chunks: 6 pages on 2 workers


async def test_a_planner_that_dies_before_merging_leaves_the_merge_to_the_sweep(
    runtime: Runtime, arq_redis: ArqRedis, reader: TextReader, matter_id: UUID, tmp_path: Path
) -> None:
    """The rows are completed in the start's statement; the merge after it is the only step a crash
    can lose, and the sweep finds the document ready to merge. The planner's own steps are run
    here up to that statement, as a planner killed right after it would have."""
    pdf = tmp_path / "born.pdf"
    texts = make_born_digital_pdf(pdf, pages=10, seed=8)
    info = await planner._inspect(runtime.service, pdf, tmp_path)
    document = await runtime.service.create_document(
        DocumentCreate(
            matter_id=matter_id,
            filename=pdf.name,
            source_path=str(pdf),
            page_count=info.page_count,
            file_sha256=info.sha256,
            engine="auto",
        )
    )
    read = await planner._read(reader, "auto", pdf, info)
    target = planner._Target(matter_id, document.id, "auto", document.language)
    ranges = await planner._cut_and_upload(runtime.store, pdf, target, info, read, None, 2, [])
    chunks = await runtime.service.start_document(document.id, ranges)
    assert {c.status for c in chunks} == {ChunkStatus.COMPLETED}
    assert (await runtime.service.get_document(document.id)).ocr_status is DocumentStatus.PROCESSING

    report = await sweep(runtime.service, ArqJobQueue(arq_redis))
    await burst_worker(arq_redis, runtime).main()

    assert report.finalize_enqueued == 1
    document = await runtime.service.get_document(document.id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    merged = await read_merged(runtime.store, document)
    assert merged is not None
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]


@pytest.mark.parametrize("engine", ["auto", "tesseract"])
async def test_what_a_hidden_layer_holds_is_neither_read_nor_ocrd(
    documents: Documents, runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, engine: str
) -> None:
    """A layer the document's configuration hides: auto read the page's text layer with it (PDFium's
    text page takes every layer), and a worker OCR'd it (a chunk's cut lost the catalog that hides
    it, so its render drew every layer)."""
    doc = LayeredPdf()
    off = doc.group("Answers", on=False)
    answers = doc.form(line(450, "Answer hidden quartz", size=24), oc=off)
    for number in (1, 2):
        doc.page(
            line(700, f"Question {number} visible amber", size=24)
            + hidden("off", line(600, "Secret hidden jasper", size=24))
            + b"/Fm1 Do\n",
            properties={"off": off},
            xobjects={"Fm1": answers},
        )
    pdf = doc.save(tmp_path / "layered.pdf")

    started = await documents.submit(pdf, matter_id=matter_id, engine=engine, workers=2)
    await burst_worker(arq_redis, runtime).main()

    document = await documents.get(started.document.id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    merged = await read_merged(runtime.store, document)
    assert merged is not None
    assert [p.source for p in merged.pages] == ["text-layer" if engine == "auto" else "ocr"] * 2
    for number, page in enumerate(merged.pages, start=1):
        assert page.text.split()[:4] == ["Question", str(number), "visible", "amber"]
        assert "hidden" not in page.text.lower()
    assert any("hides layers (Answers)" in warning for warning in started.info.warnings)
