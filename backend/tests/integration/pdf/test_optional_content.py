"""visible_copy: what a document's layers hide is taken out of the copy its pages are read from.

Each copy is checked by readers that are not ours: PDFium's text page (which, on the original,
includes hidden text: the reason for the copy), poppler's pdftotext, and PDFium's renderer,
which honours the original's layers (save a note's: poppler's renderer is asked there): the
copy must draw exactly what the original draws.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest
from pikepdf import Array, Name

from app.pdf.visible_copy import visible_copy
from tests.layered_pdfs import LayeredPdf, free_text_note, hidden, line
from tests.pdf_tools import pdftotext, qpdf_check


def pdfium_text(path: Path, index: int = 0) -> str:
    document = pdfium.PdfDocument(path)
    try:
        textpage = document[index].get_textpage()
        return str(textpage.get_text_range())
    finally:
        document.close()


def render(path: Path, index: int = 0) -> bytes:
    document = pdfium.PdfDocument(path)
    try:
        return bytes(document[index].render(scale=1).to_pil().tobytes())
    finally:
        document.close()


def pdftoppm(path: Path) -> bytes:
    """Page 1 as poppler renders it (72 DPI, gray)."""
    done = subprocess.run(
        ["pdftoppm", "-r", "72", "-gray", "-f", "1", "-l", "1", str(path)], capture_output=True, check=True
    )
    return done.stdout


def annotation_count(path: Path, index: int = 0) -> int:
    with pikepdf.open(path) as pdf:
        return len(pdf.pages[index].obj.get("/Annots", ()))


def copy_of(original: Path) -> Path:
    copy = original.with_name("visible.pdf")
    assert visible_copy(original, copy) is not None
    qpdf_check(copy)
    return copy


def test_a_hidden_layer_draws_nothing_and_its_text_is_gone(tmp_path: Path) -> None:
    doc = LayeredPdf()
    off, on = doc.group("Notes", on=False), doc.group("Plan", on=True)
    content = (
        line(700, "Visible alpha sentence")
        + hidden("off", line(650, "Secret bravo words") + b"0 0 1 rg 72 300 200 100 re f\n/Im1 Do\n")
        + hidden("on", line(600, "Layered charlie text"))
        + hidden("on", hidden("off", line(550, "Nested delta words")))
        + b"q 0.5 0 0 rg 72 100 100 50 re f Q\n"
    )
    doc.page(content, properties={"off": off, "on": on}, xobjects={"Im1": doc.image(gray=90)})
    original = doc.save(tmp_path / "layered.pdf")
    assert "Secret bravo" in pdfium_text(original)  # what PDFium's text page gave before

    copy = copy_of(original)

    for text in (pdfium_text(copy), pdftotext(copy, 1)):
        assert text.split() == ["Visible", "alpha", "sentence", "Layered", "charlie", "text"]
    assert render(copy) == render(original)


def test_forms_images_and_notes_hidden_by_their_own_group(tmp_path: Path) -> None:
    doc = LayeredPdf()
    off, on = doc.group("Hidden", on=False), doc.group("Shown", on=True)
    hidden_form = doc.form(line(500, "Formhidden echo"), oc=off)
    shown_form = doc.form(line(450, "Formshown foxtrot") + hidden("x", line(400, "Inner golf")), oc=on, x=off)
    content = line(700, "Body hotel") + b"/Fm1 Do /Fm2 Do q 200 0 0 200 72 100 cm /Im1 Do Q\n"
    doc.page(
        content,
        xobjects={"Fm1": hidden_form, "Fm2": shown_form, "Im1": doc.image(oc=off, gray=40)},
        annotations=[free_text_note("Note india", 200, oc=off), free_text_note("Note juliet", 250, oc=on)],
    )
    original = doc.save(tmp_path / "forms.pdf")

    copy = copy_of(original)

    assert pdfium_text(copy).split() == ["Body", "hotel", "Formshown", "foxtrot"]
    assert annotation_count(original) == 2
    assert annotation_count(copy) == 1
    with pikepdf.open(copy) as pdf:
        assert str(pdf.pages[0].obj.Annots[0].Contents) == "Note juliet"
    # PDFium's renderer draws a hidden note (it leaves out hidden forms and images); poppler's does not
    assert pdftoppm(copy) == pdftoppm(original)


@pytest.mark.parametrize(
    ("policy", "members", "shown"),
    [
        (None, "on off", True),  # AnyOn, the default
        ("AnyOn", "off", False),
        ("AllOn", "on off", False),
        ("AllOn", "on", True),
        ("AnyOff", "on off", True),
        ("AnyOff", "on", False),
        ("AllOff", "off", True),
        ("AllOff", "on off", False),
    ],
)
def test_a_membership_dictionary_hides_as_its_policy_says(
    tmp_path: Path, policy: str | None, members: str, shown: bool
) -> None:
    doc = LayeredPdf()
    groups = {"on": doc.group("On", on=True), "off": doc.group("Off", on=False)}
    membership = doc.membership([groups[name] for name in members.split()], policy)
    doc.page(line(700, "Always kilo") + hidden("m", line(650, "Member lima")), properties={"m": membership})
    original = doc.save(tmp_path / "ocmd.pdf")

    copy = tmp_path / "visible.pdf"
    removed = visible_copy(original, copy)

    if shown:
        assert removed is None
        assert not copy.exists()  # nothing hidden: nothing written
    else:
        assert removed is not None
        assert pdfium_text(copy).split() == ["Always", "kilo"]
        assert render(copy) == render(original)  # as PDFium's renderer reads the policy


@pytest.mark.parametrize(
    ("expression", "shown"),
    [
        ("Not off", True),
        ("Not on", False),
        ("And on off", False),
        ("Or on off", True),
        ("And on Or off on", True),
    ],
)
def test_a_visibility_expression_is_evaluated(tmp_path: Path, expression: str, shown: bool) -> None:
    doc = LayeredPdf()
    groups = {"on": doc.group("On", on=True), "off": doc.group("Off", on=False)}
    words = expression.split()
    if len(words) == 5:  # And on (Or off on)
        built = Array([Name.And, groups["on"], Array([Name.Or, groups["off"], groups["on"]])])
    else:
        built = Array([Name("/" + words[0]), *(groups[word] for word in words[1:])])
    doc.page(
        line(700, "Always mike") + hidden("m", line(650, "Expressed november")),
        properties={"m": doc.expression(built)},
    )
    original = doc.save(tmp_path / "ve.pdf")

    copy = tmp_path / "visible.pdf"
    removed = visible_copy(original, copy)

    assert (removed is None) == shown
    if not shown:
        assert pdfium_text(copy).split() == ["Always", "mike"]
        assert render(copy) == render(original)


def test_with_base_state_off_only_the_groups_listed_on_are_shown(tmp_path: Path) -> None:
    doc = LayeredPdf(base_off=True)
    listed_on, unlisted = doc.group("Listed", on=True), doc.group("Unlisted", on=None)
    doc.page(
        hidden("a", line(700, "Listed oscar")) + hidden("b", line(650, "Unlisted papa")),
        properties={"a": listed_on, "b": unlisted},
    )
    original = doc.save(tmp_path / "base-off.pdf")

    copy = copy_of(original)

    assert pdfium_text(copy).split() == ["Listed", "oscar"]
    assert render(copy) == render(original)


def test_a_line_move_inside_a_hidden_layer_still_moves_the_lines_after_it(tmp_path: Path) -> None:
    """' and " move to the next line as they show: the move stays when the show goes."""
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    content = (
        b"BT /F1 16 Tf 20 TL 72 700 Td (First quebec) Tj\n"
        + hidden("off", b"(Hidden romeo) '\n5 1 (Hidden sierra) \"\n")
        + b"(Third tango) ' ET\n"
    )
    doc.page(content, properties={"off": off})
    original = doc.save(tmp_path / "moves.pdf")

    copy = copy_of(original)

    assert pdfium_text(copy).split() == ["First", "quebec", "Third", "tango"]
    assert render(copy) == render(original)  # "Third tango" three lines down, as before


def test_a_file_that_hides_nothing_is_read_as_it_is(tmp_path: Path) -> None:
    doc = LayeredPdf()
    on = doc.group("On", on=True)
    doc.page(hidden("on", line(700, "Shown uniform")), properties={"on": on})
    original = doc.save(tmp_path / "all-on.pdf")
    plain = LayeredPdf()
    plain.page(line(700, "Plain victor"))
    plain.pdf.Root.OCProperties = pikepdf.Dictionary()  # named, but with no configuration
    unconfigured = plain.save(tmp_path / "unconfigured.pdf")

    for path in (original, unconfigured):
        assert visible_copy(path, tmp_path / "visible.pdf") is None
    assert not (tmp_path / "visible.pdf").exists()


def test_a_looping_visibility_expression_ends(tmp_path: Path) -> None:
    """A hostile expression that contains itself is evaluated to a bounded depth."""
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    loop = doc.pdf.make_indirect(Array([Name.Not]))
    loop.append(loop)
    doc.page(
        line(700, "Kept whiskey")
        + hidden("l", line(650, "Looped xray"))
        + hidden("o", line(600, "Off yankee")),
        properties={"l": doc.expression(loop), "o": off},
    )
    original = doc.save(tmp_path / "loop.pdf")

    copy = copy_of(original)

    assert pdfium_text(copy).split() == ["Kept", "whiskey", "Looped", "xray"]  # Not (a loop): shown


def test_a_content_too_large_to_parse_is_kept_and_said(tmp_path: Path) -> None:
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    large = (
        line(700, "Large zulu") + b"% " + b"x" * (5 << 20) + b"\n" + hidden("off", line(650, "Unread hidden"))
    )
    doc.page(large, properties={"off": off})
    doc.page(line(700, "Small page") + hidden("off", line(650, "Read hidden")), properties={"off": off})
    original = doc.save(tmp_path / "large.pdf")

    copy = tmp_path / "visible.pdf"
    removed = visible_copy(original, copy)

    assert removed is not None
    assert (removed.contents, removed.kept_too_large) == (1, 1)
    assert "1 page or form contents were not looked into" in removed.warning()
    assert pdfium_text(copy, 1).split() == ["Small", "page"]


def test_pages_that_share_their_content_are_rewritten_once(tmp_path: Path) -> None:
    """A page tree may name one page thousands of times: its content is parsed once, not each time."""
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    page = doc.page(line(700, "Shared alpha") + hidden("off", line(650, "Hidden")), properties={"off": off})
    for _ in range(1999):
        doc.pdf.pages.append(pikepdf.Page(page))
    original = doc.save(tmp_path / "shared.pdf")
    with pikepdf.open(original) as pdf:
        assert len({p.obj.Contents.objgen for p in pdf.pages}) == 1

    copy = tmp_path / "visible.pdf"
    removed = visible_copy(original, copy)

    assert removed is not None
    assert removed.contents == 1
    assert pdfium_text(copy, 1999).split() == ["Shared", "alpha"]


def test_a_file_is_looked_into_up_to_its_budget(tmp_path: Path) -> None:
    """Each content is parsed up to 1 MiB, and one file's up to 16 MiB in all: a hostile file's
    many large contents cannot hold a planning for minutes. Later ones are read whole."""
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    filler = b"% " + b"x" * ((1 << 20) - 4096) + b"\n"
    for number in range(20):
        doc.page(
            line(700, f"Page {number}") + hidden("off", line(650, "Hidden")) + filler, properties={"off": off}
        )
    original = doc.save(tmp_path / "many.pdf")

    copy = tmp_path / "visible.pdf"
    removed = visible_copy(original, copy)

    assert removed is not None
    assert removed.contents == 8  # each content looked into costs its size twice: scanned, then parsed
    assert removed.kept_too_large == 12
    assert pdfium_text(copy, 7).split() == ["Page", "7"]
    assert "Hidden" in pdfium_text(copy, 8)


@pytest.mark.parametrize(
    ("case", "entries", "listed"),
    [
        (
            "its usage says the viewer shows it",
            {"Usage": pikepdf.Dictionary(View=pikepdf.Dictionary(ViewState=Name.ON))},
            True,
        ),
        ("it is a design layer", {"Intent": Name.Design}, True),
        ("it is not one of the document's groups", {}, False),
    ],
)
def test_a_group_in_the_off_list_is_shown_when(
    tmp_path: Path, case: str, entries: dict[str, object], listed: bool
) -> None:
    """As PDFium's renderer reads it (what OCR sees): the configuration's /OFF is not the last word."""
    doc = LayeredPdf()
    group = doc.group("Shown anyway", on=False, listed=listed, **entries)
    hidden_too = doc.group("Off", on=False)
    doc.page(
        hidden("g", line(700, "Shown kilo")) + hidden("o", line(650, "Hidden lima")),
        properties={"g": group, "o": hidden_too},
    )
    original = doc.save(tmp_path / "shown.pdf")

    copy = copy_of(original)

    assert pdfium_text(copy).split() == ["Shown", "kilo"], case
    assert render(copy) == render(original), case
