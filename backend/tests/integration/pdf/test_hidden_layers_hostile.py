"""Hostile layered files against visible_copy, which runs inside the API's planning: none may hold
it for long, and hidden content is taken out wherever a viewer would draw it (a black-box probe
found each of these).

A call that hangs is caught by running it in a process of its own with a timeout: what is
checked is that it ends and what it did, not how fast it is.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
from pikepdf import Array, Dictionary, Name
from structlog.testing import capture_logs

from app.pdf import visible_copy as module
from app.pdf.visible_copy import visible_copy
from tests.layered_pdfs import LayeredPdf, hidden, line

BACKEND = Path(__file__).resolve().parents[3]
ENDS_WITHIN = 60  # seconds: far past what any of these takes once bounded


def copied_in_a_process(original: Path) -> str:
    """visible_copy of original, in a process of its own that must end within ENDS_WITHIN: what
    it returned."""
    code = (
        "import sys; from pathlib import Path; from app.pdf.visible_copy import visible_copy; "
        "print(visible_copy(Path(sys.argv[1]), Path(sys.argv[2])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(original), str(original.with_name("visible.pdf"))],
        cwd=BACKEND,
        capture_output=True,
        text=True,
        timeout=ENDS_WITHIN,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def text_of(path: Path, index: int = 0) -> list[str]:
    document = pdfium.PdfDocument(path)
    try:
        return str(document[index].get_textpage().get_text_range()).split()
    finally:
        document.close()


def test_an_expression_that_shares_its_parts_is_evaluated_once_each(tmp_path: Path) -> None:
    """[/And x x], x = [/And y y], ... 40 deep: 2^40 evaluations when each part is read each time."""
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    node: pikepdf.Object = off
    for _ in range(40):
        node = doc.pdf.make_indirect(Array([Name.And, node, node]))
    membership = doc.pdf.make_indirect(Dictionary(Type=Name.OCMD, VE=node))
    doc.page(line(700, "Shown alpha") + hidden("m", line(650, "Hidden bravo")), properties={"m": membership})
    original = doc.save(tmp_path / "shared.pdf")

    said = copied_in_a_process(original)

    assert "copied=True" in said
    assert text_of(original.with_name("visible.pdf")) == ["Shown", "alpha"]  # And(off, ...) hides


def test_an_expression_that_contains_itself_ends(tmp_path: Path) -> None:
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    loop = doc.pdf.make_indirect(Array([Name.Or]))
    loop.append(loop)
    loop.append(loop)
    loop.append(off)
    membership = doc.pdf.make_indirect(Dictionary(Type=Name.OCMD, VE=loop))
    doc.page(line(700, "Shown alpha") + hidden("m", line(650, "Hidden bravo")), properties={"m": membership})
    original = doc.save(tmp_path / "loop.pdf")

    said = copied_in_a_process(original)

    assert "copied=True" in said  # a loop hides, as PDFium's depth limit does
    assert text_of(original.with_name("visible.pdf")) == ["Shown", "alpha"]


def test_thousands_of_pages_sharing_large_resources_read_them_once(tmp_path: Path) -> None:
    """10,000 pages, each naming the same 10,000 marked-content properties and forms."""
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    properties = doc.pdf.make_indirect(Dictionary({f"/P{n}": off for n in range(10_000)}))
    form = doc.form(hidden("P0", line(600, "Form hidden")))
    form.Resources.Properties = properties
    xobjects = doc.pdf.make_indirect(Dictionary({f"/X{n}": form for n in range(10_000)}))
    content = doc.pdf.make_stream(
        line(700, "Page text") + hidden("P1", line(650, "Page hidden")) + b"/X0 Do\n"
    )
    font = Dictionary(F1=doc.font)
    for _ in range(10_000):
        page = doc.pdf.add_blank_page(page_size=(612, 792))
        page.obj.Resources = Dictionary(Font=font, Properties=properties, XObject=xobjects)
        page.obj.Contents = content
    original = doc.save(tmp_path / "shared-resources.pdf")

    said = copied_in_a_process(original)

    assert "copied=True" in said
    assert text_of(original.with_name("visible.pdf"), 9_999) == ["Page", "text"]


def test_forms_without_resources_of_their_own_are_walked_once(tmp_path: Path) -> None:
    """3,000 forms that use the page's resources, which name all of them."""
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    xobjects = Dictionary()
    for number in range(3_000):
        form = doc.pdf.make_stream(
            hidden("off", line(600, "Form hidden")),
            Type=Name.XObject,
            Subtype=Name.Form,
            BBox=[0, 0, 612, 792],
        )
        xobjects[f"/X{number}"] = form
    doc.page(line(700, "Page text") + b"/X0 Do /X2999 Do\n", properties={"off": off})
    doc.pdf.pages[0].obj.Resources.XObject = xobjects
    original = doc.save(tmp_path / "forms.pdf")

    said = copied_in_a_process(original)

    assert "copied=True" in said
    assert text_of(original.with_name("visible.pdf")) == ["Page", "text"]


def test_a_content_of_unclosed_sequences_is_read_in_one_pass(tmp_path: Path) -> None:
    """140,000 sequences opened and never closed (each instruction asked whether any of them hides)."""
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    doc.page(
        line(700, "Page text")
        + hidden("off", line(650, "Hidden"))
        + b"/X BMC " * 140_000
        + line(600, "Last"),
        properties={"off": off},
    )
    original = doc.save(tmp_path / "unclosed.pdf")

    said = copied_in_a_process(original)

    assert "copied=True" in said
    # read with pikepdf: PDFium's text page of such a page takes memory as the square of its depth
    with pikepdf.open(original.with_name("visible.pdf")) as pdf:
        shown = [
            bytes(instruction.operands[0]) for instruction in pikepdf.parse_content_stream(pdf.pages[0], "Tj")
        ]
    assert shown == [b"Page text", b"Last"]


def test_past_its_entries_the_copy_is_given_up_and_said(tmp_path: Path) -> None:
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    properties = Dictionary({f"/P{n}": off for n in range(module.MAX_ENTRIES + 1)})
    doc.page(line(700, "Page text") + hidden("P0", line(650, "Hidden")))
    doc.pdf.pages[0].obj.Resources.Properties = properties
    original = doc.save(tmp_path / "entries.pdf")

    removed = visible_copy(original, tmp_path / "visible.pdf")

    assert removed is not None
    assert removed.gave_up
    assert not removed.copied
    assert not (tmp_path / "visible.pdf").exists()
    assert removed.warning() == "the PDF hides layers (Off), too many to take out: their text may be read"


def test_hidden_content_in_appearances_patterns_and_deep_forms_goes(tmp_path: Path) -> None:
    """A chunk cut from the copy keeps no layer configuration, so its render draws every layer
    left in it: stripped of /OCProperties, the copy must draw what the original draws with it.
    Drawn by poppler, which hides layers inside tiling patterns too (PDFium's renderer does not)."""
    doc = LayeredPdf()
    off = doc.group("Answers", on=False)
    font = Dictionary(F1=doc.font)
    appearance = doc.form(hidden("h", line(20, "Stamp hidden", size=30)), h=off)
    pattern = doc.pdf.make_stream(
        hidden("h", line(40, "Pattern hidden", size=30)),
        Type=Name.Pattern,
        PatternType=1,
        PaintType=1,
        TilingType=1,
        BBox=[0, 0, 500, 100],
        XStep=500,
        YStep=100,
        Resources=Dictionary(Font=font, Properties=Dictionary(h=off)),
    )
    deep = doc.form(hidden("h", line(500, "Deep hidden", size=30)), h=off)
    for _ in range(34):  # PDFium reads the text of forms deeper than 32
        deep = doc.pdf.make_stream(
            b"/Fx Do",
            Type=Name.XObject,
            Subtype=Name.Form,
            BBox=[0, 0, 612, 792],
            Resources=Dictionary(XObject=Dictionary(Fx=deep)),
        )
    stamp = Dictionary(
        Type=Name.Annot, Subtype=Name.Stamp, Rect=[50, 300, 550, 380], F=4, AP=Dictionary(N=appearance)
    )
    doc.page(
        line(700, "Page text") + b"/Pattern cs /P0 scn 50 100 500 100 re f /Fx Do\n",
        xobjects={"Fx": deep},
        annotations=[stamp],
    )
    doc.pdf.pages[0].obj.Resources.Pattern = Dictionary(P0=pattern)
    original = doc.save(tmp_path / "leaks.pdf")
    assert rendered(_without_layers(original)) != rendered(original)  # what a chunk of it drew

    removed = visible_copy(original, tmp_path / "visible.pdf")

    assert removed is not None
    assert removed.copied
    assert rendered(_without_layers(tmp_path / "visible.pdf")) == rendered(original)


def _without_layers(path: Path) -> Path:
    """path without its layer configuration, as a chunk cut from it is."""
    bare = path.with_name(path.stem + "-bare.pdf")
    with pikepdf.open(path) as pdf:
        del pdf.Root["/OCProperties"]
        pdf.save(bare)
    return bare


def rendered(path: Path) -> bytes:
    """Page 1 as poppler draws it (72 DPI, gray), annotations included."""
    done = subprocess.run(
        ["pdftoppm", "-r", "72", "-gray", "-f", "1", "-l", "1", str(path)], capture_output=True, check=True
    )
    return done.stdout


def test_a_document_listing_more_groups_than_the_limit_is_not_looked_into(tmp_path: Path) -> None:
    """Each group read costs the planning process memory (1.5 million took it to 2.2 GB): past
    MAX_GROUPS the list is counted, not read, and the warning says the layers were not looked into."""
    doc = LayeredPdf()
    off = doc.group("Off", on=False)
    for n in range(module.MAX_GROUPS):
        doc.group(f"L{n}", on=True)
    doc.page(line(700, "Page text") + hidden("P0", line(650, "Hidden")), properties={"P0": off})
    original = doc.save(tmp_path / "groups.pdf")

    removed = visible_copy(original, tmp_path / "visible.pdf")

    assert removed is not None
    assert (removed.gave_up, removed.copied, removed.groups) == (True, False, module.MAX_GROUPS + 1)
    assert not (tmp_path / "visible.pdf").exists()
    assert removed.warning() == (
        "the PDF lists 10,001 layers, more than 10,000: they are not looked into, and text a viewer hides may be read"
    )


def test_at_the_limit_the_groups_are_read_and_the_log_names_twenty(tmp_path: Path) -> None:
    """A log event named every hidden layer: one line of 17 MB for 1.5 million of them."""
    doc = LayeredPdf()
    groups = [doc.group(f"L{n:05}", on=False) for n in range(module.MAX_GROUPS)]
    doc.page(line(700, "Page text") + hidden("P0", line(650, "Hidden")), properties={"P0": groups[0]})
    original = doc.save(tmp_path / "groups.pdf")

    with capture_logs() as logs:
        removed = visible_copy(original, tmp_path / "visible.pdf")

    assert removed is not None
    assert removed.copied
    assert text_of(tmp_path / "visible.pdf") == ["Page", "text"]
    (event,) = [entry for entry in logs if entry["event"] == "hidden_layers_removed"]
    assert event["layer_count"] == module.MAX_GROUPS
    assert event["layers"] == [f"L{n:05}" for n in range(20)]


def test_a_layer_named_with_terminal_escapes_is_said_on_one_short_line(tmp_path: Path) -> None:
    """A layer's /Name reached `run`'s stderr as it was: an escape that set the terminal's title
    and cleared its screen, line breaks that forged lines of output, a right-to-left override, and
    5,000 characters of it. Its control and format characters are left out and it is cut short."""
    doc = LayeredPdf()
    hostile = doc.group("\x1b]0;owned\x07\x1b[2J\r\nchunk-ocr: overwritten\u202e" + "x" * 5000, on=False)
    doc.page(line(700, "Page text") + hidden("P0", line(650, "Hidden")), properties={"P0": hostile})
    original = doc.save(tmp_path / "escapes.pdf")

    removed = visible_copy(original, tmp_path / "visible.pdf")

    assert removed is not None
    warning = removed.warning()
    assert warning.isprintable()  # no escape, line break or override
    assert "(]0;owned[2J chunk-ocr: overwrittenxxx" in warning
    assert len(warning) < 200
