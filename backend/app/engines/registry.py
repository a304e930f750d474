"""Engines by name; each process builds an engine once and keeps it.

Engines are imported on first use, inside the OCR process that runs them, so
a worker only pays for (and only needs) the engine it is configured with.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from app.engines.base import OcrEngine
from app.engines.errors import EngineError, EngineUnavailableError, UnknownEngineError


def _text_layer() -> OcrEngine:
    from app.engines.text_layer import TextLayerEngine

    return TextLayerEngine()


def _tesseract() -> OcrEngine:
    from app.engines.tesseract import TesseractEngine

    return TesseractEngine()


def _auto() -> OcrEngine:
    from app.engines.auto import AutoEngine

    return AutoEngine()


def _null() -> OcrEngine:
    from app.engines.null import NullEngine

    return NullEngine()


def _google_vision() -> OcrEngine:
    # Imported only when asked for: gRPC and the Vision client are heavy, and optional.
    try:
        from app.engines.google_vision import GoogleVisionEngine
    except ImportError as exc:
        raise EngineUnavailableError(
            f"the google-vision engine cannot be loaded ({exc}); install google-cloud-vision"
        ) from None
    return GoogleVisionEngine()


_FACTORIES: dict[str, Callable[[], OcrEngine]] = {
    "auto": _auto,
    "tesseract": _tesseract,
    "text-layer": _text_layer,
    "null": _null,
    "google-vision": _google_vision,
}


def available_engines() -> tuple[str, ...]:
    return tuple(_FACTORIES)


@cache
def get_engine(name: str) -> OcrEngine:
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise UnknownEngineError(
            f"unknown OCR engine {name!r}; choose one of {', '.join(available_engines())}"
        ) from None
    return factory()


def probe_engines() -> tuple[dict[str, str], dict[str, str]]:
    """Build every engine here: the versions of those that can run, and why the others cannot.

    Runs in an OCR process at worker start-up, so a worker advertises the
    engines that really build where its OCR runs.
    """
    versions: dict[str, str] = {}
    reasons: dict[str, str] = {}
    for name in available_engines():
        try:
            versions[name] = get_engine(name).version()
        except EngineError as exc:
            reasons[name] = str(exc)
    return versions, reasons
