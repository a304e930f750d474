"""Engines read in the document's language: real tesseract on scans in Russian and German.

Needs tesseract's rus and deu data (`make install` installs them: TESSERACT_LANGS); without
them these tests fail, as they should. `pytest -s` prints the character error rates.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.errors import InvalidInputError
from app.engines.auto import AutoEngine
from app.engines.errors import EngineUnavailableError
from app.engines.google_vision import GoogleVisionEngine
from app.engines.languages import installed_languages
from app.engines.pool import make_ocr_pool, recognize_in_process, stop_ocr_pool
from app.engines.registry import get_engine, use_settings
from app.engines.tesseract import TesseractEngine
from app.pdf.samples import make_born_digital_pdf
from tests.corpus import Fixture
from tests.corpus.languages import SCANS, german_scan, russian_scan
from tests.pdf_factories import cer
from tests.vision_fake import VisionServer, vision_settings

REPO_ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def scans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Fixture]:
    directory = tmp_path_factory.mktemp("languages")
    return {language: build(directory) for language, build in SCANS.items()}


def read(engine: TesseractEngine | AutoEngine, fixture: Fixture) -> str:
    pages = engine.recognize(fixture.path.read_bytes(), 1)
    assert len(pages) == len(fixture.expected)
    return "\f".join(page.text for page in pages)


def test_the_languages_the_tests_read_are_installed() -> None:
    assert {"eng", "osd", "rus", "deu"} <= set(installed_languages())


def test_a_russian_scan_read_in_russian(scans: dict[str, Fixture]) -> None:
    fixture = scans["rus"]
    expected = "\f".join(fixture.expected)
    as_english = cer(expected, read(TesseractEngine("eng"), fixture))
    as_russian = cer(expected, read(TesseractEngine("rus"), fixture))
    print(f"\nrussian scan CER: eng {as_english:.2%}, rus {as_russian:.2%}")
    assert as_english > 0.5  # what a Russian document got before it could be asked for
    assert as_russian < 0.02


def test_a_german_scan_keeps_its_umlauts_and_sharp_s(scans: dict[str, Fixture]) -> None:
    fixture = scans["deu"]
    expected = "\f".join(fixture.expected)
    as_english = cer(expected, read(TesseractEngine("eng"), fixture))
    text = read(TesseractEngine("deu"), fixture)
    as_german = cer(expected, text)
    print(f"\ngerman scan CER: eng {as_english:.2%}, deu {as_german:.2%}")
    assert as_german < 0.01
    assert as_german < as_english
    for word in ("großen", "Straßensperrung", "für", "Rückfragen", "Büro", "nächste", "nördlichen"):
        assert word in text


def test_two_languages_at_once(scans: dict[str, Fixture]) -> None:
    fixture = scans["rus"]
    assert cer("\f".join(fixture.expected), read(TesseractEngine("eng+rus"), fixture)) < 0.02


def test_auto_reads_its_scanned_pages_in_the_language(scans: dict[str, Fixture]) -> None:
    fixture = scans["rus"]
    assert AutoEngine("rus").tesseract.language == "rus"
    assert cer("\f".join(fixture.expected), read(AutoEngine("rus"), fixture)) < 0.02


def test_the_fixture_builders_are_deterministic(tmp_path: Path) -> None:
    first, second = russian_scan(tmp_path / "a", pages=2), russian_scan(tmp_path / "b", pages=2)
    assert first.path.read_bytes() == second.path.read_bytes()
    assert first.expected == second.expected
    assert first.expected[0] != first.expected[1]
    assert "ß" in german_scan(tmp_path / "c").expected[0]


def test_engines_are_built_once_per_process_for_each_language() -> None:
    russian = get_engine("tesseract", "rus")
    assert russian is get_engine("tesseract", "rus")
    assert russian is not get_engine("tesseract")
    assert isinstance(russian, TesseractEngine)
    assert russian.language == "rus"
    assert get_engine("tesseract").language == "eng"  # type: ignore[attr-defined]
    # engines without a use for the language build whatever it is
    assert get_engine("text-layer", "xyz").name == "text-layer"
    assert get_engine("null", "xyz").name == "null"


def test_a_language_not_installed_is_a_deployment_error_naming_the_fix() -> None:
    for build in (
        lambda: TesseractEngine("xyz"),
        lambda: AutoEngine("eng+xyz"),
        lambda: get_engine("tesseract", "xyz"),
    ):
        with pytest.raises(EngineUnavailableError) as raised:
            build()
        error = raised.value
        assert (error.code, error.retryable) == ("engine_unavailable", False)
        message = str(error)
        assert message.startswith("language 'xyz' is not installed for tesseract (installed: ")
        installed = message.split("(installed: ", 1)[1].split(")", 1)[0].split(", ")
        assert installed == sorted(installed)
        assert {"deu", "eng", "rus"} <= set(installed)
        assert "osd" not in installed
        assert 'apt-get install tesseract-ocr-xyz or make install TESSERACT_LANGS="eng xyz"' in message
        assert "\n" not in message


def test_osd_reads_no_text() -> None:
    assert "osd" in installed_languages()
    with pytest.raises(InvalidInputError) as raised:
        TesseractEngine("osd")
    assert "orientation and script detection" in str(raised.value)


def test_an_ocr_process_reads_the_chunk_in_the_language_it_is_given(scans: dict[str, Fixture]) -> None:
    fixture = scans["rus"]
    pool = make_ocr_pool(1)
    try:
        pages, version = pool.submit(
            recognize_in_process, "tesseract", fixture.path.read_bytes(), 7, "rus"
        ).result(timeout=120)
        with pytest.raises(EngineUnavailableError):
            pool.submit(recognize_in_process, "tesseract", fixture.path.read_bytes(), 7, "xyz").result(
                timeout=120
            )
    finally:
        stop_ocr_pool(pool)
    assert [p.page_number for p in pages] == [7]
    assert cer(fixture.expected[0], pages[0].text) < 0.02
    assert version.startswith("tesseract")


def test_the_probe_lists_the_languages_a_worker_advertises() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app.engines.probe"],
        capture_output=True,
        cwd=REPO_ROOT,
        timeout=120,
        check=True,
    )
    found = json.loads(done.stdout)
    assert {"eng", "rus", "deu"} <= set(found["languages"])
    assert "osd" not in found["languages"]
    assert {"auto", "tesseract"} <= set(found["versions"])


def test_vision_gets_the_language_as_a_hint(vision: VisionServer, tmp_path: Path) -> None:
    use_settings(vision_settings(vision))
    try:
        russian = get_engine("google-vision", "rus+eng")
        assert isinstance(russian, GoogleVisionEngine)
        assert russian.language_hints == ("ru", "en")
        make_born_digital_pdf(tmp_path / "c.pdf", pages=2)
        russian.recognize((tmp_path / "c.pdf").read_bytes(), 1)
        unmapped = get_engine("google-vision", "lat")  # no hint Vision is sure to know: none sent
        unmapped.recognize((tmp_path / "c.pdf").read_bytes(), 1)
    finally:
        use_settings(None)
    hints = [list(r.requests[0].image_context.language_hints) for r in vision.requests]
    assert hints == [["ru", "en"], []]
