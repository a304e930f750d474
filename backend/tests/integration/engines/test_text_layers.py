"""Text layers as real files have them (tests/corpus/text_layers.py), through text-layer and auto:
short layers in other scripts, spaced-out CJK, FreeText notes and filled forms, garbage layers."""

from __future__ import annotations

import itertools
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject, NumberObject, StreamObject
from rapidfuzz import fuzz
from reportlab.lib.pagesizes import letter
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

from app.engines._page_chars import page_lines
from app.engines._pages import page_text
from app.engines.auto import AutoEngine
from app.engines.tesseract import TesseractEngine
from app.engines.text_layer import TextLayerEngine
from app.pdf.plan import PageRange
from app.pdf.samples import page_text as prose
from app.pdf.samples import render_scan, wrapped
from app.pdf.split import split_pdf
from tests.corpus import Fixture
from tests.corpus.text_layers import (
    FORM_CHECKBOXES,
    FORM_RADIO,
    FORM_TEXT_FIELDS,
    FREETEXT_NOTES,
    VERTICAL_COLUMNS,
    _japanese_font,
    build_all,
    filled_form,
    freetext_notes,
)
from tests.pdf_factories import cer

TEXT_LAYER_FIXTURES = (
    "short-japanese",
    "short-arabic",
    "hebrew-lines",
    "vertical-japanese",
    "spaced-japanese",
    "freetext",
    "form",
    "form-no-appearances",
    "toc",
    "blank-form",
    "bordered-table",
    "math",
    "czech-slovak",
    "serbian-tex",
    "ukrainian-tex",
)
GARBAGE_FIXTURES = ("content-stream-layer", "private-use-layer", "mojibake-layer")


AutoPages = dict[str, tuple[str, str]]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Fixture]:
    return {fixture.name: fixture for fixture in build_all(tmp_path_factory.mktemp("text-layers"))}


@pytest.fixture(scope="module")
def auto_pages(corpus: dict[str, Fixture]) -> AutoPages:
    """(source, text) of each fixture's page under auto, OCR'd once for the module."""
    engine = AutoEngine()
    read = {}
    for name, fixture in corpus.items():
        (page,) = engine.recognize(fixture.path.read_bytes(), 1)
        read[name] = (page.source, page.text)
    return read


@pytest.mark.parametrize("name", TEXT_LAYER_FIXTURES)
def test_auto_takes_the_text_layer_exactly(
    name: str, corpus: dict[str, Fixture], auto_pages: AutoPages
) -> None:
    """Short text in a script OCR cannot read, spaced-out CJK, notes and filled forms."""
    source, text = auto_pages[name]
    assert (source, text.split()) == ("text-layer", corpus[name].expected[0].split())


@pytest.mark.parametrize("name", TEXT_LAYER_FIXTURES)
def test_the_text_layer_engine_reads_the_same(name: str, corpus: dict[str, Fixture]) -> None:
    (page,) = TextLayerEngine().recognize(corpus[name].path.read_bytes(), 1)
    assert page.text.split() == corpus[name].expected[0].split()


@pytest.mark.parametrize("name", GARBAGE_FIXTURES)
def test_a_garbage_layer_is_ocrd(name: str, corpus: dict[str, Fixture], auto_pages: AutoPages) -> None:
    """The page shows the right text; its layer does not: OCR reads what is shown."""
    (layer,) = TextLayerEngine().recognize(corpus[name].path.read_bytes(), 1)
    assert cer(corpus[name].expected[0], layer.text) > 0.15  # the layer really is garbage
    source, text = auto_pages[name]
    assert source == "ocr"
    assert cer(corpus[name].expected[0], text) < 0.05


def test_form_values_come_once_with_or_without_appearance_streams(corpus: dict[str, Fixture]) -> None:
    for name in ("form", "form-no-appearances"):
        (page,) = TextLayerEngine().recognize(corpus[name].path.read_bytes(), 1)
        lines = page.text.split("\n")
        for _, _, value in FORM_TEXT_FIELDS:
            assert lines.count(value) == 1, (name, value)
        ticked = [label for label, _, checked in FORM_CHECKBOXES if checked]
        assert lines.count("Yes") == len(ticked) == 1  # the ticked box; the other adds nothing
        assert [option for option in FORM_RADIO[2] if option in lines] == [FORM_RADIO[3]]


@pytest.mark.parametrize("name", ["form", "form-no-appearances", "freetext"])
def test_a_chunk_cut_from_the_document_reads_the_same(name: str, corpus: dict[str, Fixture]) -> None:
    """The planner's cut copies pages, not the document's /AcroForm: the fields are read from
    their own dictionaries there."""
    (chunk,) = _chunks(corpus[name].path)
    assert pdfium.PdfDocument(chunk).get_formtype() == pdfium.raw.FORMTYPE_NONE  # what makes it hard
    for engine in (TextLayerEngine(), AutoEngine()):
        (page,) = engine.recognize(chunk, 1)
        assert page.text.split() == corpus[name].expected[0].split(), engine.name


def test_annotations_are_left_out_on_request(corpus: dict[str, Fixture]) -> None:
    document = pdfium.PdfDocument(corpus["freetext"].path)
    document.init_forms()
    page = document[0]
    try:
        assert FREETEXT_NOTES[0] in page_text(page, 1)
        assert FREETEXT_NOTES[0] not in page_text(page, 1, annotations=False)
    finally:
        page.close()
        document.close()


@pytest.mark.parametrize("cut", [False, True])
@pytest.mark.parametrize("appearance_streams", [True, False])
def test_ocr_renders_filled_form_fields(tmp_path: Path, appearance_streams: bool, cut: bool) -> None:
    """PDFium draws form fields only through a form environment: without one, an OCR'd form
    page came out as its labels. In a chunk, which has no form to draw them through, the
    tesseract engine reads the fields' values from the form and adds them after the OCR'd text."""
    fixture = filled_form(tmp_path, appearance_streams=appearance_streams)
    (data,) = _chunks(fixture.path) if cut else (fixture.path.read_bytes(),)
    (page,) = TesseractEngine().recognize(data, 1)
    for _, _, value in FORM_TEXT_FIELDS:
        assert _reads(page.text, value), (value, page.text)
        assert page.text.count(value[:12]) <= 1, (value, page.text)  # drawn or added, not both


@pytest.mark.parametrize("cut", [False, True])
def test_a_form_over_a_scan_is_ocrd_with_its_answers(tmp_path: Path, cut: bool) -> None:
    """The fields' answers are not the scan's text: the page is OCR'd, fields drawn in; in a
    chunk, which PDFium cannot draw fields in, the answers follow the OCR'd text."""
    body = prose(0, seed=23, sentences=6)
    path = tmp_path / "scanned-form.pdf"
    pdf = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    pdf.drawImage(ImageReader(render_scan(body)), 0, 0, width=letter[0], height=letter[1])
    answers = [f"Answer number {i} given in full by the applicant" for i in range(6)]
    for i, answer in enumerate(answers):  # over 200 characters of answers, in the bottom margin
        pdf.acroForm.textfield(name=f"a{i}", value=answer, x=72, y=40 + 22 * i, width=468, height=20)
    pdf.save()
    (data,) = _chunks(path) if cut else (path.read_bytes(),)
    (page,) = AutoEngine().recognize(data, 1)
    assert page.source == "ocr"
    assert cer(wrapped(body), page.text[: len(wrapped(body)) + 20]) < 0.05
    assert all(_reads(page.text, answer) for answer in answers), page.text
    assert all(page.text.count(answer[:20]) <= 1 for answer in answers)  # drawn or added, not both


@pytest.mark.parametrize("cut", [False, True])
@pytest.mark.parametrize(
    ("engine", "source"),
    [(AutoEngine(), "text-layer"), (TesseractEngine(), "ocr")],
    ids=["auto", "tesseract"],
)
def test_a_page_with_nothing_but_a_note_gives_the_note(
    tmp_path: Path, engine: AutoEngine | TesseractEngine, source: str, cut: bool
) -> None:
    """Nothing drawn but notes: the page is not rendered (tesseract would read nothing on it), and
    its notes are its text; the tesseract engine gave an empty page."""
    path = tmp_path / "note-only.pdf"
    freetext_notes(tmp_path).path.rename(path)
    writer = PdfWriter(clone_from=PdfReader(path))
    writer.pages[0][NameObject("/Contents")] = writer._add_object(_empty_stream())
    with path.open("wb") as handle:
        writer.write(handle)
    (data,) = _chunks(path) if cut else (path.read_bytes(),)
    (page,) = engine.recognize(data, 1)
    assert (page.source, page.text.split("\n")) == (source, list(FREETEXT_NOTES))


def test_hidden_notes_password_fields_and_values_already_on_the_page_are_not_added(tmp_path: Path) -> None:
    path = tmp_path / "edge.pdf"
    pdf = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 700, "Name:")
    pdf.drawString(174, 706, "Margaret Hamilton")  # the producer drew the value into the page too
    pdf.acroForm.textfield(name="name", value="Margaret Hamilton", x=170, y=700, width=300, height=20)
    pdf.acroForm.textfield(
        name="pin", value="4321", x=170, y=660, width=100, height=20, fieldFlags="password"
    )
    pdf.acroForm.textfield(name="city", value="Boston", x=170, y=620, width=100, height=20)
    pdf.save()
    writer = PdfWriter(clone_from=PdfReader(path))
    city = writer.pages[0]["/Annots"][2].get_object()
    city[NameObject("/F")] = NumberObject(2)  # hidden
    with path.open("wb") as handle:
        writer.write(handle)
    (page,) = TextLayerEngine().recognize(path.read_bytes(), 1)
    assert page.text.split("\n") == ["Name: Margaret Hamilton"]


def _chunks(path: Path) -> list[bytes]:
    """The file cut into one-page chunks as the planner cuts them."""
    count = len(pdfium.PdfDocument(path))
    ranges = [PageRange(chunk_index=i, page_start=i + 1, page_end=i + 1) for i in range(count)]
    return [data for _, data in split_pdf(path, ranges)]


def _reads(text: str, value: str) -> bool:
    """OCR'd text holds value, give or take a character or two."""
    return fuzz.partial_ratio(value, " ".join(text.split())) >= 90


def _empty_stream() -> StreamObject:
    stream = StreamObject()
    stream.set_data(b"")
    return stream


@pytest.mark.parametrize("turn", [90, 270])
def test_a_turned_page_is_ordered_as_it_is_shown(tmp_path: Path, turn: int) -> None:
    """A page whose /Rotate turns its sideways-drawn lines upright: the passes that order text by
    position (right to left, columns) see each line running rightwards, as a reader does."""
    path = tmp_path / f"turned-{turn}.pdf"
    pdf = canvas.Canvas(str(path), pagesize=letter)
    pdf.setPageRotation(turn)
    pdf.setFont(_japanese_font(), 16)
    pdf.translate(*((100, 700) if turn == 270 else (500, 100)))
    pdf.rotate(-90 if turn == 270 else 90)  # drawn down (or up) the page: across it once turned
    for number, line in enumerate(VERTICAL_COLUMNS):
        pdf.drawString(0, -24 * number, line)
    pdf.save()
    document = pdfium.PdfDocument(path)
    try:
        textpage = document[0].get_textpage()
        read = page_lines(textpage, None, turn)
        lines = [drawn for line in read if (drawn := [c for c in line if not c.generated and c.text.strip()])]
        assert [len(line) for line in lines] == [len(text) for text in VERTICAL_COLUMNS]
        for line in lines:
            assert all(after.x > before.x for before, after in itertools.pairwise(line))
        assert page_text(document[0], 1).split() == list(VERTICAL_COLUMNS)
    finally:
        document.close()
