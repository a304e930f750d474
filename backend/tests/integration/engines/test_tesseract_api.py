"""tesseract read in the OCR process through libtesseract (app.engines._tesseract_api) is the
tesseract command's reading, byte for byte: the same TSV from the same pixels, in every
language the suite installs, on clean and degraded scans. Its model is loaded once per process
and language, and what tesseract prints while it reads stays off the process's stderr."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image

from app.engines import _tesseract_api
from app.engines._tesseract_api import reader
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


def test_a_missing_language_is_a_deployment_error() -> None:
    from app.engines.errors import EngineUnavailableError

    with pytest.raises(EngineUnavailableError, match="xyz") as raised:
        reader("xyz")
    assert not raised.value.retryable
