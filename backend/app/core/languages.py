"""The language a document is read in, in tesseract's syntax: codes joined by `+`.

A code is the name of one of tesseract's trained data files: `eng`, `rus`, `chi_sim`,
`deu_latf`. `eng+deu` reads with both. (Script models, `script/Latin`, live in a directory
of their own and are not offered: a code is letters, digits and `_`.) The same pattern
and length bound are the CHECK on `documents.language` and `document_ocr_chunks.language`
(supabase/migrations/20261124000200_ocr_document_language.sql), and a test holds the two
together (integration/db/test_limits_sql.py).

Which codes exist is the OCR machine's business (app.engines.languages asks tesseract); here
is only the syntax, which every entry point checks before anything is written.
"""

from __future__ import annotations

import re

from app.core.errors import InvalidInputError

DEFAULT_LANGUAGE = "eng"
LANGUAGE_MAX = 200  # about 40 codes: more than tesseract can usefully combine on one page
LANGUAGE_PATTERN = r"^[A-Za-z][A-Za-z0-9_]*(\+[A-Za-z][A-Za-z0-9_]*)*$"
# Trained data tesseract lists that does not read text: orientation and script detection.
NOT_FOR_READING = frozenset({"osd"})

_LANGUAGE = re.compile(LANGUAGE_PATTERN)


class InvalidLanguageError(InvalidInputError):
    """A language that is not tesseract's syntax, or names data that does not read text."""

    code = "invalid_input"


def check_language(value: str) -> str:
    """The language, if it is well formed and every code in it is for reading text."""
    if not value:
        raise InvalidLanguageError("language: empty; give tesseract's codes, such as eng or eng+deu")
    if len(value) > LANGUAGE_MAX:
        raise InvalidLanguageError(f"language: longer than {LANGUAGE_MAX} characters")
    if not _LANGUAGE.fullmatch(value):
        raise InvalidLanguageError(
            f"language: {value!r} is not tesseract's syntax; give codes such as eng, chi_sim or "
            "eng+deu (letters, digits and _, joined by +)"
        )
    if unreadable := [code for code in language_codes(value) if code in NOT_FOR_READING]:
        raise InvalidLanguageError(
            f"language: {unreadable[0]!r} is tesseract's orientation and script detection data, "
            "not a language to read text in"
        )
    return value


def language_codes(language: str) -> tuple[str, ...]:
    """The codes of a language, in order: `eng+deu` -> (`eng`, `deu`)."""
    return tuple(language.split("+"))
