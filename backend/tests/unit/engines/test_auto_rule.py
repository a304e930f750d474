from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engines.auto import (
    CJK_CHAR_WEIGHT,
    MIN_ALNUM_SHARE,
    MIN_PRINTABLE_SHARE,
    MIN_VISIBLE_CHARS,
    has_real_text,
)


@pytest.mark.parametrize(
    "text",
    [
        "The committee met on a wet Tuesday morning.",
        "Invoice 2024-117\nTotal: 1,234.56 EUR",
        "東京都千代田区丸の内一丁目九番一号東京駅",  # letters of any script count
        "日本語",  # three CJK characters are as much text as a 16-letter word
        "あいうえお",
        "한국어 문서",
    ],
)
def test_real_text(text: str) -> None:
    assert has_real_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\n  ",
        "Page 3",  # too short to be a page's text
        "日本",  # two CJK characters: still short
        "第3頁",
        "Заголовок",  # a short title in an alphabet other than Latin: short all the same
        "\ufffd" * 40,  # unmapped glyphs
        "\x01\x02\x03\x04" * 10,  # control characters
        ".,'~|;:. ,,'' ~~ |.; :,' .. ~| ., ~~ ''",  # a garbage OCR layer: marks, not words
        "Il ., ~' |; ., ~' |; ., ~' |; ., ~' |; .,",  # mostly marks with a few letters
        "a" * 8 + "_" * 9,  # underscores are word characters, not letters
    ],
)
def test_not_real_text(text: str) -> None:
    assert not has_real_text(text)


def _rule_per_character(text: str) -> bool:
    """The rule as the module docstring states it, one character at a time."""
    visible = [c for c in text if not c.isspace()]
    weight = sum(CJK_CHAR_WEIGHT if _is_cjk(c) else 1 for c in visible)
    if weight < MIN_VISIBLE_CHARS:
        return False
    printable = sum(1 for c in visible if c.isprintable() and c != "\ufffd")
    alnum = sum(1 for c in visible if c.isalnum())
    return printable >= MIN_PRINTABLE_SHARE * len(visible) and alnum >= MIN_ALNUM_SHARE * len(visible)


def _is_cjk(c: str) -> bool:
    return any(
        low <= ord(c) <= high
        for low, high in (
            (0x3040, 0x30FF),
            (0x3400, 0x4DBF),
            (0x4E00, 0x9FFF),
            (0xF900, 0xFAFF),
            (0xAC00, 0xD7AF),
        )
    )


# Letters and digits of several scripts, the underscore (a word character that is not alnum),
# Unicode spaces, control characters and the replacement character: where a faster
# implementation could part from the stated rule.
_TRICKY = st.sampled_from(list("aZ9_., '~|\t\n\u00a0\u2028\u3000\ufffd\x07\x1fé٣Ⅻ東あ한豈-"))


@given(
    st.lists(_TRICKY, min_size=MIN_VISIBLE_CHARS, max_size=60).map("".join)  # near the thresholds
    | st.lists(_TRICKY, max_size=20).map("".join)
    | st.text(max_size=80)
)
@settings(max_examples=400)
def test_has_real_text_is_the_stated_rule(text: str) -> None:
    assert has_real_text(text) == _rule_per_character(text)
