"""Russian set in fonts whose codes are Windows-1251's, read as Latin-1.

TeX's Cyrillic fonts for Russian (T2A, and the bitmap Type 3 fonts dvips makes of them) put
А-Я and а-я at codes 192-255, where Windows-1251 has them. A font with no Unicode map and no
glyph names PDFium knows gives those codes as the text, which reads as Latin-1: "Ïðåäèñëîâèå"
for "Предисловие". Such a page went to OCR, read with the document's language (English by
default) into gibberish, where its own text was there to be read.

A page whose letters are nearly all (_SHARE) of Latin-1's accented range is such a page: no
language written in Latin letters has more than a few in a hundred of them. Its characters of
that range (and Ё, ё at 168, 184) are read as Windows-1251's; ASCII (English words, numbers)
stays as it is.
"""

from __future__ import annotations

# ruff: noqa: RUF002 - the Cyrillic letters in the docstring are the point of it

_SHARE = 0.6  # of a page's letters in U+00C0-U+00FF, at least
_MIN_LETTERS = 20  # fewer, and a page is no evidence (a name, a heading)
_RECODED = {code: bytes([code]).decode("cp1251") for code in (*range(0xC0, 0x100), 0xA8, 0xB8)}


def with_cyrillic_codes(text: str) -> str:
    """text with Russian read from Windows-1251 codes, when it is such a page (above)."""
    if text.isascii():
        return text
    letters = latin1 = 0
    for char in text:
        if char.isalpha():
            letters += 1
            latin1 += 0xC0 <= ord(char) <= 0xFF
    if letters < _MIN_LETTERS or latin1 < _SHARE * letters:
        return text
    return text.translate(_RECODED)
