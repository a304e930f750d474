"""tesseract read in the OCR process through libtesseract (app.engines._tesseract_api) is the
tesseract command's reading, byte for byte: the same TSV from the same pixels, in every
language the suite installs, on clean and degraded scans. Its model is loaded once per process
and language, and what tesseract prints while it reads stays off the process's stderr.

The words are taken from the library in one walk (app.engines._tesseract_words), not from its
TSV, whose cost grows with the square of a page's words: the two give the same words on pages
of many words a line, several columns, headings and a picture."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageDraw

from app.engines import _tesseract_api, _tesseract_words
from app.engines._tesseract_api import PSM_BLOCK, reader
from app.engines._tesseract_exec import words_to_text
from app.pdf.samples import SENTENCES, font
from tests.corpus.languages import german_scan, russian_scan
from tests.integration.engines.conftest import Sample
from tests.tesseract_command import command_tsv


def _pages(pdf: Path) -> list[Image.Image]:
    document = pdfium.PdfDocument(pdf)
    try:
        return [
            document[i].render(scale=300 / 72, grayscale=True).to_pil().convert("L")
            for i in range(len(document))
        ]
    finally:
        document.close()


def _library_tsv(image: Image.Image, language: str) -> str:
    """The reader's words put back as the TSV's word rows, to compare with the command's."""
    words = reader(language).read(image, dpi=300)
    return "\n".join(
        "\t".join(
            str(v)
            for v in (w.block, w.paragraph, w.line, w.left, w.top, w.width, w.height, w.confidence, w.text)
        )
        for w in words
    )


def _command_word_rows(image: Image.Image, language: str, path: Path) -> str:
    image.save(path, dpi=(300, 300))
    rows = []
    for line in command_tsv(path, language=language).splitlines()[1:]:
        level, _page, block, par, row, _word, left, top, width, height, conf, *text = line.split("\t")
        word = "\t".join(text).strip()
        if level == "5" and word:
            values = (block, par, row, left, top, width, height, max(0.0, float(conf)), word)
            rows.append("\t".join(str(v) for v in values))
    return "\n".join(rows)


def test_each_page_reads_as_the_command_reads_it(scan_2p: Sample, tmp_path: Path) -> None:
    for index, image in enumerate(_pages(scan_2p.path)):
        assert _library_tsv(image, "eng") == _command_word_rows(image, "eng", tmp_path / f"{index}.tif")


@pytest.mark.parametrize(("make", "language"), [(russian_scan, "rus"), (german_scan, "deu")])
def test_other_languages_read_as_the_command_reads_them(make: object, language: str, tmp_path: Path) -> None:
    fixture = make(tmp_path)  # type: ignore[operator]
    (image,) = _pages(fixture.path)
    library = _library_tsv(image, language)
    assert library  # words were read
    assert library == _command_word_rows(image, language, tmp_path / "page.tif")


def test_the_model_is_loaded_once_per_language() -> None:
    assert reader("eng") is reader("eng")
    assert reader("eng+deu") is not reader("eng")
    assert _tesseract_api._readers.keys() >= {"eng", "eng+deu"}


def test_what_tesseract_says_while_reading_stays_off_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    """A blank page makes tesseract say "Empty page!!" on its stderr; the command's was captured,
    and so is the library's."""
    assert reader("eng").read(Image.new("L", (2550, 3300), 255), dpi=300) == []
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_a_variable_set_on_the_reader_applies_to_what_it_reads_next() -> None:
    """set_variable (for bench.tesseract_options) reaches the reader's tesseract: with digits
    alone allowed, a line of words and numbers reads as digits; put back, as it is."""
    image = Image.new("L", (1400, 160), 255)
    ImageDraw.Draw(image).text((40, 40), "Invoice 2041 is due on 17 March", font=font(16), fill=0)
    tesseract = reader("eng")
    try:
        tesseract.set_variable("tessedit_char_whitelist", "0123456789")
        digits = "".join(word.text for word in tesseract.read(image, dpi=300))
    finally:
        tesseract.set_variable("tessedit_char_whitelist", "")
    assert digits.isdigit()  # not empty, and digits only
    assert " ".join(word.text for word in tesseract.read(image, dpi=300)) == "Invoice 2041 is due on 17 March"
    with pytest.raises(ValueError, match="no_such_variable"):
        tesseract.set_variable("no_such_variable", "1")


def test_a_page_read_as_one_block_of_lines_leaves_the_next_read_fully_automatic() -> None:
    """psm=PSM_BLOCK (what follows a page's leaders) reads two columns across, a line of each at
    a time; the next read without it finds the columns again, as the command does."""
    image = Image.new("L", (2550, 900), 255)
    draw = ImageDraw.Draw(image)
    for row in range(6):
        draw.text((300, 200 + 80 * row), f"left column line {row}", font=font(11), fill=0)
        draw.text((1500, 200 + 80 * row), f"right side row {row}", font=font(11), fill=0)
    tesseract = reader("eng")
    for _ in range(2):
        across = words_to_text(tesseract.read(image, dpi=300, psm=PSM_BLOCK)).splitlines()
        assert across[0] == "left column line 0 right side row 0"
        down = [line for line in words_to_text(tesseract.read(image, dpi=300)).splitlines() if line]
        assert down[:2] == ["left column line 0", "left column line 1"]


def test_a_missing_language_is_a_deployment_error() -> None:
    from app.engines.errors import EngineUnavailableError

    with pytest.raises(EngineUnavailableError, match="xyz") as raised:
        reader("xyz")
    assert not raised.value.retryable


def _layout_page() -> Image.Image:
    """A 300 DPI page with what makes tesseract's blocks, paragraphs and lines: a heading, two
    columns of paragraphs, a picture between them and the footer, a line of white on black, and
    a full-width line of small type."""
    rng = random.Random(18)
    image = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(image)
    draw.text((300, 220), "Quarterly Report of the Harbour Board", font=font(22), fill=0)
    body = font(10)
    for left in (300, 1350):
        y = 420
        for _paragraph in range(3):
            text = " ".join(rng.choice(SENTENCES) for _ in range(3))
            for line in textwrap.wrap(text, width=40):
                draw.text((left, y), line, font=body, fill=0)
                y += 52
            y += 60
    picture = Image.effect_noise((900, 500), 60).point(lambda v: v // 2)
    image.paste(picture, (300, 2350))
    draw.rectangle((1350, 2350, 2250, 2450), fill=0)
    draw.text((1380, 2370), "Tides and Soundings", font=font(14), fill=255)
    draw.text((300, 3000), " ".join(rng.choice(SENTENCES) for _ in range(2))[:120], font=font(8), fill=0)
    return image


def _dense_page() -> Image.Image:
    """A page of 10-point prose edge to edge: about 850 words, the TSV's slow case."""
    rng = random.Random(7)
    image = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(image)
    words = " ".join(rng.choice(SENTENCES) for _ in range(80))
    for index, line in enumerate(textwrap.wrap(words, width=95)[:62]):
        draw.text((225, 240 + index * 46), line, font=font(10), fill=0)
    return image


@pytest.mark.parametrize("page", [_layout_page, _dense_page], ids=["layout", "dense"])
def test_the_walk_gives_the_words_of_the_tsv(page: object) -> None:
    """The same recognition, its words taken twice: by the walk read() uses and from the TSV."""
    lib = _tesseract_api._library()
    members = _tesseract_words._members(lib)
    assert members is not None  # the library exports what the walk calls
    image = page()  # type: ignore[operator]
    tesseract = reader("eng")
    lib.TessBaseAPISetVariable(tesseract._handle, b"user_defined_dpi", b"300")
    lib.TessBaseAPISetImage(tesseract._handle, image.tobytes(), image.width, image.height, 1, image.width)
    try:
        assert lib.TessBaseAPIRecognize(tesseract._handle, None) == 0
        walked = _tesseract_words._walk(lib, members, tesseract._handle)
        from_tsv = _tesseract_words._from_tsv(lib, tesseract._handle)
    finally:
        lib.TessBaseAPIClear(tesseract._handle)
    assert walked == from_tsv
    assert walked is not None
    assert len({(w.block, w.paragraph) for w in walked}) >= 3  # the numbering was exercised
    assert len(walked) > (600 if page is _dense_page else 150)


@pytest.mark.parametrize(
    ("text", "right_to_left"),
    [
        ("שלום", True),  # Hebrew
        ("سلام", True),  # Arabic
        ("(١٢٣)", True),  # Arabic-Indic digits
        ("Straße", False),
        ("Привет,", False),
        ("1,234.5%", False),
    ],
)
def test_a_word_in_a_right_to_left_script_sends_the_page_to_the_tsv(text: str, right_to_left: bool) -> None:
    """The walk keeps tesseract's left-to-right order; a page where any word reads right to left
    is taken from the TSV, which reorders such lines."""
    assert _tesseract_words._right_to_left(text) is right_to_left
