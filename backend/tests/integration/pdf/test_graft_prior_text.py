"""A page that gets our text layer loses the invisible text an earlier OCR left on it (prior_text).

Scans are OCR'd again when their own layer is garbage or when the user asks for an engine; our
layer laid over the old one doubled the text a reader searches, selects and copies. Checked as a
reader gets it: pdftotext's words, PDFium's pixels (the page looks as it did), qpdf's verdict.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest
from pikepdf import Name

from app.pdf._pdfium import covered_text_objects
from app.pdf.graft import graft_text_layers
from tests.integration.pdf.test_graft import join, layers_for, qpdf_check, rendered
from tests.layer_pages import Scan, Setup, scanned_page

WORDS = ["harbour", "accounts", "reviewed"]
GARBAGE = ["Xq~v", "garble", "wordz", "qqline", "zzline", "formtext"]
STAMP = "BATES-000123"

# An earlier OCR's layer in the page's own content: shown in render mode 3 with Tj, TJ, ' and ".
OLD_LAYER = (
    b"BT 3 Tr /OldF 12 Tf 14 TL 72 700 Td (Xq~v) Tj 0 -14 Td [(garble) -200 (wordz)] TJ"
    b" (qqline) ' 2 1 (zzline) \" ET\n"
)
# What the page shows itself: a stamp, placed after invisible lines that moved it down, so removing
# those lines' moves with them would move it.
VISIBLE_AFTER = (
    b"BT /OldF 10 Tf 12 TL 72 60 Td 3 Tr (Xq~v) ' (garble) ' 0 Tr (" + STAMP.encode() + b") ' ET\n"
)


def _font(pdf: pikepdf.Pdf) -> pikepdf.Dictionary:
    return pdf.make_indirect(pikepdf.Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica))


def with_content(scan: Scan, *contents: bytes, form: bytes | None = None) -> bytes:
    """scan's page with contents appended to its content, and a Form XObject of form drawn last."""
    with pikepdf.open(io.BytesIO(scan.pdf)) as pdf:
        page = pdf.pages[0]
        font = _font(pdf)
        resources = page.obj.Resources
        resources.Font = pikepdf.Dictionary(OldF=font)
        for content in contents:
            page.contents_add(pdf.make_stream(content))
        if form is not None:
            stream = pdf.make_stream(form)
            stream.Type, stream.Subtype = Name.XObject, Name.Form
            stream.BBox = page.obj.MediaBox
            stream.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(OldF=font))
            resources.XObject[Name.OldOCR] = stream
            page.contents_add(pdf.make_stream(b"q /OldOCR Do Q\n"))
        out = io.BytesIO()
        pdf.save(out)
        return out.getvalue()


def grafted(tmp_path: Path, pages: list[bytes], *, locked: bool = False) -> tuple[Path, Path, int]:
    """The pages joined, each with the words of WORDS as its layer: (original, output, pages whose
    old layer was removed)."""
    original = join(pages, tmp_path / "original.pdf")
    if locked:
        with pikepdf.open(original, allow_overwriting_input=True) as pdf:
            pdf.save(original, encryption=pikepdf.Encryption(owner="owner", user=""))
    setup = Setup("letter")
    words = [
        setup.page_text(SCAN.words).model_copy(update={"page_number": number})
        for number in range(1, len(pages) + 1)
    ]
    output = tmp_path / "out.pdf"
    summary = graft_text_layers(original, layers_for(original, words, 2, tmp_path), output)
    assert summary.incremental is not locked
    qpdf_check(output)
    return original, output, summary.layers_replaced


def text_of(path: Path, page: int) -> list[str]:
    return (
        subprocess.run(
            ["pdftotext", "-f", str(page), "-l", str(page), str(path), "-"], capture_output=True, check=True
        )
        .stdout.decode()
        .split()
    )


SCAN = scanned_page(Setup("letter"), lines=[" ".join(WORDS)])


@pytest.mark.parametrize("locked", [False, True], ids=["appended", "rewritten"])
def test_an_old_invisible_layer_goes_and_what_the_page_shows_stays(tmp_path: Path, locked: bool) -> None:
    pages = [
        with_content(SCAN, OLD_LAYER, VISIBLE_AFTER),  # the old layer in the page's content
        with_content(SCAN, form=b"BT 3 Tr /OldF 9 Tf 72 500 Td (formtext) Tj ET"),  # ocrmypdf's way
        with_content(SCAN, b"q 3 Tr Q", VISIBLE_AFTER.replace(b" 3 Tr", b"")),  # nothing invisible shown
    ]
    original, output, replaced = grafted(tmp_path, pages, locked=locked)
    assert replaced == 2
    assert text_of(original, 1)[:5] == ["Xq~v", "garble", "wordz", "qqline", "zzline"]  # pdftotext sees it
    for page in (1, 2):
        assert not set(GARBAGE) & set(text_of(output, page)), page
        assert set(WORDS) <= set(text_of(output, page))
    assert STAMP in text_of(output, 1)
    assert text_of(output, 3).count(STAMP) == 1
    for index in range(3):  # the stamp where it was drawn, the scan as it was
        assert rendered(output, index) == rendered(original, index), index


def test_a_form_that_draws_anything_besides_invisible_text_is_kept(tmp_path: Path) -> None:
    """Conservative: a form with a mark of its own is the page's, whatever text it also holds."""
    pages = [
        with_content(SCAN, form=b"0 0 1 rg 72 72 20 20 re f BT 3 Tr /OldF 9 Tf 72 500 Td (formtext) Tj ET"),
        with_content(SCAN, form=b"BT 0 Tr /OldF 9 Tf 72 500 Td (formtext) Tj ET"),
    ]
    original, output, replaced = grafted(tmp_path, pages)
    assert replaced == 0
    for page in (1, 2):
        assert "formtext" in text_of(output, page)
        assert rendered(output, page - 1) == rendered(original, page - 1)


def test_a_page_with_no_old_layer_keeps_its_content_streams(tmp_path: Path) -> None:
    pages = [with_content(SCAN, VISIBLE_AFTER.replace(b" 3 Tr", b""))]
    original, output, replaced = grafted(tmp_path, pages)
    assert replaced == 0
    with pikepdf.open(original) as before, pikepdf.open(output) as after:
        kept = [stream.objgen for stream in before.pages[0].obj.Contents]
        now = [stream.objgen for stream in after.pages[0].obj.Contents]
        assert now[1:-1] == kept  # the original streams, between the wrappers


def test_type3_text_shown_in_mode_3_is_drawn_and_stays(tmp_path: Path) -> None:
    """The render mode does not apply to a Type 3 font (PDF 1.7, 9.3.6): its glyphs are drawn."""
    with pikepdf.open(io.BytesIO(SCAN.pdf)) as pdf:
        page = pdf.pages[0]
        glyph = pdf.make_stream(b"1000 0 0 0 1000 1000 d1 0 0 1000 1000 re f")
        font = pdf.make_indirect(
            pikepdf.Dictionary(
                Type=Name.Font,
                Subtype=Name.Type3,
                FontBBox=[0, 0, 1000, 1000],
                FontMatrix=[0.001, 0, 0, 0.001, 0, 0],
                CharProcs=pikepdf.Dictionary(a=glyph),
                Encoding=pikepdf.Dictionary(Type=Name.Encoding, Differences=[65, Name.a]),
                FirstChar=65,
                LastChar=65,
                Widths=[1000],
                Resources=pikepdf.Dictionary(),
            )
        )
        page.obj.Resources.Font = pikepdf.Dictionary(T3=font, OldF=_font(pdf))
        page.contents_add(pdf.make_stream(b"BT 3 Tr /T3 20 Tf 100 100 Td (AAA) Tj /OldF 9 Tf (Xq~v) Tj ET"))
        out = io.BytesIO()
        pdf.save(out)
    original, output, replaced = grafted(tmp_path, [out.getvalue()])
    assert replaced == 1  # the Helvetica text in mode 3 went
    with pikepdf.open(output) as pdf:
        shown = [
            bytes(instruction.operands[0])
            for instruction in pikepdf.parse_content_stream(pdf.pages[0])
            if str(instruction.operator) == "Tj"
        ]
    assert shown == [b"AAA"]
    assert rendered(output, 0) == rendered(original, 0)  # the squares where they were


# An earlier OCR's layer drawn in an ordinary render mode and hidden by the scan drawn over it
# ("image on text"), in the page's content and in a form drawn before the scan.
UNDER = b"BT /OldF 12 Tf 14 TL 72 700 Td (Xq~v) Tj 0 -14 Td [(garble) -200 (wordz)] TJ (qqline) ' ET\n"
UNDER_FORM = b"BT /OldF 9 Tf 72 500 Td (formtext) Tj ET"


def under_scan(
    scan: Scan, before: bytes, *, form: bool = False, image: dict[str, object] | None = None
) -> bytes:
    """scan's page with `before` (and with form, a form showing UNDER_FORM) drawn before its image;
    image: entries set on the image XObject."""
    with pikepdf.open(io.BytesIO(scan.pdf)) as pdf:
        page = pdf.pages[0]
        font = _font(pdf)
        resources = page.obj.Resources
        resources.Font = pikepdf.Dictionary(OldF=font)
        for value in resources.XObject.values():
            for key, entry in (image or {}).items():
                value[key] = _mask(pdf, entry) if entry in ("soft", "stencil") else entry
        if form:
            stream = pdf.make_stream(UNDER_FORM)
            stream.Type, stream.Subtype = Name.XObject, Name.Form
            stream.BBox = page.obj.MediaBox
            stream.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(OldF=font))
            resources.XObject[Name.OldOCR] = stream
            before += b"q /OldOCR Do Q\n"
        page.contents_add(pdf.make_stream(before), prepend=True)
        out = io.BytesIO()
        pdf.save(out)
        return out.getvalue()


def covered_by_pdfium(path: Path, index: int) -> bool:
    document = pdfium.PdfDocument(path)
    try:
        return bool(covered_text_objects(document[index]))
    finally:
        document.close()


def test_text_under_the_scan_goes_like_an_invisible_layer(tmp_path: Path) -> None:
    pages = [under_scan(SCAN, UNDER), under_scan(SCAN, b"", form=True)]
    original, output, replaced = grafted(tmp_path, pages)
    assert replaced == 2
    assert "garble" in text_of(original, 1)  # pdftotext reads the hidden layer
    for page in (1, 2):
        words = text_of(output, page)
        assert not set(GARBAGE) & set(words), page
        assert sorted(words) == sorted(WORDS)  # ours, once: the old text did not stand for them
        assert rendered(output, page - 1) == rendered(original, page - 1)
        assert covered_by_pdfium(original, page - 1)  # what the engines count as not shown


@pytest.mark.parametrize(
    ("case", "before", "image", "pdfium_tells"),
    [
        ("a clip to half the page", b"0 0 306 792 re W n\n", None, True),
        ("a constant alpha", b"/Half gs\n", None, True),
        ("a stencil mask", b"", {"/ImageMask": True}, True),
        ("a soft mask", b"", {"/SMask": "soft"}, False),
        ("a mask", b"", {"/Mask": "stencil"}, False),
    ],
)
def test_text_a_scan_may_not_hide_stays(
    tmp_path: Path, case: str, before: bytes, image: dict[str, object] | None, pdfium_tells: bool
) -> None:
    """Conservative: a scan clipped short of the page, drawn translucent or through a mask may
    let the text under it show: it stays. PDFium's page objects do not say whether an image has
    a soft mask or a /Mask: the engines count text under such a scan as hidden (it can only
    keep an OCR word the page also shows)."""
    page = under_scan(SCAN, before + UNDER, image=image)
    with pikepdf.open(io.BytesIO(page)) as pdf:
        pdf.pages[0].obj.Resources.ExtGState = pikepdf.Dictionary(Half=pikepdf.Dictionary(ca=0.5, CA=0.5))
        out = io.BytesIO()
        pdf.save(out)
    original, output, replaced = grafted(tmp_path, [out.getvalue()])
    assert replaced == 0, case
    assert "garble" in text_of(output, 1)
    assert covered_by_pdfium(original, 0) is not pdfium_tells, case


def _mask(pdf: pikepdf.Pdf, kind: object) -> pikepdf.Stream:
    """A one-pixel mask that lets everything through: a soft mask, or a stencil (/Mask)."""
    mask = pdf.make_stream(b"\xff" if kind == "soft" else b"\x00", Type=Name.XObject, Subtype=Name.Image)
    mask.Width = mask.Height = 1
    if kind == "soft":
        mask.ColorSpace, mask.BitsPerComponent = Name.DeviceGray, 8
    else:
        mask.ImageMask, mask.BitsPerComponent = True, 1
    return mask
