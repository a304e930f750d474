"""Does a text layer read as text? The checks `auto` runs on every page's own text.

A page can carry a text layer that is not its text: a font with no usable Unicode mapping, a
content stream read back as characters, a scanner's OCR pass that produced noise, or a title
too short to stand for the page. `garbage_reason` names the first sign of garbage a text
shows, on PDFium's text before it is cleaned (engines/base.py removes control characters,
which are evidence here); `is_short` applies the minimum length.

Garbage. Each check is a share of the page's visible (non-whitespace) characters, so one
bullet from a symbol font or one unmapped ligature does not condemn a long page:

- ``unreadable``, over 5 %: control characters (but tab, newline and PDFium's hyphenation
  mark U+0002), U+FFFD, noncharacters and lone surrogates. A font without a Unicode mapping
  hands over its character codes, which in a subset font start at 1; a TeX font of the 1990s
  gives one control character per ligature, a few in a hundred.
- ``private_use``: U+E000-U+F8FF and planes 15-16, over 5 % in runs of two or more (words
  spelt in private-use code points) or over 20 % in all. A symbolic TrueType font without a
  ToUnicode map gives U+F0xx for every glyph, so its words are private-use runs; a Word
  bullet list or a row of check boxes has one symbol (U+F0B7, U+F0A8) per item, alone.
- ``symbols``, letters and digits under half: a garbage OCR layer over a scan is mostly marks
  (``.,'~|``), and so is a font whose codes come out as ASCII punctuation. Combining marks
  count as letters: they are a third of Devanagari, Thai, vowelled Arabic and Hebrew. What
  typesetting draws between words is not counted: leaders and rules (runs of one filler, a
  table of contents' dots, a form's underscores, a table's borders) and mathematical signs.
- ``operators``, over 20 %: PDF content-stream instructions, each an operator with exactly
  its operand count (``72 712 Td``, ``/F1 12 Tf``, ``(Hello) Tj``, ``0 0 1 rg``,
  ``1 0 0 1 0 0 cm``, ``10 10 200 50 re``): a content stream drawn or mapped as text. Units
  in prose ("5 m", "10 g") have one number where these operators take two or more.
- ``mojibake``, over 1 % and in at least 3 places: UTF-8 read as Latin-1 or Windows-1252 (an
  e acute as "Ã©", a right quotation mark as "â€™"), and another alphabet's 8-bit code page
  read as Latin-1 (Cyrillic in Windows-1251 comes out as runs of four or more Latin-1
  letters, which no language writes): a font whose map names the wrong code page. A place
  of the first kind is a whole UTF-8 character, a lead byte and as many continuation bytes
  as it asks for: Czech and Slovak write pairs that are not ("váš" is E1 9A, where E1 asks
  for two continuation bytes; "môže" is F4 9E).
- ``mixed_scripts``, letters of two scripts side by side inside a word, more than 2 times in
  100 visible characters and at least 3 times: a Latin word with a Cyrillic o in it, Arabic
  presentation forms between Latin letters. A font mapped by glyph number scatters its
  letters over whatever blocks the numbers land in (Latin, Greek, Cyrillic, Hebrew, Arabic),
  so its words hop between scripts; a language does not. Han, kana and Hangul sit beside
  anything (CJK text has no spaces, so Latin words are inside its runs), and Greek beside
  Latin is science (amyloid beta "A" + beta, "TNF" + alpha), so neither counts. TeX's
  Cyrillic fonts write the Serbian and Ukrainian letters that look like Latin ones (je,
  U+0458; i, U+0456; yi, U+0457) as those Latin letters, inside Cyrillic words: beside
  Cyrillic letters they count as Cyrillic. And the words that mix must be more than
  MAX_MIXED_WORD_SHARE of the words of two letters or more: a broken map mixes nearly every
  word, where a font that maps one letter of its alphabet wrong (a Persian keheh as a Greek
  capital) mixes the words that have that letter (a seventh of a page in a Persian manual),
  whose other words are right and which OCR in another language reads as nothing.

Short text. A page needs MIN_VISIBLE_CHARS (16) visible characters, each counted with the
weight of its script (SCRIPT_WEIGHTS). 16 Latin characters are about three words; fewer are
a page number, a stamp or a stray mark, which OCR reads again from the image anyway, so
nothing is lost by sending them to it. A character of another script carries more, and is
lost when OCR'd (the OCR language is English: a five-kana line came back as ``DI\\DAS``). Its
weight is about the Latin letters the same text takes (a Han character is a word or a
morpheme, about 3; a kana or a Hangul syllable about 2; an Arabic or Hebrew letter, short
vowels unwritten, about 1.3; an Indic, Thai, Greek or Cyrillic letter about 1), doubled
because it is never noise and OCR cannot get it back, and rounded up: Han 6, kana, Hangul
syllables and Ethiopic syllables 4, Arabic, Hebrew, Syriac and Thaana 3, the other
alphabets and abugidas 2. So three Han characters (18), a seven-letter Arabic word (21) and
a nine-letter Russian one (18) are a page's text; two Han characters (12), a five-letter
Hebrew word (15) and "Page 3" (5) are not.

Speed: this runs on every page of born-digital files of thousands of pages, so it is regular
expressions and string methods over the whole text, never a Python loop over its characters
(one over the Latin words of a page that has another script, which are few). A page of plain
ASCII, most of them, skips every check that needs other characters and costs what the old
letters-and-digits rule did (6 us for 600 characters); other pages about 40 us per 1,000
characters, a tenth to a fifth of what PDFium takes to extract them.
"""

from __future__ import annotations

import bisect
import functools
import re
import string
import unicodedata

MIN_VISIBLE_CHARS = 16
MAX_UNREADABLE_SHARE = 0.05
MAX_PRIVATE_USE_SHARE = 0.2
MAX_PRIVATE_USE_WORD_SHARE = 0.05
MAX_OPERATOR_SHARE = 0.2
MAX_MOJIBAKE_SHARE = 0.01  # of visible characters
MIN_MOJIBAKE_PLACES = 3
MAX_SCRIPT_CHANGE_SHARE = 0.02
MIN_SCRIPT_CHANGES = 3
MAX_MIXED_WORD_SHARE = 0.25  # of the words of two letters or more
MIN_ALNUM_SHARE = 0.5

# (first, last, weight) of code point ranges; every other character weighs 1.
SCRIPT_WEIGHTS: tuple[tuple[int, int, int], ...] = (
    (0x0370, 0x03FF, 2),  # Greek
    (0x0400, 0x052F, 2),  # Cyrillic
    (0x0530, 0x058F, 2),  # Armenian
    (0x0590, 0x05FF, 3),  # Hebrew
    (0x0600, 0x06FF, 3),  # Arabic
    (0x0700, 0x074F, 3),  # Syriac
    (0x0750, 0x077F, 3),  # Arabic supplement
    (0x0780, 0x07BF, 3),  # Thaana
    (0x08A0, 0x08FF, 3),  # Arabic extended-A
    (0x0900, 0x0DFF, 2),  # Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil, ... Sinhala
    (0x0E00, 0x0EFF, 2),  # Thai, Lao
    (0x0F00, 0x0FFF, 2),  # Tibetan
    (0x1000, 0x109F, 2),  # Myanmar
    (0x10A0, 0x10FF, 2),  # Georgian
    (0x1100, 0x11FF, 2),  # Hangul jamo
    (0x1200, 0x139F, 4),  # Ethiopic: a syllable each
    (0x1780, 0x17FF, 2),  # Khmer
    (0x1F00, 0x1FFF, 2),  # Greek extended
    (0x2E80, 0x2FDF, 6),  # CJK and Kangxi radicals
    (0x3005, 0x3007, 6),  # the iteration mark, shime, the ideographic zero
    (0x3040, 0x30FF, 4),  # hiragana, katakana
    (0x3130, 0x318F, 2),  # Hangul compatibility jamo
    (0x31F0, 0x31FF, 4),  # katakana phonetic extensions
    (0x3400, 0x4DBF, 6),  # Han, extension A
    (0x4E00, 0x9FFF, 6),  # Han
    (0xAC00, 0xD7AF, 4),  # Hangul syllables
    (0xF900, 0xFAFF, 6),  # Han compatibility ideographs
    (0xFB1D, 0xFB4F, 3),  # Hebrew presentation forms
    (0xFB50, 0xFDFF, 3),  # Arabic presentation forms A
    (0xFE70, 0xFEFF, 3),  # Arabic presentation forms B
    (0xFF66, 0xFF9F, 4),  # halfwidth katakana
    (0x20000, 0x3134F, 6),  # Han, extensions B to G
)
_WEIGHT_STARTS = [first for first, _, _ in SCRIPT_WEIGHTS]


def char_weight(char: str) -> int:
    """What one character counts toward MIN_VISIBLE_CHARS."""
    code = ord(char)
    at = bisect.bisect_right(_WEIGHT_STARTS, code) - 1
    if at >= 0 and code <= SCRIPT_WEIGHTS[at][1]:
        return SCRIPT_WEIGHTS[at][2]
    return 1


def is_short(visible: str) -> bool:
    """Under MIN_VISIBLE_CHARS weighted characters (visible: the text without whitespace)."""
    if len(visible) >= MIN_VISIBLE_CHARS:
        return False  # every weight is at least 1
    return sum(char_weight(c) for c in visible) < MIN_VISIBLE_CHARS  # under 16 characters: cheap


# Scripts whose letters must not share a word, and the ranges that hold them (letters and
# combining marks only: their punctuation and digits are left out where the table is built).
# A few of these blocks hold several scripts of one family; splitting them finer would catch
# nothing a real font produces.
_SCRIPTS: dict[str, tuple[tuple[int, int], ...]] = {
    # Greek letters in Latin words are science (amyloid beta, TNF alpha), not a broken font
    "Latin": (
        (0x0370, 0x03FF),
        (0x1F00, 0x1FFF),
        (0x0041, 0x005A),
        (0x0061, 0x007A),
        (0x00C0, 0x024F),
        (0x0250, 0x02AF),
        (0x1D00, 0x1DBF),
        (0x1E00, 0x1EFF),
        (0x2C60, 0x2C7F),
        (0xA720, 0xA7FF),
        (0xAB30, 0xAB6F),
    ),
    "Cyrillic": ((0x0400, 0x052F), (0x1C80, 0x1C8F), (0x2DE0, 0x2DFF), (0xA640, 0xA69F)),
    "Armenian": ((0x0531, 0x058F), (0xFB13, 0xFB17)),
    "Hebrew": ((0x0590, 0x05FF), (0xFB1D, 0xFB4F)),
    "Arabic": ((0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFC)),
    "Syriac": ((0x0700, 0x074F),),
    "Thaana": ((0x0780, 0x07BF),),
    "NKo": ((0x07C0, 0x07FF),),
    **{f"Indic-{block:04X}": ((block, block + 0x7F),) for block in range(0x0900, 0x0E00, 0x80)},
    "Thai": ((0x0E00, 0x0E7F),),
    "Lao": ((0x0E80, 0x0EFF),),
    "Tibetan": ((0x0F00, 0x0FFF),),
    "Myanmar": ((0x1000, 0x109F),),
    "Georgian": ((0x10A0, 0x10FF), (0x1C90, 0x1CBF)),
    "Ethiopic": ((0x1200, 0x139F),),
    "Cherokee": ((0x13A0, 0x13FF),),
    "Khmer": ((0x1780, 0x17FF),),
    "Mongolian": ((0x1800, 0x18AF),),
}


def _is_letter(char: str) -> bool:
    return unicodedata.category(char)[0] in "LM"


def _char_class(codes: list[int]) -> str:
    """A regex character class body for the code points (ranges merged)."""
    parts: list[str] = []
    codes = sorted(codes)
    start = previous = codes[0]
    for code in [*codes[1:], -1]:
        if code == previous + 1:
            previous = code
            continue
        parts.append(re.escape(chr(start)) + ("-" + re.escape(chr(previous)) if previous > start else ""))
        start = previous = code
    return "".join(parts)


def _script_letters() -> dict[str, list[int]]:
    """Each script's letters and combining marks, from the ranges above (the marks of
    U+0300-U+036F, shared by Latin, Greek and Cyrillic, belong to none)."""
    letters: dict[str, list[int]] = {}
    for name, ranges in _SCRIPTS.items():
        letters[name] = [
            code
            for first, last in ranges
            for code in range(first, last + 1)
            if not 0x0300 <= code <= 0x036F and _is_letter(chr(code))
        ]
    return letters


def _letters_but(*names: str) -> str:
    """A character class body of the letters of every script but these."""
    return _char_class([code for name, codes in _LETTERS.items() if name not in names for code in codes])


_LETTERS = _script_letters()
_LATIN = _char_class(_LETTERS["Latin"])
# A run of Latin letters, with the combining marks (U+0300-U+036F) among and before them.
_LATIN_WORD = re.compile(f"[\u0300-\u036f]*[{_LATIN}][{_LATIN}\u0300-\u036f]*")
_NON_LATIN_LETTER = re.compile(f"[{_letters_but('Latin')}]")
_SCRIPT_AT = sorted((first, last, name) for name, ranges in _SCRIPTS.items() for first, last in ranges)
# For pages with letters of two scripts besides Latin (rare): every letter turned into one
# ASCII letter per script, marks of U+0300-U+036F dropped so they do not split a word.
_SCRIPT_TAGS: dict[int, int | None] = {
    code: ord(tag)
    for tag, codes in zip(string.ascii_letters, _LETTERS.values(), strict=False)
    for code in codes
}
_SCRIPT_TAGS.update(dict.fromkeys(range(0x0300, 0x0370)))
_SCRIPT_CHANGE = re.compile(r"([A-Za-z])(?=[A-Za-z])(?!\1)")  # adjacent letters of two scripts
_TWO_LETTERS = re.compile(r"[A-Za-z][^A-Za-z]*[A-Za-z]")  # a tagged word of two letters or more
# The Latin letters TeX's Cyrillic fonts (T2A, X2) give for the Serbian and Ukrainian letters
# that look like them (je, i, yi), and the marks that may sit on them: a run of Latin letters of
# nothing else, on a page of Latin and Cyrillic, is Cyrillic letters (one of them stands in).
_CYRILLIC_LOOKALIKES = frozenset("ijIJ\u00ef\u00cf" + "".join(map(chr, range(0x0300, 0x0370))))
_CYRILLIC_STAND_IN = "\u0456"


def _script_at(code: int) -> str:
    at = bisect.bisect_right(_SCRIPT_AT, (code, 0x110000, "")) - 1
    return _SCRIPT_AT[at][2]


@functools.cache
def _other_script(name: str) -> re.Pattern[str]:
    """A letter of any script but Latin and this one."""
    return re.compile(f"[{_letters_but('Latin', name)}]")


@functools.cache
def _letters_of(name: str) -> frozenset[str]:
    return frozenset(map(chr, _LETTERS[name]))


# Combining marks (Mn, Mc, Me) of the scripts above: letters for the letters-and-digits share.
_MARKS = _char_class(
    [code for code in range(0x0300, 0x1DC0) if unicodedata.category(chr(code)).startswith("M")]
    + [code for code in range(0xFB1D, 0xFE70) if unicodedata.category(chr(code)).startswith("M")]
)
_NOT_ALNUM = re.compile(f"[^\\w{_MARKS}]|_")  # in str patterns \w is str.isalnum() plus "_"
_ASCII_ALNUM = str.maketrans("", "", string.ascii_letters + string.digits)
_ASCII_DIGITS = str.maketrans("", "", string.digits)
# Three or more of one filler in a row (whitespace already gone, so ". . ." is "..."): dots,
# middle dots, ellipses, bullets, underscores, hyphens and dashes, equals signs, tildes,
# asterisks, box-drawing lines; with the + or | a table's border puts at its ends.
_FILLER_RUN = re.compile("[+|]?([._\\-=~*\u00b7\u2022\u2026\u2010-\u2015\u2500-\u257f])\\1{2,}[+|]?")
# Mathematical signs no ASCII character stands for; where a page has them, the ASCII ones
# beside them (relations, brackets, bars) are mathematics too.
_MATH = re.compile("[\u00b1\u00d7\u00f7\u2190-\u21ff\u2200-\u22ff\u27c0-\u27ef\u2980-\u2aff]")
_ASCII_MATH = re.compile("[-+<>=|/^:;,.()\\[\\]{}]")

# Tab and newline are text, and U+0002 is PDFium's mark in a hyphenated word; carriage returns
# are newlines by the time a page's text gets here. U+FFFE is a glyph a broken ToUnicode map
# gives (PDFium's own mark is U+0002 by now: app.engines._page_chars).
_UNREADABLE = re.compile(
    "[\x00\x01\x03-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufff0-\ufffb\ufffd-\uffff]"
)
_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")
_PRIVATE_USE_WORD = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]{2,}")

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)"
# Operators by their operand count; the prose units a number stands before ("5 m", "10 g")
# take one number, which no operator here does.
_OPERANDS = {
    "Td": 2, "TD": 2, "m": 2, "l": 2,
    "rg": 3, "RG": 3,
    "re": 4, "k": 4, "K": 4, "v": 4, "y": 4,
    "cm": 6, "Tm": 6, "c": 6,
}  # fmt: skip
_INSTRUCTION = re.compile(
    rf"(?<![\w.])((?:{_NUMBER}\s+){{2,6}})(Td|TD|Tm|cm|re|rg|RG|[mlcvykK])(?![\w*'\"])"
    r"|/[^\s/()<>\[\]{}%]+\s+(?:[-+]?[\d.]+\s+)?(?:Tf|Do|gs|cs|CS|BDC|BMC)(?![\w*])"
    r"|\((?:[^()\\]|\\.){0,200}\)\s*(?:Tj|'|\")(?![\w*])"
    r"|\[[^\[\]]{0,400}\]\s*TJ(?![\w*])"
)
_TEXT_OPERATOR = re.compile(r"T[dDmfjJ](?![\w*])")  # starts with a literal: a fast scan
_OPERAND = re.compile(_NUMBER)
# With no text operator, instructions are numbers and an operator: over MAX_OPERATOR_SHARE of a
# page's characters they make more than half that share of digits.
_MIN_DIGIT_SHARE_FOR_OPERATORS = MAX_OPERATOR_SHARE / 2

# What UTF-8 continuation bytes (0x80-0xBF) become when read as Windows-1252 or Latin-1, less
# the quotation marks and the no-break space, which follow a capital letter in real text (a
# French capital E acute before a closing guillemet, a German U umlaut before a closing quote).
_CONTINUATION = (
    "\u0080-\u009f\u00a1-\u00aa\u00ac-\u00ba\u00bc-\u00bf"
    "\u20ac\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u0152\u017d"
    "\u2022\u2013\u2014\u02dc\u2122\u0161\u0153\u017e\u0178"
)
_MOJIBAKE = re.compile(
    # a UTF-8 lead byte read as Latin-1 and as many continuation bytes as it asks for: one
    # after Â-ß (C2-DF), two after à-ï (E0-EF), three after ð-ô (F0-F4)
    f"[\u00c2-\u00df][{_CONTINUATION}]|[\u00e0-\u00ef][{_CONTINUATION}]{{2}}|[\u00f0-\u00f4][{_CONTINUATION}]{{3}}"
    # four Latin-1 letters in a row: another alphabet's 8-bit code page
    "|[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff]{4,}"
)


def garbage_reason(text: str, visible: str | None = None) -> str | None:
    """Why text (a page's text layer as PDFium gives it) is not text, or None when it reads as
    text. visible, when the caller has it, is text without whitespace."""
    if visible is None:
        visible = "".join(text.split())
    total = len(visible)
    if not total:
        return None
    plain = text.isascii()  # no private use, no mojibake, one script: most pages, and fast
    if not visible.isprintable() or "\ufffd" in visible:  # U+FFFD is printable
        if len(_UNREADABLE.findall(visible)) > MAX_UNREADABLE_SHARE * total:
            return "unreadable"
        if not plain and _has_private_use(text, visible):
            return "private_use"
    not_alnum = len(visible.translate(_ASCII_ALNUM)) if plain else len(_NOT_ALNUM.findall(visible))
    if not_alnum > (1 - MIN_ALNUM_SHARE) * total and _mostly_symbols(visible):
        return "symbols"
    if _has_operators(text, visible, plain):
        return "operators"
    if not plain:
        if _is_mojibake(text, total):
            return "mojibake"
        if _mixes_scripts(text, total):
            return "mixed_scripts"
    return None


def _mostly_symbols(visible: str) -> bool:
    """Letters and digits under half once what typesetting draws between words is left out:
    leaders and rules (a run of three or more of one filler: a table of contents' dots, spaced
    or not, a form's blank to fill in, a table's borders) and, on a page with mathematical signs
    that have no ASCII form (U+2200 on, arrows: a garbage layer does not give them), those and
    the ASCII signs among them."""
    kept = _FILLER_RUN.sub("", visible)
    if _MATH.search(kept):
        kept = _ASCII_MATH.sub("", _MATH.sub("", kept))
    if not kept:
        return False  # nothing but leaders and signs: too little to judge, not garbage
    not_alnum = len(kept.translate(_ASCII_ALNUM)) if kept.isascii() else len(_NOT_ALNUM.findall(kept))
    return not_alnum > (1 - MIN_ALNUM_SHARE) * len(kept)


def _has_private_use(text: str, visible: str) -> bool:
    total = len(visible)
    if len(_PRIVATE_USE.findall(visible)) > MAX_PRIVATE_USE_SHARE * total:
        return True
    return sum(map(len, _PRIVATE_USE_WORD.findall(text))) > MAX_PRIVATE_USE_WORD_SHARE * total


def _has_operators(text: str, visible: str, plain: bool) -> bool:
    total = len(visible)
    if _TEXT_OPERATOR.search(text) is None:
        if plain:
            digits = total - len(visible.translate(_ASCII_DIGITS))
        else:
            digits = sum(map(visible.count, "0123456789"))
        if digits < _MIN_DIGIT_SHARE_FOR_OPERATORS * total:
            return False
    found = 0
    for match in _INSTRUCTION.finditer(text):
        operands, operator = match.group(1, 2)
        if operator is not None and len(_OPERAND.findall(operands)) != _OPERANDS[operator]:
            continue
        found += len("".join(match.group().split()))
    return found > MAX_OPERATOR_SHARE * total


def _is_mojibake(text: str, total: int) -> bool:
    places = _MOJIBAKE.findall(text)
    return len(places) >= MIN_MOJIBAKE_PLACES and sum(map(len, places)) > MAX_MOJIBAKE_SHARE * total


def _mixes_scripts(text: str, total: int) -> bool:
    """Letters of two scripts side by side more than MAX_SCRIPT_CHANGE_SHARE of the time, in
    more than MAX_MIXED_WORD_SHARE of the words."""
    first = _NON_LATIN_LETTER.search(text)
    if first is None:
        return False  # Latin (and CJK, which mixes with anything) alone
    script = _script_at(ord(first.group()))
    stand_ins: list[tuple[int, int]] = []  # Latin runs that are Cyrillic letters (_CYRILLIC_LOOKALIKES)
    if _other_script(script).search(text, first.end()) is None:  # Latin and one other script
        own = _letters_of(script)
        end = len(text)
        changes = 0
        for latin in _LATIN_WORD.finditer(text):  # Latin words are few on such a page
            start, stop = latin.span()
            if script == "Cyrillic" and _CYRILLIC_LOOKALIKES.issuperset(latin.group()):
                stand_ins.append((start, stop))
                continue
            changes += (start > 0 and text[start - 1] in own) + (stop < end and text[stop] in own)
    else:
        changes = len(_SCRIPT_CHANGE.findall(text.translate(_SCRIPT_TAGS)))
    if changes < MIN_SCRIPT_CHANGES or changes <= MAX_SCRIPT_CHANGE_SHARE * total:
        return False
    if stand_ins:  # rare: a Serbian or Ukrainian page whose words mix scripts besides
        chars = list(text)
        for start, stop in stand_ins:
            chars[start:stop] = _CYRILLIC_STAND_IN * (stop - start)
        text = "".join(chars)
    words = [word for word in text.translate(_SCRIPT_TAGS).split() if _TWO_LETTERS.search(word)]
    mixed = sum(1 for word in words if _SCRIPT_CHANGE.search(word))
    return mixed > MAX_MIXED_WORD_SHARE * len(words)
