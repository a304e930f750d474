"""Engines by name; each process builds an engine once and keeps it.

Engines are imported on first use, inside the OCR process that runs them, so
a worker only pays for (and only needs) the engine it is configured with.
What must be known of an engine without importing it (its name, the pages it
takes per request) is its EngineSpec in app.engines.specs. Its options are
Settings fields, passed to it here when it is built: an OCR process builds
engines with the Settings of the worker that started it (use_settings, called
by the pool and the probe), any other process with the environment's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from app.core.config import Settings, get_settings
from app.engines.base import OcrEngine
from app.engines.errors import EngineError, EngineUnavailableError, UnknownEngineError
from app.engines.specs import ENGINE_SPECS

_settings: Settings | None = None  # set in an OCR process: its worker's settings


def _text_layer(settings: Settings) -> OcrEngine:
    from app.engines.text_layer import TextLayerEngine

    return TextLayerEngine()


def _tesseract(settings: Settings) -> OcrEngine:
    from app.engines.tesseract import TesseractEngine

    return TesseractEngine()


def _auto(settings: Settings) -> OcrEngine:
    from app.engines.auto import AutoEngine

    return AutoEngine()


def _null(settings: Settings) -> OcrEngine:
    from app.engines.null import NullEngine

    return NullEngine()


def _google_vision(settings: Settings) -> OcrEngine:
    # Imported only when asked for: gRPC and the Vision client are heavy, and optional.
    try:
        from app.engines.google_vision import GoogleVisionEngine
    except ImportError as exc:
        raise EngineUnavailableError(
            f"the google-vision engine cannot be loaded ({exc}); install google-cloud-vision"
        ) from None
    return GoogleVisionEngine.from_settings(settings)


# One builder per EngineSpec (a test holds the two to the same names).
_BUILDERS: dict[str, Callable[[Settings], OcrEngine]] = {
    "auto": _auto,
    "tesseract": _tesseract,
    "text-layer": _text_layer,
    "google-vision": _google_vision,
    "null": _null,
}


def available_engines() -> tuple[str, ...]:
    return tuple(ENGINE_SPECS)


def use_settings(settings: Settings | None) -> None:
    """Build engines with these settings from now on (an OCR process: its worker's; None: the
    environment's). Engines built before are dropped."""
    global _settings
    _settings = settings
    get_engine.cache_clear()


@cache
def get_engine(name: str) -> OcrEngine:
    build = _BUILDERS.get(name) if name in ENGINE_SPECS else None
    if build is None:
        raise UnknownEngineError(
            f"unknown OCR engine {name!r}; choose one of {', '.join(available_engines())}"
        )
    return build(_settings if _settings is not None else get_settings())


def probe_engines() -> tuple[dict[str, str], dict[str, str]]:
    """Build every engine here: the versions of those that can run, and why the others cannot.

    Runs in a process of its own at worker start-up (app.engines.probe), with
    the worker's settings, so a worker advertises the engines that really
    build where its OCR runs.
    """
    versions: dict[str, str] = {}
    reasons: dict[str, str] = {}
    for name in available_engines():
        try:
            versions[name] = get_engine(name).version()
        except EngineError as exc:
            reasons[name] = str(exc)
    return versions, reasons
