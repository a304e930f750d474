"""auto's rule 1, has_real_text: long enough for its script, and no sign of garbage."""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.engines import _text_quality as quality
from app.engines._text_quality import (
    MAX_MIXED_WORD_SHARE,
    MAX_PRIVATE_USE_SHARE,
    MAX_PRIVATE_USE_WORD_SHARE,
    MAX_SCRIPT_CHANGE_SHARE,
    MAX_UNREADABLE_SHARE,
    MIN_ALNUM_SHARE,
    MIN_SCRIPT_CHANGES,
    MIN_VISIBLE_CHARS,
    SCRIPT_WEIGHTS,
)
from app.engines.auto import has_real_text


@pytest.mark.parametrize(
    "text",
    [
        "The committee met on a wet Tuesday morning.",
        "Invoice 2024-117\nTotal: 1,234.56 EUR",
        "東京都千代田区丸の内一丁目九番一号東京駅",  # letters of any script count
        "日本語",  # three Han characters are a word, and OCR would lose them
        "あいうえお",
        "한국어 문서",
        "\u0417\u0430\u0433\u043e\u043b\u043e\u0432\u043e\u043a",  # a nine-letter Russian title
        "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",  # a seven-letter Arabic word
        "\u05d3\u05d5\u05d7 \u05e9\u05e0\u05ea\u05d9",  # a Hebrew title of two words
        "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",  # Devanagari, marks and all
        "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e01\u0e25\u0e32\u0e07",  # Thai, ten characters
        "\uf0b7\tFirst item of the list\n\uf0b7\tSecond item of the list",  # Word's symbol-font bullets
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
        "日本",  # two Han characters: still short
        "第3頁",
        "\u0421\u0442\u0440. 3",  # "page 3" in Russian
        "\u05e2\u05d1\u05e8\u05d9\u05ea",  # one five-letter Hebrew word
        "\ufffd" * 40,  # unmapped glyphs
        "\x01\x02\x03\x04" * 10,  # control characters
        ".,'~|;:. ,,'' ~~ |.; :,' .. ~| ., ~~ ''",  # a garbage OCR layer: marks, not words
        "Il ., ~' |; ., ~' |; ., ~' |; ., ~' |; .,",  # mostly marks with a few letters
        "a__b__c__d__e__f__g",  # underscores are word characters, not letters (three are a blank)
        "BT /F1 12 Tf 72 712 Td (Hello world) Tj ET",  # a content stream
        "\uf051\uf075\uf061\uf072\uf074\uf065\uf072\uf06c\uf079 \uf072\uf065\uf070\uf06f\uf072\uf074",
        # a heading spelt in private-use code points over otherwise good text: 7 % of the page
        "\uf051\uf075\uf061\uf072\uf074\uf065\uf072\uf06c\uf079\n" + "The committee met on Tuesday. " * 4,
    ],
)
def test_not_real_text(text: str) -> None:
    assert not has_real_text(text)


# The rule as the _text_quality docstring states it, one character (or pair) at a time. The
# pattern checks, content-stream operators, mojibake and the leaders and mathematics left out of
# the letters-and-digits share, are taken from the module: they have examples of their own in
# test_text_quality.py.


def _weight(c: str) -> int:
    return next((weight for first, last, weight in SCRIPT_WEIGHTS if first <= ord(c) <= last), 1)


def _unreadable(c: str) -> bool:
    code = ord(c)
    category = unicodedata.category(c)
    return (
        (category == "Cc" and c not in "\t\n\x02")
        or category == "Cs"
        or 0xFDD0 <= code <= 0xFDEF
        or 0xFFF0 <= code <= 0xFFFB
        or code in (0xFFFD, 0xFFFF)
    )


def _letter_or_digit(c: str) -> bool:
    code = ord(c)
    mark = unicodedata.category(c)[0] == "M" and (0x0300 <= code < 0x1DC0 or 0xFB1D <= code < 0xFE70)
    return c.isalnum() or mark


def _script(c: str) -> str | None:
    if unicodedata.category(c)[0] not in "LM" or 0x0300 <= ord(c) <= 0x036F:
        return None
    for name, ranges in quality._SCRIPTS.items():
        if any(first <= ord(c) <= last for first, last in ranges):
            return name
    return None


def _private_use_words(text: str) -> int:
    """Characters in runs of two or more private-use characters."""
    runs = "".join("x" if unicodedata.category(c) == "Co" else " " for c in text).split()
    return sum(len(run) for run in runs if len(run) >= 2)


def _scripts(text: str) -> list[str | None]:
    """Each character's script, the marks shared by several scripts left out. On a page of Latin
    and Cyrillic letters only, a run of Latin letters that are all i, j or i diaeresis (either
    case) is Cyrillic: TeX's stand-ins for the Serbian and Ukrainian letters that look so."""
    letters = [c for c in text if not 0x0300 <= ord(c) <= 0x036F]
    scripts = [_script(c) for c in letters]
    if {s for s in scripts if s not in (None, "Latin")} == {"Cyrillic"}:
        for is_latin, run in itertools.groupby(range(len(letters)), key=lambda at: scripts[at] == "Latin"):
            at = list(run)
            if is_latin and all(letters[i] in "ijIJ\u00ef\u00cf" for i in at):
                for i in at:
                    scripts[i] = "Cyrillic"
    return scripts


def _script_changes(scripts: list[str | None]) -> int:
    return sum(1 for a, b in itertools.pairwise(scripts) if a and b and a != b)


def _mixes_scripts(text: str, total: int) -> bool:
    """More than MIN_SCRIPT_CHANGES and MAX_SCRIPT_CHANGE_SHARE script changes, in more than
    MAX_MIXED_WORD_SHARE of the words of two letters or more."""
    scripts = _scripts(text)
    changes = _script_changes(scripts)
    if changes < MIN_SCRIPT_CHANGES or changes <= MAX_SCRIPT_CHANGE_SHARE * total:
        return False
    letters = [c for c in text if not 0x0300 <= ord(c) <= 0x036F]
    words: list[list[str | None]] = [[]]
    for char, script in zip(letters, scripts, strict=True):
        if char.isspace():
            words.append([])
        else:
            words[-1].append(script)
    lettered = [word for word in words if sum(script is not None for script in word) >= 2]
    mixed = sum(1 for word in lettered if _script_changes(word))
    return mixed > MAX_MIXED_WORD_SHARE * len(lettered)


def _rule_per_character(text: str) -> bool:
    visible = [c for c in text if not c.isspace()]
    total = len(visible)
    if sum(map(_weight, visible)) < MIN_VISIBLE_CHARS:
        return False
    joined = "".join(visible)
    return not (
        sum(map(_unreadable, visible)) > MAX_UNREADABLE_SHARE * total
        or sum(unicodedata.category(c) == "Co" for c in visible) > MAX_PRIVATE_USE_SHARE * total
        or _private_use_words(text) > MAX_PRIVATE_USE_WORD_SHARE * total
        # letters and digits under half, and still so without leaders and mathematics (a pattern
        # check of the module's, with examples of its own)
        or (
            sum(not _letter_or_digit(c) for c in visible) > (1 - MIN_ALNUM_SHARE) * total
            and quality._mostly_symbols(joined)
        )
        or quality._has_operators(text, joined, text.isascii())
        or (not text.isascii() and quality._is_mojibake(text, total))
        or _mixes_scripts(text, total)
    )


# Letters and digits of several scripts and their marks, the underscore (a word character that is
# not alnum), Unicode spaces, control characters, the replacement character, private use, Latin
# next to Cyrillic (and TeX's Latin i and j in Cyrillic words), Arabic and its presentation forms,
# Greek: where a faster implementation could part from the stated rule.
_TRICKY = st.sampled_from(
    list(
        "aZ9_., '~|\t\n\u00a0\u2028\u3000\ufffd\ufffc\x02\x07\x1fé٣Ⅻ東あ한豈-"
        "\ue000\uf0b7\U000f0001\u043e\u0431\u0628\ufe91\u05d0\u03b2\u0915\u093f\u0301\u0483\u00c3\u00a9ijJ\u00ef"
    )
)


@given(
    st.lists(_TRICKY, min_size=MIN_VISIBLE_CHARS, max_size=60).map("".join)  # near the thresholds
    | st.lists(_TRICKY, max_size=20).map("".join)
    | st.text(max_size=80)
)
@example("000___\u00a1\u0590\u3400")  # a form's blank beside too few letters: found by a run of this test
@example("aaaaa aa\ta\u043e\u0628a aa")  # three changes, in one word of four
@example(
    "\u043e\u0431i\u043e\u0431 \u043e\u0431j\u043e\u0431 i\u0301\u043e\u0431 \u043e\u0431 \u043e\u0431 "
)  # TeX's stand-ins
@settings(max_examples=600)
def test_has_real_text_is_the_stated_rule(text: str) -> None:
    assert has_real_text(text) == _rule_per_character(text)
