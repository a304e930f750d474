"""Thai and Lao syllables as Chromium writes them, read once.

Chromium (Skia) writes a syllable it draws in several glyphs (a consonant, then the vowel and
tone marks above it) in a marked-content span whose ActualText is the syllable's text, and PDFium
gives that text again for each glyph drawn in the span: "ที่ตั้งตั้ อยู่ใยู่" for "ที่ตั้งอยู่", the
syllable again after the next letter, drawn back over the syllable. pdftotext reads it once.

A copy is two to four Thai or Lao characters that come again after at most four others (a search
of the text), whose first character starts left of where the character before it starts (it is
drawn back) and not left of where the original's first does, but for half that character's width
(over it, not before it); a space PDFium made after it, where the text jumps on again, goes with
it. A word whose syllable is written twice ("นานา") is drawn forwards, and kept. The page's text
is changed where its characters are PDFium's in PDFium's order (spaces and line breaks aside): on
a page read in another order, it is left as it was.

(PDFium also makes a space after such a span in Devanagari and the other Indic scripts, "भा रत"
for "भारत", with the same place and the same gap to the next letter as the space it makes for a
word gap after a span, so the two are not told apart here: that is left as PDFium gives it.)
"""

from __future__ import annotations

import re

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.engines._page_chars import char_codes, char_places

_THAI_LAO = "\u0e00-\u0eff"
# A syllable, at most four characters (a space PDFium made among them), then the syllable again;
# looked for at every place (a lookahead), as copies may interleave ("ไม่มีม่ กมี").
_AGAIN = re.compile(f"(?=([{_THAI_LAO}]{{2,4}})([{_THAI_LAO} ]{{0,4}}?)\\1)")
_OVER = 0.5  # of the original's first character's width: how far left of it a copy may start


def may_have_copies(text: str) -> bool:
    """Whether text has a Thai or Lao syllable given again (a search at C speed: most pages have
    none)."""
    return _AGAIN.search(text) is not None


def without_copies(textpage: pdfium.PdfTextPage, text: str) -> str:
    """text (the page's text, in PDFium's order) without the copies of a syllable drawn back over
    it (the module's doc); text itself when there are none, or when text is in another order."""
    places = char_places(char_codes(textpage), text)
    if places is None:
        return text
    index_at = {at: index for index, at in places.items()}  # text position: character index
    box = pdfium_c.FS_RECTF()
    dropped: set[int] = set()

    def span(at: int) -> tuple[float, float] | None:
        index = index_at.get(at)
        if index is None or not pdfium_c.FPDFText_GetLooseCharBox(textpage.raw, index, box):
            return None
        return float(box.left), float(box.right)

    for match in _AGAIN.finditer(text):
        length = len(match.group(1))
        first, copy = match.start(1), match.end(2)
        if dropped.intersection(range(first, first + length), range(copy, copy + length)):
            continue
        before = next((at for at in range(copy - 1, first, -1) if not text[at].isspace()), first)
        original, drawn, last = span(first), span(copy), span(before)
        if original is None or drawn is None or last is None:
            continue
        if original[0] - _OVER * (original[1] - original[0]) <= drawn[0] < last[0]:
            dropped.update(range(copy, copy + length))
            end = copy + length  # and the space PDFium made after it, where the text jumps on again
            if end < len(text) and text[end] == " " and _made_space(textpage, index_at[end - 1] + 1):
                dropped.add(end)
    if not dropped:
        return text
    return "".join(char for at, char in enumerate(text) if at not in dropped)


def _made_space(textpage: pdfium.PdfTextPage, index: int) -> bool:
    raw = textpage.raw
    return (
        index < pdfium_c.FPDFText_CountChars(raw)
        and pdfium_c.FPDFText_GetUnicode(raw, index) == 0x20
        and bool(pdfium_c.FPDFText_IsGenerated(raw, index))
    )
