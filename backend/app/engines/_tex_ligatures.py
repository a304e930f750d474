"""Ligatures a TeX font without a Unicode mapping hands over as control characters.

A font with no ToUnicode map and no glyph names PDFium knows (most often the bitmap Type 3
fonts dvips and pdfTeX make from METAFONT's PK files) gives its character codes as the text.
TeX's text fonts put letters at ASCII's codes, so such a page reads, except where a ligature
was set: ff, fi, fl, ffi and ffl are codes 11-15 in OT1 (Computer Modern) and 27-31 in T1 (the
EC and cm-super fonts), all control characters. PDFium's text has "\\x0cnd" for "find" and
"e\\x0bect" for "effect", which cleaning turned into line breaks or dropped ("e\\nect").

A code of either range standing where a ligature stands (between two lower-case letters, or
before one at a word's start, or after one at a word's end) is read as that ligature when
every such code on the page is of one encoding's range. A page with codes of both is left as
it is: in OT1, 27-31 are the letters ø, œ, Æ, Œ and Ø; in T1, 11-15 are accents and quotation
marks. Code 13 is a carriage return, which PDFium also writes before the newline ending a
line ("\\r\\n"): only one not followed by a newline is a glyph.
"""

from __future__ import annotations

import re

_OT1 = {"\x0b": "ff", "\x0c": "fi", "\r": "fl", "\x0e": "ffi", "\x0f": "ffl"}
_T1 = {"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl"}
_CODES = re.compile("[\x0b\x0c\x0e\x0f\x1b-\x1f]|\r(?!\n)")


def _lower(character: str) -> bool:
    return character.isalpha() and character.islower()


def _where_a_ligature_stands(text: str, at: int) -> bool:
    before = text[at - 1] if at > 0 else " "
    after = text[at + 1] if at + 1 < len(text) else " "
    if _lower(before):
        return _lower(after) or not after.isalnum()
    return _lower(after) and not before.isalnum()


def with_tex_ligatures(text: str) -> str:
    """text with the ligatures its control characters stand for, where they are TeX's (above)."""
    if _CODES.search(text) is None:
        return text
    found = [m.start() for m in _CODES.finditer(text) if _where_a_ligature_stands(text, m.start())]
    codes = {text[at] for at in found}
    if not codes:
        return text
    ligatures = _OT1 if codes <= _OT1.keys() else _T1 if codes <= _T1.keys() else None
    if ligatures is None:
        return text
    pieces, last = [], 0
    for at in found:
        pieces += [text[last:at], ligatures[text[at]]]
        last = at + 1
    pieces.append(text[last:])
    return "".join(pieces)
