from __future__ import annotations

import sys

import pytest

from app.core.errors import InvalidInputError
from app.engines.errors import EngineUnavailableError, UnknownEngineError
from app.engines.registry import available_engines, get_engine


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
