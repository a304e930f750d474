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

Where the font drawing a code says what it is, that is read instead (code_decisions): a font
whose encoding names the glyph after its letters ("f_i", "f_f_l", as Linux Libertine's does at
27-30, in an order no TeX encoding has), or one of TeX's math symbol fonts (cmsy and the like),
whose 11-15 and 27-31 are symbols: 13 is the large circle LaTeX and Texinfo draw around a c
for the copyright sign, which was read as "flc".
"""

from __future__ import annotations

import ctypes
import re
import unicodedata
from collections.abc import Mapping

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_OT1 = {"\x0b": "ff", "\x0c": "fi", "\r": "fl", "\x0e": "ffi", "\x0f": "ffl"}
_T1 = {"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl"}
_CODES = re.compile("[\x0b\x0c\x0e\x0f\x1b-\x1f]|\r(?!\n)")
_CODE_POINTS = (11, 12, 13, 14, 15, 27, 28, 29, 30, 31)
# TeX's math symbol fonts (the OMS encoding and its kin): these codes are these symbols there.
_SYMBOL_FONT = re.compile(r"(?i)^(cmb?sy|lasy|[pt]xb?sys|msam|msbm|stmary|wasy)")
_OMS = dict(zip(_CODE_POINTS, "⊘⊙◯◦•⊃≪≫≺≻", strict=True))
_CIRCLE = "◯"
_FONT_NAME_BYTES = 128

Decision = tuple[str, str | None]  # a code as drawn, and what it reads as (None: not known)


def code_decisions(
    textpage: pdfium.PdfTextPage, glyph_names: Mapping[str, Mapping[int, str]]
) -> list[Decision]:
    """Each ligature-range code the page draws, in the text page's order, with what its font says
    it is: the letters of a glyph named as a ligature, a math symbol font's symbol, or None."""
    decisions: list[Decision] = []
    raw = textpage.raw
    name = ctypes.create_string_buffer(_FONT_NAME_BYTES)
    flags = ctypes.c_int()
    for index in range(pdfium_c.FPDFText_CountChars(raw)):
        code = pdfium_c.FPDFText_GetUnicode(raw, index)
        if code not in _OMS:
            continue
        size = pdfium_c.FPDFText_GetFontInfo(raw, index, name, _FONT_NAME_BYTES, ctypes.byref(flags))
        font = name.value.decode("latin-1").split("+", 1)[-1] if 0 < size <= _FONT_NAME_BYTES else ""
        if not font:
            continue  # made by PDFium (the carriage return before a line's newline)
        decisions.append((chr(code), _what_it_is(font, code, glyph_names)))
    return decisions


def _what_it_is(font: str, code: int, glyph_names: Mapping[str, Mapping[int, str]]) -> str | None:
    glyph = glyph_names.get(font, {}).get(code)
    if glyph is not None and (letters := ligature_letters(glyph)) is not None:
        return letters
    if _SYMBOL_FONT.match(font):
        return _OMS[code]
    return None


def ligature_letters(glyph: str) -> str | None:
    """The letters a glyph name says it joins ("f_f_i", "fi", "uniFB01"), or None."""
    base = glyph.split(".", 1)[0]
    parts = base.split("_")
    if len(parts) > 1 and all(len(part) == 1 and part.isalpha() for part in parts):
        return "".join(parts)
    if base in ("ff", "fi", "fl", "ffi", "ffl"):
        return base
    if re.fullmatch("uniFB0[0-6]", base):
        return unicodedata.normalize("NFKC", chr(int(base[3:], 16)))
    return None


def _lower(character: str) -> bool:
    return character.isalpha() and character.islower()


def _where_a_ligature_stands(text: str, at: int) -> bool:
    before = text[at - 1] if at > 0 else " "
    after = text[at + 1] if at + 1 < len(text) else " "
    if _lower(before):
        return _lower(after) or not after.isalnum()
    return _lower(after) and not before.isalnum()


_CONTROL_CODES = re.compile("[\x0b\x0c\x0e\x0f\x1b-\x1f]")


def has_codes(text: str) -> bool:
    """Whether text has a code that may stand for a ligature (the question before the costly ones):
    a character class and two counts, a third of _CODES's search on a page without one."""
    return _CONTROL_CODES.search(text) is not None or text.count("\r") != text.count("\r\n")


def with_tex_ligatures(text: str, decisions: list[Decision] | None = None) -> str:
    """text with the ligatures its control characters stand for, where they are TeX's (above);
    decisions (code_decisions of its page) settle the codes their fonts name."""
    if not has_codes(text):
        return text
    if decisions and any(letters is not None for _, letters in decisions):
        text = _decided(text, decisions)
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


def _decided(text: str, decisions: list[Decision]) -> str:
    """text with the codes decisions settle read: one for one when the text has as many codes as
    the page draws, in the same order, else a code whose every decision agrees."""
    at = [m.start() for m in _CODES.finditer(text)]
    settled: dict[int, str] = {}
    if len(at) == len(decisions) and all(text[i] == code for i, (code, _) in zip(at, decisions, strict=True)):
        settled = {i: letters for i, (_, letters) in zip(at, decisions, strict=True) if letters is not None}
    else:
        agreed: dict[str, set[str | None]] = {}
        for code, letters in decisions:
            agreed.setdefault(code, set()).add(letters)
        for i in at:
            said = agreed.get(text[i], {None})
            if len(said) == 1 and (letters := next(iter(said))) is not None:
                settled[i] = letters
    if not settled:
        return text
    pieces, last = [], 0
    for i in sorted(settled):
        pieces += [text[last:i], settled[i]]
        last = i + 1
    pieces.append(text[last:])
    out = "".join(pieces)
    if _CIRCLE in out and _CIRCLE not in text:  # TeX's copyright sign: a c in a large circle
        out = re.sub(f"{_CIRCLE} ?c|c ?{_CIRCLE}", "©", out)
    return out
