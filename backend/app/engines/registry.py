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
from app.core.languages import DEFAULT_LANGUAGE
from app.engines.base import OcrEngine
from app.engines.errors import EngineError, EngineUnavailableError, UnknownEngineError
from app.engines.languages import installed_languages, readable
from app.engines.specs import ENGINE_SPECS

_settings: Settings | None = None  # set in an OCR process: its worker's settings


def _text_layer(settings: Settings, language: str) -> OcrEngine:
    from app.engines.text_layer import TextLayerEngine

    return TextLayerEngine()


def _tesseract(settings: Settings, language: str) -> OcrEngine:
    from app.engines.tesseract import TesseractEngine

    return TesseractEngine(language)


def _auto(settings: Settings, language: str) -> OcrEngine:
    from app.engines.auto import AutoEngine

    return AutoEngine(language)


def _null(settings: Settings, language: str) -> OcrEngine:
    from app.engines.null import NullEngine

    return NullEngine()


def _google_vision(settings: Settings, language: str) -> OcrEngine:
    # Imported only when asked for: gRPC and the Vision client are heavy, and optional.
    try:
        from app.engines.google_vision import GoogleVisionEngine
    except ImportError as exc:
        raise EngineUnavailableError(
            f"the google-vision engine cannot be loaded ({exc}); install google-cloud-vision"
        ) from None
    return GoogleVisionEngine.from_settings(settings, language)


# One builder per EngineSpec (a test holds the two to the same names).
_BUILDERS: dict[str, Callable[[Settings, str], OcrEngine]] = {
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
def get_engine(name: str, language: str = DEFAULT_LANGUAGE) -> OcrEngine:
    """The engine, reading in `language` (tesseract's codes; an engine without a use for it
    ignores it), built once per process for each pair."""
    build = _BUILDERS.get(name) if name in ENGINE_SPECS else None
    if build is None:
        raise UnknownEngineError(
            f"unknown OCR engine {name!r}; choose one of {', '.join(available_engines())}"
        )
    return build(_settings if _settings is not None else get_settings(), language)


def probe_engines() -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Build every engine here: the versions of those that can run, why the others cannot, and
    the languages tesseract reads here (`tesseract --list-langs`, without osd).

    Runs in a process of its own at worker start-up (app.engines.probe), with
    the worker's settings, so a worker advertises the engines and languages that
    really build where its OCR runs. Engines are built in English, or where
    English is not installed, in a language that is: whether an engine runs and
    which languages it can read are told apart.
    """
    try:
        languages = readable(installed_languages())
    except EngineError:  # no tesseract: its engines say why below
        languages = []
    language = DEFAULT_LANGUAGE if DEFAULT_LANGUAGE in languages or not languages else languages[0]
    versions: dict[str, str] = {}
    reasons: dict[str, str] = {}
    for name in available_engines():
        try:
            versions[name] = get_engine(name, language).version()
        except EngineError as exc:
            reasons[name] = str(exc)
    return versions, reasons, languages
