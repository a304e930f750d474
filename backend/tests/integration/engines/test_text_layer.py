from __future__ import annotations

from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest
from reportlab.pdfgen import canvas

from app.engines._pages import page_text as page_text_of
from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine
from app.pdf.samples import _text_pdf, make_born_digital_pdf
from tests.corpus import columns
from tests.corpus.word_gaps import print_html
from tests.integration.engines.conftest import Sample


def nonblank_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_text_layer_is_exact(tmp_path: Path) -> None:
    texts = make_born_digital_pdf(tmp_path / "b.pdf", pages=3, seed=6)
    pages = TextLayerEngine().recognize((tmp_path / "b.pdf").read_bytes(), 5)
    assert [p.page_number for p in pages] == [5, 6, 7]
    assert [p.text.split() for p in pages] == [t.split() for t in texts]
    assert [nonblank_lines(p.text) for p in pages] == [nonblank_lines(t) for t in texts]  # line breaks kept
    assert {(p.source, p.confidence, p.words) for p in pages} == {("text-layer", 1.0, ())}


def test_a_scan_has_no_text_layer(scan_2p: Sample) -> None:
    pages = TextLayerEngine().recognize(scan_2p.data, 1)
    assert [(p.page_number, p.text.strip(), p.source) for p in pages] == [
        (1, "", "text-layer"),
        (2, "", "text-layer"),
    ]


def test_version_names_pdfium() -> None:
    assert TextLayerEngine().version().startswith("pdfium ")


def _hyphenated_pdf(path: Path) -> None:
    """A word broken across two lines at a hyphen: PDFium joins it around a U+0002 mark."""
    pdf = canvas.Canvas(str(path))
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 720, "It was rather difficult to com-")
    pdf.drawString(72, 706, "pile the yearly report in time.")
    pdf.save()


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()])
def test_hyphenated_words_read_whole(tmp_path: Path, engine: TextLayerEngine | AutoEngine) -> None:
    _hyphenated_pdf(tmp_path / "h.pdf")
    raw = pdfium.PdfDocument(tmp_path / "h.pdf")[0].get_textpage().get_text_bounded()
    assert "com\x02pile" in raw  # what PDFium hands over
    (page,) = engine.recognize((tmp_path / "h.pdf").read_bytes(), 1)
    assert "difficult to compile the yearly report" in page.text


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()])
def test_a_hyphen_ending_a_line_before_a_capital_or_a_digit_is_kept(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    """PDFium takes the hyphen of a compound or a code that ends a line for a word broken
    across it ("Anglo\x02Saxon"): the hyphen stays where the line goes on with a capital or a
    digit, and a word broken between syllables still reads whole."""
    pdf = canvas.Canvas(str(tmp_path / "h.pdf"))
    pdf.setFont("Helvetica", 11)
    lines = [
        "The history of the Anglo-",
        "Saxon kingdoms is neces-",
        "sary reading, as COVID-",
        "19 and RSASSA-",
    ]
    for number, line in enumerate([*lines, "PKCS1 were."]):
        pdf.drawString(72, 720 - 14 * number, line)
    pdf.save()
    raw = pdfium.PdfDocument(tmp_path / "h.pdf")[0].get_textpage().get_text_bounded()
    assert "Anglo\x02Saxon" in raw  # what PDFium hands over
    assert "COVID\x0219" in raw
    (page,) = engine.recognize((tmp_path / "h.pdf").read_bytes(), 1)
    assert page.text.split() == (
        [
            "The",
            "history",
            "of",
            "the",
            "Anglo-Saxon",
            "kingdoms",
            "is",
            "necessary",
            "reading,",
            "as",
            "COVID-19",
            "and",
            "RSASSA-PKCS1",
            "were.",
        ]
    )


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()])
def test_control_characters_in_a_text_layer_stay_out_of_the_text(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    """A form feed in a text layer (TeX symbol fonts map glyphs to it) must not split a page.
    (Between lower-case letters it would be read as TeX's fi ligature: test_tex_ligatures.)"""
    line = "The committee met on a wet Tuesday morning to review the harbour accounts."
    second = "the second page of the document"
    (tmp_path / "ff.pdf").write_bytes(
        _text_pdf([f"BEFORE\x0cAFTER {line}\x07", "the second page of the document"])
    )
    pages = engine.recognize((tmp_path / "ff.pdf").read_bytes(), 1)
    assert [p.text.split() for p in pages] == [
        ["BEFORE", "AFTER", *line.split()],
        second.split(),
    ]
    merged = "\f".join(p.text for p in pages)
    assert merged.count("\f") == len(pages) - 1
    assert not any(c in merged for c in "\x07\x0b\r")


LANDSCAPE_ROWS = (
    "Quarterly revenue by region",
    "Region Q1 Q2 Q3 Q4",
    "North 120 130 140 150",
    "South 90 95 100 105",
    "Total 210 225 240 255",
)


def _landscape_pdf(path: Path) -> None:
    """Landscape pages on portrait sheets, as print-to-PDF drivers may write them: a portrait
    MediaBox, /Rotate 90 (then 270), the content drawn turned back so that the page reads
    upright; then the same rows on a page that is not turned."""
    pdf = pikepdf.new()
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
    )
    turned = {90: b"0 1 -1 0 612 0 cm", 270: b"0 -1 1 0 0 792 cm", 0: b""}
    for rotate, cm in turned.items():
        rows = b" ".join(b"(" + row.encode() + b") '" for row in LANDSCAPE_ROWS)
        content = b"q " + cm + b" BT /F1 14 Tf 50 540 Td 22 TL " + rows + b" ET Q"
        page = pikepdf.Dictionary(
            Type=pikepdf.Name.Page,
            MediaBox=[0, 0, 612, 792],
            Rotate=rotate,
            Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)),
            Contents=pdf.make_stream(content),
        )
        pdf.pages.append(pikepdf.Page(page))
    pdf.save(path)


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_a_landscape_page_on_a_portrait_sheet_keeps_its_lines(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    _landscape_pdf(tmp_path / "landscape.pdf")
    pages = engine.recognize((tmp_path / "landscape.pdf").read_bytes(), 1)
    assert [p.source for p in pages] == ["text-layer"] * 3
    for page in pages:
        assert nonblank_lines(page.text) == list(LANDSCAPE_ROWS), page.page_number


def _turned_by_a_viewer(source: Path, path: Path, rotate: int) -> None:
    """source with /Rotate set on each page and nothing else changed, as a viewer saves a page
    it was told to turn: the text stays level in the page's own space."""
    with pikepdf.open(source) as pdf:
        for page in pdf.pages:
            page.Rotate = rotate
        pdf.save(path)


@pytest.mark.parametrize("rotate", [90, 270])
def test_a_page_turned_over_level_text_reads_in_its_own_order(tmp_path: Path, rotate: int) -> None:
    """PDFium gave the lines of a portrait page turned by 90 degrees last first; the page keeps
    its /Rotate for what renders it after."""
    expected = make_born_digital_pdf(tmp_path / "portrait.pdf", pages=2, seed=31)
    _turned_by_a_viewer(tmp_path / "portrait.pdf", tmp_path / "turned.pdf", rotate)
    pages = TextLayerEngine().recognize((tmp_path / "turned.pdf").read_bytes(), 1)
    assert [nonblank_lines(page.text) for page in pages] == [nonblank_lines(text) for text in expected]
    document = pdfium.PdfDocument(tmp_path / "turned.pdf")
    try:
        page = document[0]
        page_text_of(page, 1)
        assert page.get_rotation() == rotate
    finally:
        document.close()


def test_columns_stored_a_row_at_a_time_on_a_turned_page_read_column_by_column(tmp_path: Path) -> None:
    expected = columns.two_columns(tmp_path / "columns.pdf", 4)
    _turned_by_a_viewer(tmp_path / "columns.pdf", tmp_path / "turned.pdf", 90)
    (page,) = TextLayerEngine().recognize((tmp_path / "turned.pdf").read_bytes(), 1)
    assert nonblank_lines(page.text) == expected.splitlines()


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_characters_past_the_basic_plane_are_kept(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    """Mathematical italic letters and an emoji are two of PDFium's characters each (a UTF-16
    surrogate pair): a page with two or more was taken for one whose bounded text ran a row
    together, and read again from its characters, which left them out ("Let  and  be reals").
    The letter-spaced heading has this page read from its characters all the same."""
    source = tmp_path / "page.html"
    source.write_text(
        '<html><body style="font-family: DejaVu Serif; font-size: 14pt">'
        '<h1 style="letter-spacing: 0.3em">CONTENTS</h1>'
        "<p>Let \U0001d465 and \U0001d466 be reals, so \U0001d465 + \U0001d466 = \U0001d467 holds.</p>"
        "<p>The committee met on a wet Tuesday morning \U0001f600 to read the accounts.</p></body></html>",
        encoding="utf-8",
    )
    path = tmp_path / "page.pdf"
    print_html(source, path)
    (page,) = engine.recognize(path.read_bytes(), 1)
    assert (page.source, page.text.split("\n")) == (
        "text-layer",
        [
            "CONTENTS",
            "Let \U0001d465 and \U0001d466 be reals, so \U0001d465 + \U0001d466 = \U0001d467 holds.",
            "The committee met on a wet Tuesday morning \U0001f600 to read the accounts.",
        ],
    )
