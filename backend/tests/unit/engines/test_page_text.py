"""Page text is plain text: every engine's PageResult is cleaned the same way (engines/base.py)."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from app.engines.base import PageResult, clean_page_text


def test_pdfium_hyphenation_marks_join_the_word() -> None:
    assert clean_page_text("difficult to com\x02pile it") == "difficult to compile it"
    assert clean_page_text("com\x02\r\npile") == "compile"
    assert clean_page_text("com\ufffe\npile") == "compile"  # the mark of older PDFium builds
    assert clean_page_text("com\u00adpile") == "compile"  # a soft hyphen left in the text


def test_breaks_of_every_kind_are_newlines() -> None:
    assert clean_page_text("a\fb\vc\r\nd\re\u2028f\u2029g\x85h\x1ci") == "a\nb\nc\nd\ne\nf\ng\nh\ni"


def test_other_controls_go_and_text_stays() -> None:
    assert clean_page_text("a\x00b\x07c\x1bd\x7fe\tf") == "abcde\tf"
    text = "Größe 日本語 العربية café\tend\n"
    assert clean_page_text(text) == text


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
    kept = [c for c in text if unicodedata.category(c)[0] in "LNPS" and c not in "\ufffe\uffff"]
    assert [c for c in cleaned if unicodedata.category(c)[0] in "LNPS"] == kept  # no letter lost
