"""Vision's word boxes, in the geometry every engine's boxes share: pixels at the page's dpi of
the page as displayed, turned clockwise by its rotation until its text is upright.

The loopback server answers with what each page's text layer says, and where (read_pages in
tests/vision_fake.py). The test knows where it drew every word independently of that: it draws
each word with reportlab at a known place in the text's own frame, upright there, and works out
where that place lands once the page is turned so the text is upright, from the page's
visible rectangle alone (a /Rotate entry does not change it, only the turn that undoes it).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import grpc
import pypdfium2 as pdfium
import pytest
from arq.connections import ArqRedis
from google.cloud import vision_v1
from pypdf import PdfReader, PdfWriter
from pypdf.generic import RectangleObject
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

from app.core.config import Settings
from app.engines._pages import RENDER_DPI
from app.engines.base import Word
from app.engines.google_vision import GoogleVisionEngine
from app.models.ocr_chunk import ChunkStatus
from app.models.results import ChunkResult, MergedResult, WordBox
from app.pdf.lost import placeholder_pdf
from app.services.planner import start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime
from app.storage.base import get_verified
from tests.integration.conftest import burst_worker
from tests.vision_fake import VisionServer, read_pages, word_confidence

FONT, SIZE = "Helvetica", 12.0
CAP_HEIGHT = 0.718 * SIZE  # Helvetica's capitals and ascenders stand this far above the baseline
TOLERANCE = 3.0  # points: PDFium's glyph boxes against the font's nominal ones
# Lines of words as drawn, top line first; each word starts GAP after the one before.
LINES = (("Alpha", "Bravo"), ("Charlie", "Delta", "Echo"), ("Foxtrot", "Golf"))
GAP = 6.0
LEFT, TOP_BASELINE, LEADING = -80.0, 40.0, 20.0  # where the lines start, in the text's frame
USER_SPACE = (300.0, 500.0)  # the pages' media box: a portrait page


@dataclass(frozen=True)
class Case:
    """A page: its /Rotate, the counter-clockwise turn its text is drawn at in user space, its crop
    box (None: the media box), and the clockwise turn that sets its text upright as displayed."""

    name: str
    rotate: int
    text_turn: int
    rotation: int
    crop: tuple[float, float, float, float] | None = None


CASES = (
    Case("upright", rotate=0, text_turn=0, rotation=0),
    Case("text reading upward", rotate=0, text_turn=90, rotation=90),
    Case("text upside down", rotate=0, text_turn=180, rotation=180),
    Case("text reading downward", rotate=0, text_turn=270, rotation=270),
    Case("/Rotate 90 over level text", rotate=90, text_turn=0, rotation=270),
    Case("/Rotate 270 over level text", rotate=270, text_turn=0, rotation=90),
    Case("/Rotate 90 sets turned text upright", rotate=90, text_turn=90, rotation=0),
    Case("cropped, /Rotate 90, upright", rotate=90, text_turn=90, rotation=0, crop=(20, 30, 280, 470)),
)


@dataclass(frozen=True)
class Drawn:
    text: str
    box: tuple[float, float, float, float]  # points, in the frame of the page turned upright


def _drawn_words() -> list[tuple[str, float, float]]:
    """(word, x, baseline y) in the text's own frame, in reading order."""
    words = []
    for row, line in enumerate(LINES):
        x = LEFT
        for word in line:
            words.append((word, x, TOP_BASELINE - row * LEADING))
            x += stringWidth(word, FONT, SIZE) + GAP
    return words


def _to_text_frame(case: Case, x: float, y: float) -> tuple[float, float]:
    """A user-space point in the text's frame: the page's centre turned by the text's turn."""
    cx, cy = USER_SPACE[0] / 2, USER_SPACE[1] / 2
    angle = math.radians(-case.text_turn)
    dx, dy = x - cx, y - cy
    return dx * math.cos(angle) - dy * math.sin(angle), dx * math.sin(angle) + dy * math.cos(angle)


def expected_words(case: Case) -> list[Drawn]:
    """Where each word lies on the page turned so its text is upright: its visible rectangle seen
    from the text's frame, with y down."""
    x0, y0, x1, y1 = case.crop or (0.0, 0.0, *USER_SPACE)
    corners = [_to_text_frame(case, x, y) for x in (x0, x1) for y in (y0, y1)]
    left = min(x for x, _ in corners)
    top = max(y for _, y in corners)
    return [
        Drawn(word, (x - left, top - y - CAP_HEIGHT, x - left + stringWidth(word, FONT, SIZE), top - y))
        for word, x, y in _drawn_words()
    ]


def upright_size(case: Case) -> tuple[float, float]:
    """The page's size in points once turned upright."""
    x0, y0, x1, y1 = case.crop or (0.0, 0.0, *USER_SPACE)
    return (y1 - y0, x1 - x0) if case.text_turn in (90, 270) else (x1 - x0, y1 - y0)


def make_pdf(cases: tuple[Case, ...], mode: int = 0) -> bytes:
    """One page per case: the lines drawn in the text's frame (in text render mode `mode`), then
    /Rotate and the crop box set."""
    drawn = io.BytesIO()
    pdf = canvas.Canvas(drawn, pagesize=USER_SPACE)
    for case in cases:
        pdf.translate(USER_SPACE[0] / 2, USER_SPACE[1] / 2)
        pdf.rotate(case.text_turn)
        pdf.setFont(FONT, SIZE)
        for word, x, y in _drawn_words():
            text = pdf.beginText(x, y)
            text.setTextRenderMode(mode)
            text.textOut(word)
            pdf.drawText(text)
        pdf.showPage()
    pdf.save()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(drawn.getvalue())))
    for page, case in zip(writer.pages, cases, strict=True):
        if case.rotate:
            page.rotate(case.rotate)
        if case.crop:
            page.cropbox = RectangleObject(case.crop)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def engine(vision: VisionServer) -> GoogleVisionEngine:
    """The engine against the loopback server, set to answer with each page's text layer."""
    vision.handler = read_pages
    return GoogleVisionEngine(
        endpoint=f"127.0.0.1:{vision.port}", insecure=True, max_concurrency=2, timeout_seconds=10
    )


def in_points(bbox: tuple[int, int, int, int], dpi: int | None) -> tuple[float, ...]:
    return tuple(v * 72 / (dpi or RENDER_DPI) for v in bbox)


def assert_where_drawn(words: Sequence[Word] | Sequence[WordBox], dpi: int | None, case: Case) -> None:
    """The words, in the order drawn, each within TOLERANCE of where it was drawn, inside the page."""
    expected = expected_words(case)
    assert [w.text for w in words] == [d.text for d in expected], case.name  # reading order
    scale = (dpi or RENDER_DPI) / 72
    width, height = upright_size(case)
    for word, drawn in zip(words, expected, strict=True):
        got = in_points(word.bbox, dpi)
        assert all(abs(g - e) <= TOLERANCE for g, e in zip(got, drawn.box, strict=True)), (
            case.name,
            word.text,
            got,
            drawn.box,
        )
        x0, y0, x1, y1 = word.bbox
        assert 0 <= x0 < x1 <= math.ceil(width * scale), (case.name, word)
        assert 0 <= y0 < y1 <= math.ceil(height * scale), (case.name, word)


def test_words_come_in_reading_order_where_they_are_drawn(vision: VisionServer) -> None:
    (page,) = engine(vision).recognize(make_pdf(CASES[:1]), first_page_number=7)
    assert page.page_number == 7
    assert page.text == "Alpha Bravo\nCharlie Delta Echo\nFoxtrot Golf\n"  # annotation.text, as before
    assert (page.rotation, page.skew, page.dpi) == (0, 0.0, None)  # dpi None: RENDER_DPI
    assert [w.confidence for w in page.words] == [word_confidence(i) for i in range(7)]
    assert page.confidence == round(sum(word_confidence(i) for i in range(7)) / 7, 4)
    assert_where_drawn(page.words, page.dpi, CASES[0])
    # at 300 DPI: Alpha starts 70 points from the left edge (its x of -80 from the centre)
    assert abs(page.words[0].bbox[0] - 70 * RENDER_DPI / 72) <= TOLERANCE * RENDER_DPI / 72


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_page_is_turned_until_its_text_is_upright(vision: VisionServer, case: Case) -> None:
    (page,) = engine(vision).recognize(make_pdf((case,)), first_page_number=1)
    assert (page.rotation, page.skew) == (case.rotation, 0.0), case.name
    assert_where_drawn(page.words, page.dpi, case)


def test_pages_of_a_chunk_each_have_their_own_turn(vision: VisionServer) -> None:
    """Seven pages in two requests (five, then two), each page's boxes in its own frame."""
    pages = engine(vision).recognize(make_pdf(CASES[1:]), first_page_number=1)
    assert sorted(len(r.requests[0].pages) for r in vision.requests) == [2, 5]
    assert [p.rotation for p in pages] == [c.rotation for c in CASES[1:]]
    for page, case in zip(pages, CASES[1:], strict=True):
        assert_where_drawn(page.words, page.dpi, case)


def test_the_displayed_size_is_pdfiums_page_size() -> None:
    """The frame the engine scales Vision's fractions by: PDFium's page size, read from the page
    dictionary, is the crop box with /Rotate applied, as it renders the page."""
    document = pdfium.PdfDocument(make_pdf(CASES))
    try:
        sizes = [document.get_page_size(i) for i in range(len(document))]
        rendered = [document[i].render(scale=1).to_pil().size for i in range(len(document))]
    finally:
        document.close()
    assert sizes[0] == (300.0, 500.0)
    assert sizes[4] == (500.0, 300.0)  # /Rotate 90: landscape as displayed
    assert sizes[7] == (440.0, 260.0)  # the crop box, turned
    assert [tuple(round(v) for v in s) for s in sizes] == rendered


def _page_two_refused(request: vision_v1.BatchAnnotateFilesRequest) -> vision_v1.BatchAnnotateFilesResponse:
    response = read_pages(request)
    response.responses[0].responses[1].error.code = grpc.StatusCode.INVALID_ARGUMENT.value[0]
    response.responses[0].responses[1].error.message = "Bad image data."
    return response


def test_a_failed_page_has_no_words_and_no_turn(vision: VisionServer) -> None:
    cases = (CASES[0], CASES[1], CASES[4])
    recognizer = engine(vision)
    vision.handler = _page_two_refused
    pages = recognizer.recognize(make_pdf(cases), first_page_number=1)
    failed = pages[1]
    assert failed.error is not None
    assert failed.error.code == "vision_error"
    assert (failed.text, failed.words, failed.rotation, failed.skew) == ("", (), None, None)
    for page, case in ((pages[0], cases[0]), (pages[2], cases[2])):
        assert page.error is None
        assert page.rotation == case.rotation
        assert_where_drawn(page.words, page.dpi, case)


def test_a_lost_page_stays_a_failed_page(vision: VisionServer) -> None:
    """A placeholder for a page lost in a damaged file is failed (page_lost), not a blank page
    Vision read; the pages around it keep their words."""
    document = pdfium.PdfDocument(make_pdf((CASES[0], CASES[2])))
    lost = pdfium.PdfDocument(placeholder_pdf("the page's content stream is cut off"))
    document.import_pages(lost, index=1)
    out = io.BytesIO()
    document.save(out)
    document.close()
    lost.close()
    pages = engine(vision).recognize(out.getvalue(), first_page_number=1)
    assert [p.error.code if p.error else None for p in pages] == [None, "page_lost", None]
    assert (pages[1].words, pages[1].rotation) == ((), None)
    assert_where_drawn(pages[0].words, None, CASES[0])
    assert_where_drawn(pages[2].words, None, CASES[2])


@pytest.fixture
def pipeline_settings(pipeline_settings: Settings, vision: VisionServer) -> Settings:
    """The pipeline's OCR processes build google-vision against the loopback server."""
    vision.handler = read_pages
    return pipeline_settings.model_copy(
        update={"google_vision_endpoint": f"127.0.0.1:{vision.port}", "google_vision_insecure": True}
    )


async def test_the_chunk_result_carries_visions_words(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    cases = (CASES[0], CASES[1], CASES[4])
    (tmp_path / "sideways.pdf").write_bytes(make_pdf(cases))
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        tmp_path / "sideways.pdf",
        matter_id=matter_id,
        engine="google-vision",
        chunk_pages=5,
    )
    await burst_worker(arq_redis, runtime).main()

    (chunk,) = await runtime.service.get_chunks_by_document(started.document.id)
    assert chunk.status is ChunkStatus.COMPLETED
    assert chunk.result_storage_path is not None
    assert chunk.result_checksum is not None
    stored = await get_verified(runtime.store, chunk.result_storage_path, chunk.result_checksum)
    result = ChunkResult.model_validate_json(stored)
    assert result.to_bytes() == stored  # what was stored is the canonical serialisation
    assert result.engine == "google-vision"
    for page, case in zip(result.pages, cases, strict=True):
        assert (page.rotation, page.skew, page.dpi) == (case.rotation, 0.0, None)
        assert page.words is not None
        assert_where_drawn(page.words, page.dpi, case)


def pdfium_words(pdf: bytes) -> list[list[tuple[str, tuple[float, float]]]]:
    """Each page's words as PDFium reads them, with the centre of each word's box in user space."""
    document = pdfium.PdfDocument(pdf)
    pages = []
    try:
        for page in document:
            text = page.get_textpage()
            words: list[tuple[str, tuple[float, float]]] = []
            chars: list[tuple[str, tuple[float, float, float, float]]] = []
            for index in range(text.count_chars()):
                char = text.get_text_range(index, 1)
                if char.strip():
                    chars.append((char, text.get_charbox(index)))
                    continue
                if chars:
                    words.append(_word(chars))
                    chars = []
            if chars:
                words.append(_word(chars))
            pages.append(words)
    finally:
        document.close()
    return pages


def _word(chars: list[tuple[str, tuple[float, float, float, float]]]) -> tuple[str, tuple[float, float]]:
    left = min(box[0] for _, box in chars)
    bottom = min(box[1] for _, box in chars)
    right = max(box[2] for _, box in chars)
    top = max(box[3] for _, box in chars)
    return "".join(c for c, _ in chars), ((left + right) / 2, (bottom + top) / 2)


async def test_visions_words_make_a_searchable_pdf_through_the_same_renderer(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """Vision's word boxes (a sideways page and /Rotate pages among them) become a text layer with
    each word over the same place as the page's own copy of it, and result.pdf is grafted. The
    page's copy is invisible, an earlier OCR's layer: ours takes its place (text the page shows
    is not laid over again, test_text_layer_shown_text)."""
    cases = (CASES[0], CASES[1], CASES[4])
    source = make_pdf(cases, mode=3)
    (tmp_path / "sideways.pdf").write_bytes(source)
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        tmp_path / "sideways.pdf",
        matter_id=matter_id,
        engine="google-vision",
        chunk_pages=5,
    )
    await burst_worker(arq_redis, runtime).main()

    (chunk,) = await runtime.service.get_chunks_by_document(started.document.id)
    assert chunk.result_storage_path is not None
    assert chunk.result_checksum is not None
    result = ChunkResult.model_validate_json(
        await get_verified(runtime.store, chunk.result_storage_path, chunk.result_checksum)
    )
    assert result.text_layer is not None
    layer = await get_verified(runtime.store, result.text_layer.path, result.text_layer.sha256)
    drawn, laid = pdfium_words(source), pdfium_words(layer)
    for number, (original, ours) in enumerate(zip(drawn, laid, strict=True), start=1):
        assert sorted(w for w, _ in ours) == sorted(w for w, _ in original), f"page {number}: other words"
        for word, (x, y) in original:
            nearest = min(math.hypot(lx - x, ly - y) for w, (lx, ly) in ours if w == word)
            assert nearest <= TOLERANCE, f"page {number}: {word} is {nearest:.1f} pt from its place"

    document = await runtime.service.get_document(started.document.id)
    assert document.result_storage_path is not None
    assert document.result_checksum is not None
    merged = MergedResult.model_validate_json(
        await get_verified(runtime.store, document.result_storage_path, document.result_checksum)
    )
    assert merged.searchable_pdf is not None
    grafted = await get_verified(runtime.store, merged.searchable_pdf.path, merged.searchable_pdf.sha256)
    for number, words in enumerate(pdfium_words(grafted), start=1):  # ours in place of the page's
        assert sorted(w for w, _ in words) == sorted(w for w, _ in drawn[number - 1]), f"page {number}"
