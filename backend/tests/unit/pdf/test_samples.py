from __future__ import annotations

from app.pdf.samples import page_text
from tests.pdf_factories import cer


def test_cer() -> None:
    assert cer("hello world", "hello world") == 0
    assert cer("hello world", "hello  world\n") == 0  # whitespace runs do not count
    assert cer("abcd", "abed") == 0.25
    assert cer("abc", "") == 1.0
    assert cer("", "") == 0.0


def test_page_text_is_deterministic_prose() -> None:
    assert page_text(3, seed=7) == page_text(3, seed=7)
    assert page_text(3, seed=7) != page_text(4, seed=7)
    assert len(page_text(0, seed=1).split()) > 100
