"""auto: the text layer where a page has real text, tesseract elsewhere, per page."""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from app.engines.auto import AutoEngine
from app.pdf.samples import make_born_digital_pdf
from tests.pdf_factories import cer, make_mixed_pdf, make_scan_with_text_layer


def test_mixed_pdf_takes_each_page_from_the_right_source(tmp_path: Path) -> None:
    texts = make_mixed_pdf(tmp_path / "m.pdf", "dsd", seed=8)
    engine = AutoEngine()
    pages = engine.recognize((tmp_path / "m.pdf").read_bytes(), 11)
    assert [p.page_number for p in pages] == [11, 12, 13]
    assert [p.source for p in pages] == ["text-layer", "ocr", "text-layer"]
    assert pages[0].text.split() == texts[0].split()  # exact, not OCR'd
    assert pages[2].text.split() == texts[2].split()
    assert pages[0].confidence == pages[2].confidence == 1.0
    assert cer(texts[1], pages[1].text) < 0.02
    assert 0.8 < pages[1].confidence <= 1.0
    assert "tesseract" in engine.version()


def test_a_stamp_on_a_scan_is_not_the_page_text(tmp_path: Path) -> None:
    """A Bates number added as text over a scanned page: the body must still be read."""
    body = make_scan_with_text_layer(tmp_path / "stamped.pdf", "ACME-0001234 CONFIDENTIAL", invisible=False)
    (page,) = AutoEngine().recognize((tmp_path / "stamped.pdf").read_bytes(), 1)
    assert page.source == "ocr"
    assert cer(body, page.text.replace("ACME-0001234 CONFIDENTIAL", "")) < 0.02


def test_a_garbage_ocr_layer_is_ignored(tmp_path: Path) -> None:
    body = make_scan_with_text_layer(
        tmp_path / "garbage.pdf", ".,'~|;:. ,,'' ~~ |.; :,' .. ~| ., ~~ ''", invisible=True, seed=2
    )
    (page,) = AutoEngine().recognize((tmp_path / "garbage.pdf").read_bytes(), 1)
    assert page.source == "ocr"
    assert cer(body, page.text) < 0.02


def test_a_good_invisible_ocr_layer_is_used(tmp_path: Path) -> None:
    layer = "\n".join(["An earlier OCR pass left this text behind, and it reads well enough."] * 4)
    make_scan_with_text_layer(tmp_path / "ocrd.pdf", layer, invisible=True)
    (page,) = AutoEngine().recognize((tmp_path / "ocrd.pdf").read_bytes(), 1)
    assert (page.source, page.text.split()) == ("text-layer", layer.split())


def test_blank_pages_are_blank(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "blank.pdf", pages=20, blank=True)
    pages = AutoEngine().recognize((tmp_path / "blank.pdf").read_bytes(), 1)
    assert [(p.page_number, p.text) for p in pages] == [(n, "") for n in range(1, 21)]


def test_a_short_cjk_text_layer_is_the_page_text(tmp_path: Path) -> None:
    """Three Japanese characters are a title, not noise to OCR (with English models, tesseract
    turned them into Latin junk)."""
    pdfmetrics.registerFont(UnicodeCIDFont("HeiseiMin-W3"))
    pdf = canvas.Canvas(str(tmp_path / "cjk.pdf"))
    for title in ("日本語", "あいうえお", "Page 3"):
        pdf.setFont("HeiseiMin-W3", 14)
        pdf.drawString(72, 720, title)
        pdf.showPage()
    pdf.save()
    pages = AutoEngine().recognize((tmp_path / "cjk.pdf").read_bytes(), 1)
    assert [(p.text.strip(), p.source) for p in pages[:2]] == [
        ("日本語", "text-layer"),
        ("あいうえお", "text-layer"),
    ]
    assert pages[2].source == "ocr"  # a short Latin text layer still goes to OCR


# A clerk's certification in small print, three lines along the bottom margin: over 200 characters.
LEGEND = "\n".join(
    [
        "I hereby certify that the foregoing is a full, true and correct copy of the original on file",
        "in this office, and that it was filed on the date shown. Witness my hand and the seal of",
        "the court this day. Clerk of the Superior Court, by deputy clerk, case number 24-CV-01872.",
    ]
)


def test_a_legend_in_small_print_on_a_scan_is_not_the_page_text(tmp_path: Path) -> None:
    """Over 200 characters of real text, but in the margin of a full-page scan: the body is in
    the image, and only OCR reads it (the legend was all the page gave)."""
    assert len("".join(LEGEND.split())) > 200
    body = make_scan_with_text_layer(tmp_path / "certified.pdf", LEGEND, invisible=False)
    (page,) = AutoEngine().recognize((tmp_path / "certified.pdf").read_bytes(), 1)
    assert page.source == "ocr"
    read = page.text.split()
    assert cer(body, " ".join(read[: len(body.split())])) < 0.03
    assert "certify" in read  # the legend is drawn, and read with the rest


def test_a_sparse_good_ocr_layer_on_a_scan_is_still_used(tmp_path: Path) -> None:
    """The same text as an invisible layer is an earlier OCR's reading of the image: kept."""
    make_scan_with_text_layer(tmp_path / "ocrd.pdf", LEGEND, invisible=True)
    (page,) = AutoEngine().recognize((tmp_path / "ocrd.pdf").read_bytes(), 1)
    assert (page.source, page.text.split()) == ("text-layer", LEGEND.split())


def test_a_slide_over_a_background_picture_keeps_its_text(tmp_path: Path) -> None:
    """Large text over a full-page image (a slide's background): the text is the page's."""
    path = tmp_path / "slide.pdf"
    pdf = canvas.Canvas(str(path), pagesize=(720, 540))
    picture = tmp_path / "picture.png"
    Image.new("RGB", (720, 540), (40, 90, 160)).save(picture)
    pdf.drawImage(str(picture), 0, 0, width=720, height=540)
    lines = [
        "Quarterly results for the third quarter",
        "Revenue grew in every region we serve",
        "Margins held despite higher freight costs",
        "Two new plants open early next spring",
        "Hiring continues in engineering and sales",
        "Debt is down by a third on the year",
        "Dividend raised for the fifth year running",
    ]
    pdf.setFont("Helvetica", 24)
    for number, line in enumerate(lines):
        pdf.drawString(60, 460 - 60 * number, line)
    pdf.showPage()
    pdf.save()
    assert len("".join("".join(lines).split())) > 200
    (page,) = AutoEngine().recognize(path.read_bytes(), 1)
    assert (page.source, page.text.split()) == ("text-layer", " ".join(lines).split())


def test_a_short_text_layer_ocr_reads_nothing_on_is_the_page_text(tmp_path: Path) -> None:
    """A page whose only text is too short for the text layer to be taken on its own ("Ref 7",
    "A B C") goes to OCR; drawn where tesseract reads nothing of it (here, in render mode 3,
    invisible), its text layer is the page's text. Where OCR reads the page, OCR stays."""
    path = tmp_path / "short.pdf"
    pdf = canvas.Canvas(str(path), invariant=1)
    text = pdf.beginText(72, 700)
    text.setTextRenderMode(3)
    text.setFont("Helvetica", 12)
    text.textOut("A B C 7")
    pdf.drawText(text)
    pdf.showPage()
    pdf.save()
    (page,) = AutoEngine().recognize(path.read_bytes(), 1)
    assert (page.source, page.text, page.confidence) == ("text-layer", "A B C 7", 1.0)
    body = make_scan_with_text_layer(tmp_path / "stamped.pdf", "DRAFT 7", invisible=False)
    (scan,) = AutoEngine().recognize((tmp_path / "stamped.pdf").read_bytes(), 1)
    assert scan.source == "ocr"
    assert cer(body, scan.text.replace("DRAFT 7", "")) < 0.02
