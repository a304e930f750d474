"""Page text is plain text: every engine's PageResult is cleaned the same way (engines/base.py)."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from app.engines._pages import _same_characters
from app.engines.base import PageResult, clean_page_text


def test_pdfium_hyphenation_marks_join_the_word() -> None:
    assert clean_page_text("difficult to com\x02pile it") == "difficult to compile it"
    assert clean_page_text("com\x02\r\npile") == "compile"
    assert clean_page_text("com\u00adpile") == "compile"  # a soft hyphen left in the text
    # a hyphen before a capital or a digit is a compound's or a code's: kept
    assert clean_page_text("the Anglo\x02\nSaxon see COVID\x0219 and RSASSA\x02PKCS1") == (
        "the Anglo-Saxon see COVID-19 and RSASSA-PKCS1"
    )
    assert clean_page_text("an x\x02ray, a line ending in one\x02") == "an xray, a line ending in one"


def test_a_drawn_noncharacter_u_fffe_is_not_a_hyphenation_mark() -> None:
    """U+FFFE is what a broken ToUnicode map gives a glyph (PDFium's own mark reaches here as
    U+0002, whichever of its paths read the page): it is not text, and it joins nothing."""
    assert clean_page_text("com\ufffe\npile") == "com\npile"
    assert clean_page_text("the Anglo\ufffe\nSaxon") == "the Anglo\nSaxon"
    assert clean_page_text("RSASSA\ufffePKCS1") == "RSASSAPKCS1"


def test_breaks_of_every_kind_are_newlines() -> None:
    assert clean_page_text("a\fb\vc\r\nd\re\u2028f\u2029g\x85h\x1ci") == "a\nb\nc\nd\ne\nf\ng\nh\ni"


def test_other_controls_go_and_text_stays() -> None:
    assert clean_page_text("a\x00b\x07c\x1bd\x7fe\tf") == "abcde\tf"
    text = "Größe 日本語 العربية café\tend\n"
    assert clean_page_text(text) == text


def test_byte_order_marks_and_direction_overrides_go_and_direction_marks_stay() -> None:
    """A string's byte order mark kept mid-text splits a word for search; an override shows a
    line reversed ("1234 eciovni" for "invoice 4321"), an isolate or embedding reorders what
    follows. The text is in reading order already: none of them is text."""
    assert clean_page_text("\ufeffinvoice \u202e4321\u202c paid\ufeff") == "invoice 4321 paid"
    assert clean_page_text("a\u202ab\u202bc\u202dd\u2066e\u2067f\u2068g\u2069h") == "abcdefgh"
    text = "\u05e9\u05dc\u05d5\u05dd\u200f 2024\u200e \u0627\u061c"  # RLM, LRM, ALM: writing's own
    assert clean_page_text(text) == text


def test_spaces_at_a_line_end_go_and_indentation_stays() -> None:
    """LibreOffice ends each justified line of its text layer with a space, which a reader does
    not see (pdftotext gives none); spaces that indent a line, or set columns apart, stay."""
    assert clean_page_text("justified line \nnext line  \t\n    indented  code\nlast ") == (
        "justified line\nnext line\n    indented  code\nlast"
    )
    assert clean_page_text("Größe \n日本語 \n") == "Größe\n日本語\n"


def test_letters_spelled_with_combining_marks_are_composed() -> None:
    """A text layer's "e" + U+0301 is the "é" a search types, and OCR gives; Hangul jamo
    compose to syllables. What has no composed form keeps its marks."""
    assert clean_page_text("cafe\u0301 Gro\u0308\u00dfe") == "café Größe"
    assert clean_page_text("\u1112\u1161\u11ab") == "한"
    assert clean_page_text("q\u0307\u0323") == "q\u0323\u0307"  # no composed form: marks in canonical order


def test_every_page_result_is_clean() -> None:
    page = PageResult(3, "one\ftwo\x02three", 1.0, "text-layer")
    assert page.text == "one\ntwothree"
    assert "\f".join([page.text, "next page"]).count("\f") == 1  # one form feed per page boundary


@given(st.text())
def test_clean_text_has_no_control_but_newline_and_tab(text: str) -> None:
    cleaned = clean_page_text(text)
    assert all(c in "\n\t" or unicodedata.category(c) != "Cc" for c in cleaned)
    assert "\f" not in cleaned
    assert "\r" not in cleaned
    assert clean_page_text(cleaned) == cleaned  # idempotent
    # no letter lost: compared decomposed (NFD), since the text is composed (NFC) and a few
    # characters are canonically another (a compatibility ideograph, the ohm sign)
    decomposed = unicodedata.normalize("NFD", text)
    kept = [c for c in decomposed if unicodedata.category(c)[0] in "LNPS" and c not in "\ufffe\uffff"]
    read = unicodedata.normalize("NFD", cleaned)
    # a hyphenation mark before a capital or a digit is a hyphen: the only character put in
    marks = text.count("\x02")
    assert [c for c in read if unicodedata.category(c)[0] in "LNPS" and c != "-"] == [
        c for c in kept if c != "-"
    ]
    assert kept.count("-") <= read.count("-") <= kept.count("-") + marks
    assert not any(  # no single space left between two CJK characters
        _cjk(a) and b == " " and _cjk(c) for a, b, c in zip(cleaned, cleaned[1:], cleaned[2:], strict=False)
    )


# CJK inter-character spaces: Han, kana, CJK punctuation and fullwidth forms (not Hangul).
def _cjk(c: str) -> bool:
    code = ord(c)
    return (
        0x2E80 <= code <= 0x2FDF
        or 0x3001 <= code <= 0x33FF
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0xFE30 <= code <= 0xFE4F
        or 0xFF01 <= code <= 0xFF9F
        or 0x20000 <= code <= 0x3134F
    ) and not 0x3130 <= code <= 0x318F  # Hangul compatibility jamo


def test_spaced_out_cjk_reads_as_written() -> None:
    """tesseract's jpn and chi_* models, and some text layers, space every character out."""
    assert clean_page_text("日 本 語 の 文 書 で す 。") == "日本語の文書です。"
    assert (
        clean_page_text("委 员 会 审 查 了 账 目 \uff0c 结 果 「 良 好 」")
        == "委员会审查了账目\uff0c结果「良好」"
    )
    assert clean_page_text("ｶ ﾀ ｶ ﾅ と \uff30\uff24\uff26") == "ｶﾀｶﾅと\uff30\uff24\uff26"  # fullwidth PDF


def test_spaces_that_mean_something_stay() -> None:
    assert clean_page_text("使 用 Python 编 程") == "使用 Python 编程"  # a Latin word keeps its spaces
    assert clean_page_text("第 3 頁") == "第 3 頁"  # so does a number
    assert clean_page_text("한국어 문서 입니다") == "한국어 문서 입니다"  # Korean spaces words
    assert clean_page_text("日本  東京") == "日本  東京"  # a gap of two spaces: columns
    assert clean_page_text("山田\u3000太郎") == "山田\u3000太郎"  # the ideographic space is meant
    assert clean_page_text("日本\n語") == "日本\n語"  # a line break is not a space


# CJK of several kinds (a supplementary-plane Han, fullwidth Latin, halfwidth kana), Hangul,
# Latin, a digit, Greek.
_TOKENS = st.sampled_from(
    [*"日の。「𠀋", "本語", "\uff30\uff24\uff26", "ｶﾅ", "한국", "어", "PDF", "3", "é", "\u03b1"]
)


@given(st.lists(st.tuples(_TOKENS, st.sampled_from([" ", "  ", "\u3000", "\n", ""])), max_size=30))
def test_a_single_space_goes_only_between_two_cjk_characters(parts: list[tuple[str, str]]) -> None:
    text = "".join(token + gap for token, gap in parts)
    expected = "".join(
        token
        + (
            ""
            if gap == " " and index + 1 < len(parts) and _cjk(token[-1]) and _cjk(parts[index + 1][0][0])
            else gap
        )
        for index, (token, gap) in enumerate(parts)
    )
    expected = re.sub("[ \t]+(?=\n|\\Z)", "", expected)  # and spaces at a line's end go
    assert clean_page_text(text) == expected


def test_a_text_rebuilt_in_another_order_must_have_the_same_characters() -> None:
    """A reordering pass (columns, vertical writing, right to left) is taken only when it reads
    each character once: real pages had a part read twice (a parallel edition's line numbers,
    a Korean figure's caption)."""
    stored = "Left one right one\r\nLeft two right two\r\n"
    assert _same_characters("Left one\r\nLeft two\r\nright one\r\nright two", stored)
    assert not _same_characters("Left one\r\nLeft two Left two\r\nright one\r\nright two", stored)
    assert not _same_characters("Left one\r\nright one", stored)
    long = "word " * 500
    assert _same_characters(long + "x", long)  # one character in 2,500: within the slack
