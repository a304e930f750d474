from __future__ import annotations

import sys

import pytest

from app.core.config import load_settings
from app.core.errors import InvalidInputError
from app.engines.errors import EngineUnavailableError, UnknownEngineError
from app.engines.registry import available_engines, get_engine, use_settings


def test_names() -> None:
    assert set(available_engines()) == {"auto", "tesseract", "text-layer", "google-vision", "null"}


@pytest.mark.parametrize("name", ["auto", "tesseract", "text-layer", "null"])
def test_each_engine_is_built_once_per_process(name: str) -> None:
    engine = get_engine(name)
    assert engine.name == name
    assert engine is get_engine(name)
    assert engine.version()


def test_unknown_engine() -> None:
    with pytest.raises(UnknownEngineError) as raised:
        get_engine("magic")
    assert isinstance(raised.value, InvalidInputError)
    assert raised.value.code == "unknown_engine"
    assert "auto" in str(raised.value)


def test_google_vision_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Vision engine is imported lazily; without it, the error says what to install."""
    monkeypatch.setitem(sys.modules, "app.engines.google_vision", None)  # import now raises ImportError
    get_engine.cache_clear()
    try:
        with pytest.raises(EngineUnavailableError) as raised:
            get_engine("google-vision")
        assert "google-cloud-vision" in str(raised.value)
        assert not raised.value.retryable
    finally:
        get_engine.cache_clear()


@pytest.mark.parametrize("name", available_engines())
def test_every_declared_engine_has_a_builder(name: str) -> None:
    """ENGINE_SPECS (what planning and the command line know) and the builders name the same engines."""
    try:
        assert get_engine(name).name == name
    except EngineUnavailableError:  # google-vision without credentials: known, not buildable here
        assert name == "google-vision"


def test_new_settings_drop_the_engines_built_before() -> None:
    before = get_engine("null")
    use_settings(load_settings())
    try:
        assert get_engine("null") is not before
    finally:
        use_settings(None)
