"""graft_text_layers: the original, unchanged to the eye, with each chunk's words over its pages.

Originals are built from pages of known words (tests.layer_pages), laid out in chunks as the
service cuts them; layers are rendered per chunk and grafted. What is checked is what a reader
of the output gets: qpdf's verdict, PDFium's pixels, the words and where they are (PDFium),
pdftotext's lines, and the bytes of the pages that had nothing to add.
"""

from __future__ import annotations

import io
import random
import string
import subprocess
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest
from pikepdf import Name

from app.models.results import PageText
from app.pdf.errors import PdfNotFoundError, TextLayerError
from app.pdf.graft import graft_text_layers
from app.pdf.text_layer import render_text_layer
from tests.layer_pages import LINES, SETUPS, Scan, Setup, distance, expected_box, pdfium_words, scanned_page

TOLERANCE = 1.0  # points
BY_NAME = {setup.name: setup for setup in SETUPS}


def join(pdfs: list[bytes], path: Path) -> Path:
    """One PDF of the pages of pdfs, in order."""
    with pikepdf.new() as out:
        for data in pdfs:
            with pikepdf.open(io.BytesIO(data)) as pdf:
                out.pages.extend(pdf.pages)
        out.save(path)
    return path


def chunk_of(original: Path, first: int, last: int) -> bytes:
    """Pages first..last of original, as the splitter cuts a chunk (PDFium import_pages)."""
    source = pdfium.PdfDocument(original)
    target = pdfium.PdfDocument.new()
    try:
        target.import_pages(source, pages=list(range(first - 1, last)))
        out = io.BytesIO()
        target.save(out)
        return out.getvalue()
    finally:
        target.close()
        source.close()


def no_words(number: int) -> PageText:
    return PageText(page_number=number, text="", confidence=0.0, source="ocr")


def layers_for(original: Path, pages: list[PageText], chunk: int, directory: Path) -> list[tuple[int, Path]]:
    """Each chunk's layer written to a file, as (first page, path)."""
    out = []
    for first in range(1, len(pages) + 1, chunk):
        last = min(len(pages), first + chunk - 1)
        path = directory / f"layer-{first}.pdf"
        path.write_bytes(render_text_layer(chunk_of(original, first, last), pages[first - 1 : last]))
        out.append((first, path))
    return out


def rendered(path: Path, index: int) -> bytes:
    document = pdfium.PdfDocument(path)
    try:
        return bytes(document[index].render(scale=100 / 72).buffer)
    finally:
        document.close()


def qpdf_check(path: Path) -> None:
    checked = subprocess.run(["qpdf", "--check", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def raw_contents(pdf: pikepdf.Pdf, index: int) -> list[bytes]:
    contents = pdf.pages[index].obj.get(Name.Contents)
    items = list(contents) if isinstance(contents, pikepdf.Array) else [contents]
    return [item.read_raw_bytes() for item in items]


# Pages of the document: scans of several geometries, a scan whose OCR found nothing, and one
# more scan after it; chunks of three pages.
DOCUMENT = ["letter", "rotate-90", "a4-cropped", "skewed", None, "turned-90", "150-dpi"]


@pytest.fixture(scope="module")
def grafted(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, list[Scan | None], list[tuple[int, Path]]]:
    directory = tmp_path_factory.mktemp("graft")
    scans: list[Scan | None] = [scanned_page(BY_NAME[name]) if name else None for name in DOCUMENT]
    blank = scanned_page(Setup("blank"), lines=["nothing"])
    original = join([scan.pdf if scan else blank.pdf for scan in scans], directory / "original.pdf")
    pages = [
        scan.setup.page_text(scan.words).model_copy(update={"page_number": number})
        if scan
        else no_words(number)
        for number, scan in enumerate(scans, start=1)
    ]
    layers = layers_for(original, pages, 3, directory)
    output = directory / "searchable.pdf"
    summary = graft_text_layers(original, layers, output)
    assert (summary.pages, summary.pages_with_text, summary.incremental) == (7, 6, True)
    return original, output, scans, layers


def test_the_output_passes_qpdf_check(
    grafted: tuple[Path, Path, list[Scan | None], list[tuple[int, Path]]],
) -> None:
    qpdf_check(grafted[1])


def test_every_page_renders_as_the_original_did(
    grafted: tuple[Path, Path, list[Scan | None], list[tuple[int, Path]]],
) -> None:
    original, output, scans, _ = grafted
    for index in range(len(scans)):
        assert rendered(output, index) == rendered(original, index), f"page {index + 1}"


def test_pages_keep_their_count_sizes_and_turns(
    grafted: tuple[Path, Path, list[Scan | None], list[tuple[int, Path]]],
) -> None:
    original, output, _, _ = grafted
    with pikepdf.open(original) as before, pikepdf.open(output) as after:
        assert len(after.pages) == len(before.pages)
        for old, new in zip(before.pages, after.pages, strict=True):
            assert (list(new.mediabox), list(new.cropbox), new.rotation) == (
                list(old.mediabox),
                list(old.cropbox),
                old.rotation,
            )


def test_a_page_without_words_keeps_its_content_and_resources(
    grafted: tuple[Path, Path, list[Scan | None], list[tuple[int, Path]]],
) -> None:
    original, output, _, _ = grafted
    index = DOCUMENT.index(None)
    with pikepdf.open(original) as before, pikepdf.open(output) as after:
        assert raw_contents(after, index) == raw_contents(before, index)
        assert after.pages[index].obj.unparse(resolved=True) == before.pages[index].obj.unparse(resolved=True)
        # and the pages with words kept their own content inside the wrapping
        assert raw_contents(after, 0)[1:-1] == raw_contents(before, 0)


def test_every_word_is_read_back_over_its_ink(
    grafted: tuple[Path, Path, list[Scan | None], list[tuple[int, Path]]],
) -> None:
    _, output, scans, _ = grafted
    document = pdfium.PdfDocument(output)
    try:
        for index, scan in enumerate(scans):
            found = pdfium_words(document[index])
            if scan is None:
                assert found == []
                continue
            assert [text for text, _ in found] == [text for text, _ in scan.words]
            for (text, box), cell in zip(found, scan.cells, strict=True):
                assert distance(box, expected_box(scan.setup, cell)) <= TOLERANCE, (scan.setup.name, text)
    finally:
        document.close()


def test_pdftotext_reads_the_lines_in_order(
    grafted: tuple[Path, Path, list[Scan | None], list[tuple[int, Path]]],
) -> None:
    """Every page whose text is level as displayed, whatever its /Rotate or crop box. (Poppler
    orders text that is tilted, or runs up the page, by its own rules; PDFium reads those
    pages' words in order, as test_every_word_is_read_back_over_its_ink shows.)"""
    _, output, scans, _ = grafted
    level = [
        number
        for number, scan in enumerate(scans, start=1)
        if scan and not scan.setup.skew and not scan.setup.rotation
    ]
    assert level == [1, 2, 3, 7]
    for number in level:
        text = subprocess.run(
            ["pdftotext", "-f", str(number), "-l", str(number), str(output), "-"],
            capture_output=True,
            check=True,
        ).stdout.decode()
        assert [line for line in text.split("\n") if line.strip("\f")] == list(LINES), number


def test_one_font_serves_every_page(
    grafted: tuple[Path, Path, list[Scan | None], list[tuple[int, Path]]],
) -> None:
    _, output, _, _ = grafted
    with pikepdf.open(output) as pdf:
        fonts = {
            form.Resources.Font.GL.objgen
            for page in pdf.pages
            for name, form in page.obj.Resources.get(Name.XObject, {}).items()
            if name.startswith("/OCRText")
        }
    assert len(fonts) == 1


def test_characters_beyond_the_bmp_read_back_when_chunks_number_them_differently(tmp_path: Path) -> None:
    """Chunk 1 gives 😀 the first surrogate code and 𠀋 the second; chunk 2 meets 𠀋 and 🎉 first.
    The output's one table renumbers chunk 2, and every extractor reads the characters."""
    setup = Setup("letter")
    first = scanned_page(setup, lines=["smile 😀 rare 𠀋"])
    second = scanned_page(setup, lines=["again 𠀋 party 🎉 smile 😀"])
    original = join([first.pdf, second.pdf], tmp_path / "original.pdf")
    pages = [
        setup.page_text(first.words).model_copy(update={"page_number": 1}),
        setup.page_text(second.words).model_copy(update={"page_number": 2}),
    ]
    output = tmp_path / "out.pdf"
    graft_text_layers(original, layers_for(original, pages, 1, tmp_path), output)
    qpdf_check(output)
    poppler = subprocess.run(["pdftotext", str(output), "-"], capture_output=True, check=True).stdout.decode()
    assert poppler.split() == ["smile", "😀", "rare", "𠀋", "again", "𠀋", "party", "🎉", "smile", "😀"]
    from pdfminer.high_level import extract_text

    assert extract_text(str(output)).split() == poppler.split()
    document = pdfium.PdfDocument(output)
    try:
        assert [text for index in range(2) for text, _ in pdfium_words(document[index])] == poppler.split()
    finally:
        document.close()


def test_a_dense_document_grows_by_well_under_10_kb_a_page(tmp_path: Path) -> None:
    """About 300 words a page, as a full page of prose is."""
    setup = Setup("letter")
    rng = random.Random(7)
    prose = [
        " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(10))
        for _ in range(30)
    ]
    scan = scanned_page(setup, lines=prose, spacing=1.6)
    assert len(scan.words) == 300
    pages = 8
    original = join([scan.pdf] * pages, tmp_path / "original.pdf")
    texts = [
        setup.page_text(scan.words).model_copy(update={"page_number": number})
        for number in range(1, pages + 1)
    ]
    output = tmp_path / "out.pdf"
    graft_text_layers(original, layers_for(original, texts, 4, tmp_path), output)
    growth = (output.stat().st_size - original.stat().st_size) / pages
    print(f"grafted 300 words a page: {growth:.0f} bytes a page")
    assert growth < 10_000


def test_the_structure_of_the_original_is_kept(tmp_path: Path) -> None:
    """Outline, link annotation, form field, document information and XMP metadata survive."""
    setup = Setup("letter")
    scan = scanned_page(setup, lines=["Signed here"])
    source = join([scan.pdf, scan.pdf], tmp_path / "plain.pdf")
    with pikepdf.open(source) as pdf:
        with pdf.open_metadata() as meta:
            meta["dc:creator"] = ["Clerk"]
        pdf.docinfo[Name.Title] = "Harbour accounts"
        with pdf.open_outline() as outline:
            outline.root.append(pikepdf.OutlineItem("Second page", 1))
        field = pdf.make_indirect(
            pikepdf.Dictionary(
                Type=Name.Annot,
                Subtype=Name.Widget,
                FT=Name.Tx,
                T=pikepdf.String("name"),
                V=pikepdf.String("Smith"),
                Rect=[100, 100, 300, 130],
                P=pdf.pages[0].obj,
            )
        )
        link = pdf.make_indirect(
            pikepdf.Dictionary(
                Type=Name.Annot,
                Subtype=Name.Link,
                Rect=[72, 72, 200, 90],
                Border=[0, 0, 0],
                Dest=[pdf.pages[1].obj, Name.Fit],
            )
        )
        pdf.pages[0].obj.Annots = pdf.make_indirect(pikepdf.Array([field, link]))
        pdf.Root.AcroForm = pikepdf.Dictionary(Fields=[field])
        pdf.save(tmp_path / "original.pdf")
    original = tmp_path / "original.pdf"
    pages = [setup.page_text(scan.words).model_copy(update={"page_number": number}) for number in (1, 2)]
    output = tmp_path / "out.pdf"
    graft_text_layers(original, layers_for(original, pages, 2, tmp_path), output)
    qpdf_check(output)
    with pikepdf.open(output) as pdf:
        assert str(pdf.docinfo[Name.Title]) == "Harbour accounts"
        assert pdf.open_metadata()["dc:creator"] == ["Clerk"]
        with pdf.open_outline() as outline:
            assert [item.title for item in outline.root] == ["Second page"]
            assert outline.root[0].destination[0] == pdf.pages[1].obj
        annotations = pdf.pages[0].obj.Annots
        assert [str(annotation.Subtype) for annotation in annotations] == ["/Widget", "/Link"]
        assert str(pdf.Root.AcroForm.Fields[0].V) == "Smith"
        assert annotations[1].Dest[0] == pdf.pages[1].obj


def test_an_original_with_cross_reference_streams_is_updated_with_one(tmp_path: Path) -> None:
    setup = Setup("letter")
    scan = scanned_page(setup, lines=["compressed objects"])
    with pikepdf.open(io.BytesIO(scan.pdf)) as pdf:
        pdf.save(tmp_path / "original.pdf", object_stream_mode=pikepdf.ObjectStreamMode.generate)
    original = tmp_path / "original.pdf"
    output = tmp_path / "out.pdf"
    summary = graft_text_layers(
        original, layers_for(original, [setup.page_text(scan.words)], 1, tmp_path), output
    )
    assert summary.incremental
    qpdf_check(output)
    assert output.read_bytes()[-2000:].count(b"/Type /XRef") == 1
    assert subprocess.run(
        ["pdftotext", str(output), "-"], capture_output=True, check=True
    ).stdout.decode().split() == ["compressed", "objects"]


def test_a_linearized_original_is_updated(tmp_path: Path) -> None:
    setup = Setup("letter")
    scan = scanned_page(setup, lines=["fast web view"])
    with pikepdf.open(io.BytesIO(scan.pdf)) as pdf:
        pdf.save(tmp_path / "original.pdf", linearize=True)
    original = tmp_path / "original.pdf"
    output = tmp_path / "out.pdf"
    graft_text_layers(original, layers_for(original, [setup.page_text(scan.words)], 1, tmp_path), output)
    qpdf_check(output)
    assert subprocess.run(
        ["pdftotext", str(output), "-"], capture_output=True, check=True
    ).stdout.decode().split() == ["fast", "web", "view"]


def test_an_owner_locked_original_is_rewritten_and_stays_encrypted(tmp_path: Path) -> None:
    setup = Setup("letter")
    scan = scanned_page(setup, lines=["locked for printing"])
    with pikepdf.open(io.BytesIO(scan.pdf)) as pdf:
        pdf.save(
            tmp_path / "original.pdf",
            encryption=pikepdf.Encryption(
                owner="owner", user="", allow=pikepdf.Permissions(print_highres=False)
            ),
        )
    original = tmp_path / "original.pdf"
    output = tmp_path / "out.pdf"
    summary = graft_text_layers(
        original, layers_for(original, [setup.page_text(scan.words)], 1, tmp_path), output
    )
    assert not summary.incremental
    qpdf_check(output)
    with pikepdf.open(output) as pdf:
        assert pdf.is_encrypted
        assert not pdf.allow.print_highres
    assert rendered(output, 0) == rendered(original, 0)
    assert subprocess.run(
        ["pdftotext", str(output), "-"], capture_output=True, check=True
    ).stdout.decode().split() == ["locked", "for", "printing"]


def test_a_page_that_leaves_its_graphics_state_changed_does_not_move_the_words(tmp_path: Path) -> None:
    """The page's content scales everything and never restores, and has a Q too many before it."""
    setup = Setup("letter")
    scan = scanned_page(setup, lines=["state leaks"])
    with pikepdf.open(io.BytesIO(scan.pdf)) as pdf:
        page = pdf.pages[0]
        page.contents_add(pdf.make_stream(b"Q\n"), prepend=True)
        page.contents_add(pdf.make_stream(b"q 0.5 0 0 0.5 100 100 cm q 2 0 0 2 0 0 cm\n"))
        pdf.save(tmp_path / "original.pdf")
    original = tmp_path / "original.pdf"
    output = tmp_path / "out.pdf"
    graft_text_layers(original, layers_for(original, [setup.page_text(scan.words)], 1, tmp_path), output)
    qpdf_check(output)
    document = pdfium.PdfDocument(output)
    try:
        found = pdfium_words(document[0])
    finally:
        document.close()
    assert [text for text, _ in found] == ["state", "leaks"]
    for (text, box), cell in zip(found, scan.cells, strict=True):
        assert distance(box, expected_box(setup, cell)) <= TOLERANCE, text


def test_pages_of_a_deep_page_tree_with_inherited_attributes_get_their_own_layer(tmp_path: Path) -> None:
    """Pages under intermediate /Pages nodes that inherit /MediaBox, /Rotate and /Resources."""
    rotated = BY_NAME["rotate-90"]
    scans = [scanned_page(rotated, lines=[f"page {number} text"]) for number in range(1, 5)]
    flat = join([scan.pdf for scan in scans], tmp_path / "flat.pdf")
    with pikepdf.open(flat) as pdf:
        shared = pdf.make_indirect(pikepdf.Dictionary(pdf.pages[0].obj.Resources))
        kids = [page.obj for page in pdf.pages]
        root = pdf.Root.Pages
        nodes = []
        for pair in (kids[:2], kids[2:]):
            node = pdf.make_indirect(
                pikepdf.Dictionary(
                    Type=Name.Pages, Kids=pair, Count=2, Parent=root, MediaBox=[0, 0, 612, 792], Rotate=90
                )
            )
            for kid in pair:
                kid.Parent = node
                del kid.MediaBox
                del kid.Rotate
            nodes.append(node)
        for index, kid in enumerate(kids):
            image = kid.Resources.XObject
            kid.Resources = pdf.make_indirect(pikepdf.Dictionary(XObject=image)) if index % 2 else shared
        root.Kids = nodes
        pdf.save(tmp_path / "original.pdf")
    original = tmp_path / "original.pdf"
    pages = [
        rotated.page_text(scan.words).model_copy(update={"page_number": number})
        for number, scan in enumerate(scans, start=1)
    ]
    output = tmp_path / "out.pdf"
    summary = graft_text_layers(original, layers_for(original, pages, 3, tmp_path), output)
    assert summary.incremental
    qpdf_check(output)
    document = pdfium.PdfDocument(output)
    try:
        for index in range(len(scans)):
            assert [text for text, _ in pdfium_words(document[index])] == ["page", str(index + 1), "text"]
            assert rendered(output, index) == rendered(original, index)
    finally:
        document.close()


def test_an_original_qpdf_must_repair_is_rewritten(tmp_path: Path) -> None:
    """Its startxref points to the wrong place: an update could not point back at it."""
    setup = Setup("letter")
    scan = scanned_page(setup, lines=["repaired on the way"])
    head, _, tail = scan.pdf.rpartition(b"startxref")
    offset = tail.split()[0]
    original = tmp_path / "original.pdf"
    original.write_bytes(head + b"startxref" + tail.replace(offset, str(int(offset) // 2).encode(), 1))
    output = tmp_path / "out.pdf"
    summary = graft_text_layers(
        original, layers_for(original, [setup.page_text(scan.words)], 1, tmp_path), output
    )
    assert not summary.incremental
    qpdf_check(output)
    assert subprocess.run(
        ["pdftotext", str(output), "-"], capture_output=True, check=True
    ).stdout.decode().split() == ["repaired", "on", "the", "way"]


def test_without_words_the_original_comes_out_as_it_was(tmp_path: Path) -> None:
    setup = Setup("letter")
    scan = scanned_page(setup, lines=["nothing read"])
    original = tmp_path / "original.pdf"
    original.write_bytes(scan.pdf)
    summary = graft_text_layers(
        original, layers_for(original, [no_words(1)], 1, tmp_path), tmp_path / "out.pdf"
    )
    assert (summary.pages, summary.pages_with_text) == (1, 0)
    assert (tmp_path / "out.pdf").read_bytes().rstrip(b"\n") == scan.pdf.rstrip(b"\n")
    qpdf_check(tmp_path / "out.pdf")


# -- refusals -------------------------------------------------------------------------------


@pytest.fixture
def one_page(tmp_path: Path) -> tuple[Path, Scan]:
    setup = Setup("letter")
    scan = scanned_page(setup, lines=["one page"])
    (tmp_path / "original.pdf").write_bytes(scan.pdf)
    return tmp_path / "original.pdf", scan


def test_a_layer_past_the_last_page_is_refused_and_nothing_is_written(
    tmp_path: Path, one_page: tuple[Path, Scan]
) -> None:
    original, scan = one_page
    layer = render_text_layer(scan.pdf, [scan.setup.page_text(scan.words)])
    with pytest.raises(TextLayerError):
        graft_text_layers(original, [(1, layer), (2, layer)], tmp_path / "out.pdf")
    assert not (tmp_path / "out.pdf").exists()
    assert list(tmp_path.glob("*.partial")) == []


def test_a_layer_of_another_page_size_is_refused(tmp_path: Path, one_page: tuple[Path, Scan]) -> None:
    original, _ = one_page
    other = scanned_page(BY_NAME["a4-cropped"], lines=["wrong size"])
    layer = render_text_layer(other.pdf, [other.setup.page_text(other.words)])
    with pytest.raises(TextLayerError):
        graft_text_layers(original, [(1, layer)], tmp_path / "out.pdf")


def test_a_pdf_that_is_not_a_layer_is_refused(tmp_path: Path, one_page: tuple[Path, Scan]) -> None:
    original, scan = one_page
    with pytest.raises(TextLayerError):
        graft_text_layers(original, [(1, scan.pdf)], tmp_path / "out.pdf")


def test_a_missing_original_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PdfNotFoundError):
        graft_text_layers(tmp_path / "none.pdf", [], tmp_path / "out.pdf")
