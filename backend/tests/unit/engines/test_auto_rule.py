from __future__ import annotations

import pytest

from app.engines.auto import has_real_text


@pytest.mark.parametrize(
    "text",
    [
        "The committee met on a wet Tuesday morning.",
        "Invoice 2024-117\nTotal: 1,234.56 EUR",
        "東京都千代田区丸の内一丁目九番一号東京駅",  # letters of any script count
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
        "\ufffd" * 40,  # unmapped glyphs
        "\x01\x02\x03\x04" * 10,  # control characters
        ".,'~|;:. ,,'' ~~ |.; :,' .. ~| ., ~~ ''",  # a garbage OCR layer: marks, not words
        "Il ., ~' |; ., ~' |; ., ~' |; ., ~' |; .,",  # mostly marks with a few letters
    ],
)
def test_not_real_text(text: str) -> None:
    assert not has_real_text(text)
