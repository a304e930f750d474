"""What makes a text layer garbage (_text_quality), on text like real pages give."""

from __future__ import annotations

import pytest

from app.engines._text_quality import garbage_reason, is_short
from app.pdf.samples import page_text
from tests.corpus.text_layers import CZECH_SLOVAK, SERBIAN_TEX, UKRAINIAN_TEX

PROSE = page_text(0, seed=3, sentences=6)


# A Persian line whose font maps its keheh to a Greek capital (U+0388), as a XeTeX manual's did:
# one word in eight mixes scripts, the others are right.
PERSIAN_ONE_LETTER_OFF = (
    "\u0631\u0627\u0647\u0646\u0645\u0627\u06cc \u0627\u0633\u062a\u0641\u0627\u062f\u0647 \u0627\u0632 "
    "\u0633\u0628\u0388 \u0647\u0627\u06cc \u0641\u0627\u0631\u0633\u06cc \u0628\u0631\u0627\u06cc "
    "\u0646\u0648\u0634\u062a\u0646 \u0645\u0642\u0627\u0644\u0647"
)


def _page(line: str, times: int = 5) -> str:
    return "\n".join([line] * times)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("English", PROSE),
        (
            "a PDF manual quoting a content stream",
            PROSE + "\nFor example, BT /F1 12 Tf 72 712 Td (Hi) Tj ET.",
        ),
        (
            "units and numbers in prose",
            _page("The rod is 5 m long, weighs 10 g and holds 3 l; 12 34 apples."),
        ),
        (
            "a table of figures",
            "\n".join(f"{i} {i * 3.5:.2f} {i * 12} {i * 7.25:.2f} Total" for i in range(40)),
        ),
        ("company names", _page("ACME LTD and BETA LTD. signed the TD agreement on Monday.")),
        ("a table of contents", _page("2.1 Scope " + ". " * 30 + "14")),
        ("a form to fill in", _page("Name: " + "_" * 50)),
        ("a rule of box drawing", "Totals\n" + "\u2500" * 60 + "\n" + PROSE[:40]),
        ("mathematics", _page("\u2200x \u2208 A: f(x) \u2264 g(x) \u21d2 |f| < |g|")),
        (
            "Word bullets from a symbol font",
            "\n".join(f"\uf0b7\tItem {i} of the list of things" for i in range(9)),
        ),
        ("TeX ligatures without a mapping", PROSE.replace("fi", "\x0c").replace("fl", "\x0e")),
        (
            "French",
            _page(
                "\u00abCAF\u00c9\u00bb Le comit\u00e9 s\u2019est r\u00e9uni \u00e0 Gen\u00e8ve, \u00e9t\u00e9."
            ),
        ),
        (
            "French spacing",
            _page("\u00ab\u00a0SOCI\u00c9T\u00c9\u00a0\u00bb\u00a0: la soci\u00e9t\u00e9 a pay\u00e9."),
        ),
        ("German", _page("\u201eGR\u00dcSSE\u201c aus M\u00fcnchen: die Gr\u00f6\u00dfe der Stra\u00dfe.")),
        (
            "Russian with Latin words",
            _page(
                "\u041e\u041e\u041e \u00ab\u0420\u043e\u043c\u0430\u0448\u043a\u0430\u00bb "
                "\u043f\u0440\u0438\u0441\u043b\u0430\u043b\u0430 PDF \u0438 ZIP \u0432 2024 "
                "\u0433\u043e\u0434\u0443."
            ),
        ),
        (
            "Arabic with a Latin word",
            _page(
                "\u0627\u062c\u062a\u0645\u0639\u062a \u0627\u0644\u0644\u062c\u0646\u0629 "
                "\u0644\u0645\u0631\u0627\u062c\u0639\u0629 \u0645\u0644\u0641 PDF \u0641\u064a 2024."
            ),
        ),
        (
            "Arabic presentation forms",
            _page("\ufe94\ufef4\ufe91\ufeae\ufecc\ufedf\ufe8d \ufe94\ufed0\ufee0\ufedf\ufe8d"),
        ),
        (
            "vowelled Arabic",
            _page(
                "\u0628\u0650\u0633\u0652\u0645\u0650 \u0627\u0644\u0644\u0651\u064e\u0647\u0650 "
                "\u0627\u0644\u0631\u0651\u064e\u062d\u0652\u0645\u064e\u0646\u0650"
            ),
        ),
        (
            "Persian with zero-width non-joiners",
            _page(
                "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u06a9\u062a\u0627\u0628\u200c\u0647\u0627"
            ),
        ),
        ("Hebrew", _page("\u05d4\u05d5\u05d5\u05e2\u05d3\u05d4 \u05d4\u05ea\u05db\u05e0\u05e1\u05d4 2024.")),
        (
            "Hindi",
            _page(
                "\u0938\u092e\u093f\u0924\u093f \u0928\u0947 \u0916\u093e\u0924\u094b\u0902 "
                "\u0915\u0940 \u0938\u092e\u0940\u0915\u094d\u0937\u093e \u0915\u0940\u0964"
            ),
        ),
        (
            "Thai",
            _page(
                "\u0e04\u0e13\u0e30\u0e01\u0e23\u0e23\u0e21\u0e01\u0e32\u0e23\u0e1b\u0e23\u0e30\u0e0a\u0e38\u0e21"
            ),
        ),
        ("Japanese with Latin inside", _page("委員会は港の会計を検討した。PDFファイルを使う。")),
        ("Chinese with Latin inside", _page("委员会审查港口账目。使用Python编程。")),
        ("Korean", _page("위원회는 항구 회계를 검토했습니다. PDF파일")),
        (
            "Greek",
            _page(
                "\u0397 \u03b5\u03c0\u03b9\u03c4\u03c1\u03bf\u03c0\u03ae \u03c3\u03c5\u03bd\u03b5\u03b4\u03c1\u03af\u03b1\u03c3\u03b5."
            ),
        ),
        ("Greek letters in science", _page("A\u03b242 oligomers and TNF\u03b1 rose while IFN\u03b3 fell.")),
        ("Czech and Slovak", "\n".join(CZECH_SLOVAK)),
        ("Serbian with TeX's Latin j", "\n".join(SERBIAN_TEX)),
        ("Ukrainian with TeX's Latin i", "\n".join(UKRAINIAN_TEX)),
        ("Persian, one letter mapped to Greek", _page(PERSIAN_ONE_LETTER_OFF)),
        (
            "mathematics",
            _page(
                "Let x \u2208 \u211d and f(x) = \u2211 a\u1d62x\u2071 \u2264 \u221e for all \u03b1, \u03b2."
            ),
        ),
    ],
)
def test_real_pages_are_not_garbage(name: str, text: str) -> None:
    assert garbage_reason(text) is None, name


@pytest.mark.parametrize(
    ("reason", "text"),
    [
        ("operators", _page("BT /F1 12 Tf 72 712 Td (Hello) Tj ET")),
        ("operators", _page("q 1 0 0 1 0 0 cm 0 0 1 rg 10 10 200 50 re f Q")),
        ("operators", _page("[(Quar)20(terly)] TJ 0 -14 Td (report) Tj /Im1 Do")),
        (
            "private_use",
            _page(
                "\uf051\uf075\uf061\uf072\uf074\uf065\uf072\uf06c\uf079 \uf072\uf065\uf070\uf06f\uf072\uf074"
            ),
        ),
        ("private_use", PROSE + "\n" + "\U000f0041\U000f0042 " * 60),
        ("unreadable", _page("\x03\x11\x12\x13 \x14\x15\x03\x16 \x11\x12")),
        ("unreadable", _page("Caf\ufffd de la gare, men\ufffd du jour")),
        ("unreadable", _page("Caf\ufffe de la gare, men\ufffe du jour")),  # a broken ToUnicode map's
        (
            "mojibake",
            _page(
                "Le comit\u00c3\u00a9 s\u00e2\u20ac\u2122est r\u00c3\u00a9uni \u00c3\u00a0 Gen\u00c3\u00a8ve."
            ),
        ),
        (
            "mojibake",
            _page(
                "\u00cf\u00f0\u00e8\u00e2\u00e5\u00f2 \u00ec\u00e8\u00f0, \u00fd\u00f2\u00ee \u00f2\u00e5\u00f1\u00f2"
            ),
        ),
        (
            "mixed_scripts",  # Latin words with Cyrillic letters that look the same
            _page("T\u04bbe \u0441o\u043c\u043cittee \u043cet o\u043f a wet Tuesday \u043corning."),
        ),
        (
            "mixed_scripts",
            _page("\ufe8dl\ufeccr\ufe91y\ufe94 \ufedfg\ufe8d \ufecca\ufeaeb"),
        ),  # Arabic forms in Latin
        (
            "mixed_scripts",  # Russian words with Latin letters that look the same (a, o, e, c, p)
            _page(
                "\u041a\u043eo\u043f\u0435pa\u0442\u0438\u0432 pa\u0431o\u0442a\u0435\u0442 c \u0443\u0442pa \u0434o \u0432e\u0447epa."
            ),
        ),
        (
            "mixed_scripts",  # glyph numbers landing in Latin, Cyrillic, Armenian, Hebrew, Arabic blocks
            _page(
                "\u0141\u0102\u0410\u0392\u0531\u0586\u0608 \u0543\u05d0\u05d1\u046c\u0194\u0250 \u0416\u05e9\u062d\u03fe"
            ),
        ),
        ("symbols", _page(".,'~|;:. ,,'' ~~ |.; :,' .. ~| ., ~~ ''")),
        # runs of marks, as a garbage layer over a scanned form has them: leaders are not all it has
        ("symbols", _page("|||| ;;;; '''' ~~~ ... ,,,, |_|_| a")),
        ("symbols", _page("::: ,,, ''' |||| ;; a1")),
    ],
)
def test_garbage_says_why(reason: str, text: str) -> None:
    assert garbage_reason(text) == reason


def test_a_few_bad_characters_do_not_condemn_a_page() -> None:
    assert garbage_reason(PROSE + "\ufffd\x03") is None
    assert garbage_reason(PROSE + " \uf0fc yes") is None
    assert garbage_reason(PROSE + " T\u043ee") is None  # one Cyrillic o in one word
    assert garbage_reason(PROSE + " caf\u00c3\u00a9") is None  # one mojibake word


def test_mojibake_is_whole_utf8_characters() -> None:
    """A lead byte with fewer continuation bytes than it asks for is a language's letters (Czech
    "váš" is E1 9A); with all of them it is a character UTF-8 wrote, read as Windows-1252."""
    assert (
        garbage_reason(
            _page("V\u00e1\u0161 hl\u00e1\u0161en\u00ed, m\u00f4\u017eete, v\u00e1\u0161 n\u00e1vrh.")
        )
        is None
    )
    assert (
        garbage_reason(_page("Le r\u00c3\u00a9sum\u00c3\u00a9 de l\u00e2\u20ac\u2122ann\u00c3\u00a9e."))
        == "mojibake"
    )


def test_the_text_is_judged_before_cleaning() -> None:
    """Control characters are the evidence; cleaning (engines/base.py) would remove them."""
    layer = "\x03\x11\x12 \x13\x14\x15 " * 20 + "ok"
    assert garbage_reason(layer) == "unreadable"


@pytest.mark.parametrize(
    ("text", "short"),
    [
        ("日本語", False),
        ("日本", True),
        ("\u0627\u0644\u0639\u0631\u0628\u064a\u0629", False),  # 7 Arabic letters: 21
        ("\u062a\u0642\u0631\u064a\u0631", True),  # 5: 15
        ("\u0417\u0430\u0433\u043e\u043b\u043e\u0432\u043e\u043a", False),  # 9 Cyrillic: 18
        ("\u1230\u120b\u121d", True),  # 3 Ethiopic syllables: 12
        ("\u1230\u120b\u121d \u1290\u12cd", False),  # 5: 20
        ("Page 3 of 12", True),
        ("Page 3 of 12, appendix", False),
    ],
)
def test_short_is_weighted_by_script(text: str, short: bool) -> None:
    assert is_short("".join(text.split())) is short


def test_pdfiums_hyphenation_marks_are_text_and_a_drawn_u_fffe_is_not() -> None:
    """PDFium's mark is U+0002 on every path by now (app.engines._page_chars); a page of drawn
    U+FFFE (a broken ToUnicode map's) is not text."""
    assert garbage_reason("a word broken at the line's end, hyphen\x02ated here\n" * 20) is None
    assert garbage_reason("men\ufffe du jour, caf\ufffe cr\ufffeme\n" * 20) == "unreadable"
    assert garbage_reason("men\x02 du jour, caf\x02 cr\x02me\n" * 20) is None
