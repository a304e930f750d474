"""A document's language: tesseract's syntax, checked once for every entry point; where it shows
in paths and hints."""

from __future__ import annotations

from uuid import UUID

import pytest

from app.core.config import load_settings
from app.core.errors import ConfigurationError, InvalidInputError
from app.core.languages import LANGUAGE_MAX, check_language, language_codes
from app.engines.languages import debian_package, not_installed, readable
from app.engines.specs import ENGINE_SPECS
from app.engines.vision_languages import vision_language_hints
from app.storage.paths import chunk_result_path

MATTER, DOCUMENT = UUID(int=1), UUID(int=2)


@pytest.mark.parametrize("value", ["eng", "rus", "chi_sim", "deu_latf", "eng+deu", "rus+eng+chi_tra"])
def test_tesseract_codes_joined_by_plus_are_languages(value: str) -> None:
    assert check_language(value) == value


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("", "empty"),
        ("eng deu", "not tesseract's syntax"),
        ("eng,deu", "not tesseract's syntax"),
        ("eng+", "not tesseract's syntax"),
        ("../../etc/passwd", "not tesseract's syntax"),
        ("script/Latin", "not tesseract's syntax"),
        ("eng\n", "not tesseract's syntax"),
        ("e" * (LANGUAGE_MAX + 1), f"longer than {LANGUAGE_MAX}"),
        ("osd", "orientation and script detection"),
        ("eng+osd", "orientation and script detection"),
    ],
)
def test_anything_else_is_invalid_input_in_one_line(value: str, says: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        check_language(value)
    assert raised.value.code == "invalid_input"
    assert says in str(raised.value)
    assert "\n" not in str(raised.value)


def test_codes_in_order() -> None:
    assert language_codes("eng+deu+rus") == ("eng", "deu", "rus")


def test_ocr_language_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OCR_LANGUAGE", raising=False)
    assert load_settings().ocr_language == "eng"
    monkeypatch.setenv("OCR_LANGUAGE", "rus+eng")
    assert load_settings().ocr_language == "rus+eng"
    for bad in ("rus eng", "osd"):
        monkeypatch.setenv("OCR_LANGUAGE", bad)
        with pytest.raises(ConfigurationError) as raised:
            load_settings()
        assert str(raised.value).startswith("invalid setting OCR_LANGUAGE: ")
        assert "\n" not in str(raised.value)


def test_a_result_read_in_another_language_is_another_result() -> None:
    paths = {
        language: chunk_result_path(MATTER, DOCUMENT, 3, "a" * 64, "tesseract", language)
        for language in ("eng", "rus", "eng+rus", "rus+eng")
    }
    assert len(set(paths.values())) == 4
    assert paths["eng+rus"].endswith("/chunks/00003-aaaaaaaaaaaaaaaa-eng.rus-tesseract.json")
    # the engine is still the name's end, and the document's prefix its start
    assert all(
        p.startswith(f"{MATTER}/{DOCUMENT}/chunks/") and p.endswith("-tesseract.json") for p in paths.values()
    )


def test_the_engines_that_read_with_tesseract_are_the_ones_checked() -> None:
    checked = {name for name, spec in ENGINE_SPECS.items() if spec.tesseract_languages}
    assert checked == {"auto", "tesseract"}


def test_the_refusal_names_what_is_there_and_how_to_add_what_is_not() -> None:
    message = not_installed(["xyz"], ["eng", "osd", "rus"])
    assert message == (
        "language 'xyz' is not installed for tesseract (installed: eng, rus); "
        'apt-get install tesseract-ocr-xyz or make install TESSERACT_LANGS="eng xyz"'
    )
    two = not_installed(["chi_sim", "xyz"], ["eng"], where=" on any worker")
    assert two.startswith("languages 'chi_sim', 'xyz' are not installed for tesseract on any worker")
    assert "apt-get install tesseract-ocr-chi-sim tesseract-ocr-xyz" in two
    assert 'TESSERACT_LANGS="eng chi_sim xyz"' in two
    assert debian_package("deu_latf") == "tesseract-ocr-deu-latf"
    assert readable(["osd", "eng", "script/Latin", "rus"]) == ["eng", "rus"]


@pytest.mark.parametrize(
    ("language", "hints"),
    [
        ("eng", ("en",)),
        ("rus", ("ru",)),
        ("deu+eng", ("de", "en")),
        ("chi_sim+chi_tra", ("zh",)),
        ("eng+xyz", ("en",)),  # a code Vision has no hint for is left out
        ("lat", ()),  # none maps: Vision detects the language itself
    ],
)
def test_vision_hints(language: str, hints: tuple[str, ...]) -> None:
    assert vision_language_hints(language) == hints
