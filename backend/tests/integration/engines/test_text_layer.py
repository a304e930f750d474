from __future__ import annotations

from pathlib import Path

from app.engines.text_layer import TextLayerEngine
from app.pdf.samples import make_born_digital_pdf
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
