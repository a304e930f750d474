"""A document's language (tesseract's codes) as Cloud Vision language hints (BCP-47).

Vision detects the language itself, and its documentation warns that a wrong hint hurts and
that an unsupported one is an error. So only codes that map one to one onto a language of
Vision's supported list are passed; any other code is left out, and a language none of whose
codes maps sends no hint (Vision detects it). Chinese is `zh` for both scripts, as Vision lists
it.
"""

from __future__ import annotations

from app.core.languages import language_codes

# tesseract (ISO 639-2) -> Vision's languageHints code, for common languages of its supported list.
VISION_HINTS = {
    "ara": "ar",
    "bul": "bg",
    "ces": "cs",
    "chi_sim": "zh",
    "chi_tra": "zh",
    "dan": "da",
    "deu": "de",
    "ell": "el",
    "eng": "en",
    "est": "et",
    "fas": "fa",
    "fin": "fi",
    "fra": "fr",
    "hin": "hi",
    "hrv": "hr",
    "hun": "hu",
    "ind": "id",
    "ita": "it",
    "jpn": "ja",
    "kor": "ko",
    "lav": "lv",
    "lit": "lt",
    "nld": "nl",
    "nor": "no",
    "pol": "pl",
    "por": "pt",
    "ron": "ro",
    "rus": "ru",
    "slk": "sk",
    "slv": "sl",
    "spa": "es",
    "srp": "sr",
    "swe": "sv",
    "tha": "th",
    "tur": "tr",
    "ukr": "uk",
    "vie": "vi",
}


def vision_language_hints(language: str) -> tuple[str, ...]:
    """The hints for a language, in its order, each once: `eng+deu` -> (`en`, `de`)."""
    hints = (VISION_HINTS.get(code) for code in language_codes(language))
    return tuple(dict.fromkeys(hint for hint in hints if hint is not None))
