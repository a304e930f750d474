from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from reportlab.pdfgen import canvas

from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine
from app.pdf.samples import _text_pdf, make_born_digital_pdf
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
def test_control_characters_in_a_text_layer_stay_out_of_the_text(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    """A form feed in a text layer (TeX symbol fonts map glyphs to it) must not split a page."""
    line = "The committee met on a wet Tuesday morning to review the harbour accounts."
    second = "the second page of the document"
    (tmp_path / "ff.pdf").write_bytes(
        _text_pdf([f"before\x0cafter {line}\x07", "the second page of the document"])
    )
    pages = engine.recognize((tmp_path / "ff.pdf").read_bytes(), 1)
    assert [p.text.split() for p in pages] == [
        ["before", "after", *line.split()],
        second.split(),
    ]
    merged = "\f".join(p.text for p in pages)
    assert merged.count("\f") == len(pages) - 1
    assert not any(c in merged for c in "\x07\x0b\r")
