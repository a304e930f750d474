"""TeX's ligatures from a font without a Unicode mapping (app.engines._tex_ligatures), read from
real PDFs: a Type 3 font whose glyphs have names PDFium cannot map, as dvips and pdfTeX make
from METAFONT's bitmap fonts, so PDFium gives each glyph's code as its text."""

from __future__ import annotations

import signal
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name

from app.engines._tex_ligatures import ligature_letters, with_tex_ligatures
from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine
from app.engines.text_pass import read_text_pages

# In OT1 (Computer Modern) ff, fi, fl, ffi, ffl are codes 11-15; in T1 (EC, cm-super) 27-31.
OT1 = {"ff": b"\x0b", "fi": b"\x0c", "fl": b"\x0d", "ffi": b"\x0e", "ffl": b"\x0f"}
T1 = {"ff": b"\x1b", "fi": b"\x1c", "fl": b"\x1d", "ffi": b"\x1e", "ffl": b"\x1f"}
LINES = (
    "We find that the first effect of the office flows",
    "baffled the staff, who filed it in the official shuffle.",
    "Difficult fields fly off, and the fluffy waffles fill the floor.",
)


def _set_in(line: str, encoding: dict[str, bytes]) -> bytes:
    """The line's codes as TeX sets it in a font of that encoding: each ligature one glyph."""
    out, at = b"", 0
    while at < len(line):
        for ligature in ("ffi", "ffl", "ff", "fi", "fl"):
            if line.startswith(ligature, at):
                out, at = out + encoding[ligature], at + len(ligature)
                break
        else:
            out, at = out + line[at].encode("ascii"), at + 1
    return out


def type3_pdf(path: Path, lines: list[bytes], glyphs: int = 128) -> Path:
    """A page of lines in a Type 3 font of `glyphs` box glyphs named /a0, /a1, ... (no ToUnicode)."""
    pdf = pikepdf.new()
    procs = Dictionary()
    for code in range(glyphs):
        procs[Name(f"/a{code}")] = pdf.make_stream(b"500 0 0 0 420 640 d1 40 0 380 640 re f")
    font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type3,
            FontBBox=[0, 0, 500, 700],
            FontMatrix=[0.001, 0, 0, 0.001, 0, 0],
            CharProcs=procs,
            Encoding=Dictionary(
                Type=Name.Encoding, Differences=Array([0, *(Name(f"/a{c}") for c in range(glyphs))])
            ),
            FirstChar=0,
            LastChar=glyphs - 1,
            Widths=[500] * glyphs,
            Resources=Dictionary(),
        )
    )
    page = pdf.add_blank_page(page_size=(612, 792))
    page.obj.Resources = Dictionary(Font=Dictionary(T3=font))
    shown = b"".join(b"<" + codes.hex().encode() + b"> Tj T*\n" for codes in lines)
    page.obj.Contents = pdf.make_stream(b"BT /T3 9 Tf 11 TL 40 740 Td\n" + shown + b"ET\n")
    pdf.save(path)
    return path


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
@pytest.mark.parametrize("encoding", [OT1, T1], ids=["OT1", "T1"])
def test_ligatures_set_as_control_codes_read_as_their_letters(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine, encoding: dict[str, bytes]
) -> None:
    pdf = type3_pdf(tmp_path / "tex.pdf", [_set_in(line, encoding) for line in LINES])
    (page,) = engine.recognize(pdf.read_bytes(), 1)
    assert page.source == "text-layer"
    assert page.text.split() == " ".join(LINES).split()


def test_a_page_with_codes_of_both_encodings_is_left_as_it_was(tmp_path: Path) -> None:
    """27-31 are letters in OT1 (ø, œ, Æ, Œ, Ø) and 11-15 marks in T1: which is which is unknown."""
    lines = [_set_in(LINES[0], OT1), b"s\x1cen er bl\x1b"]  # OT1's "søen er blœ"
    pdf = type3_pdf(tmp_path / "both.pdf", lines)
    (page,) = TextLayerEngine().recognize(pdf.read_bytes(), 1)
    words = page.text.split()
    assert not {"find", "sfien", "blff"} & set(words)
    assert not any(c in page.text for c in "\x0b\x0c\x0e\x0f\x1b\x1c\x1d\x1e\x1f\r")


def test_codes_where_no_ligature_stands_are_not_read_as_ligatures() -> None:
    """Next to a capital or a digit, or alone between spaces, a code is not a ligature; nor is
    the carriage return PDFium writes before a line's newline."""
    for text in ("OF\x0bICE", "2\x0c3", "a \x0c b", "stuff\r\nnext", "A\x0bb"):
        assert with_tex_ligatures(text) == text
    assert with_tex_ligatures("sta\x0b\r\nnext e\rect") == "staff\r\nnext eflect"
    assert with_tex_ligatures("(\x0crst) \x0cnd, o\x0b.") == "(first) find, off."


def _libertine_pdf(path: Path) -> Path:
    """Linux Libertine's encoding as pdfTeX writes it: /f_i /f_f_i /f_f /f_l at 27-30, which no
    TeX encoding has in that order (T1's 27-31 are ff fi fl ffi ffl); PDFium gives their codes."""
    pdf = pikepdf.new()
    names = Array([27, Name("/f_i"), Name("/f_f_i"), Name("/f_f"), Name("/f_l")])
    font = Dictionary(
        Type=Name.Font,
        Subtype=Name.Type1,
        BaseFont=Name("/HISCDX+LinLibertineT"),
        Encoding=Dictionary(Type=Name.Encoding, BaseEncoding=Name.WinAnsiEncoding, Differences=names),
    )
    page = pdf.add_blank_page(page_size=(612, 792))
    page.obj.Resources = Dictionary(Font=Dictionary(F1=font))
    shown = b"(speci\x1bc e\x1dect a\x1dected \x1blled di\x1derent \x1eammable a\x1cx identi\x1ber) Tj"
    page.obj.Contents = pdf.make_stream(b"BT /F1 11 Tf 72 700 Td " + shown + b" ET")
    pdf.save(path)
    return path


LIBERTINE_WORDS = [
    "specific",
    "effect",
    "affected",
    "filled",
    "different",
    "flammable",
    "affix",
    "identifier",
]


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_ligatures_a_font_names_are_read_by_their_names(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    """They were read in T1's order: "speciffc", "eflect", "fflled", "ffiammable"."""
    pdf = _libertine_pdf(tmp_path / "libertine.pdf")
    (page,) = engine.recognize(pdf.read_bytes(), 1)
    assert page.text.split() == LIBERTINE_WORDS


def test_the_planning_pass_reads_them_by_their_names_too(tmp_path: Path) -> None:
    pdf = _libertine_pdf(tmp_path / "libertine.pdf")
    (page,), _ = read_text_pages("auto", str(pdf), 1, 0, 1)
    assert page is not None
    assert page.text.split() == LIBERTINE_WORDS
    # run here, not in an OCR process: its page clock must not be left to end this one later
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_a_math_symbol_font_s_codes_are_its_symbols(tmp_path: Path) -> None:
    """TeX's copyright sign is a c set in cmsy's large circle, code 13, which OT1 text fonts use for
    fl: on a page with both, each is read by its font ("Copyright flc 2001" before)."""
    pdf = type3_pdf(tmp_path / "copyright.pdf", [])
    with pikepdf.open(pdf, allow_overwriting_input=True) as opened:
        text_font = opened.pages[0].Resources.Font.T3
        symbols = opened.make_indirect(Dictionary(text_font))
        text_font.BaseFont, symbols.BaseFont = Name("/CMR10"), Name("/CMSY10")
        opened.pages[0].Resources.Font.SY = symbols
        opened.pages[0].obj.Contents = opened.make_stream(
            b"BT /T3 10 Tf 72 680 Td (Copyright ) Tj /SY 10 Tf <0d> Tj "
            b"/T3 10 Tf (c 2001, the \x0dow of \x0cve wa\x0bles) Tj ET"
        )
        opened.save(pdf)
    (page,) = TextLayerEngine().recognize(pdf.read_bytes(), 1)
    assert page.text.split() == ["Copyright", "©", "2001,", "the", "flow", "of", "five", "waffles"]


@pytest.mark.parametrize(
    ("glyph", "letters"),
    [
        ("f_i", "fi"),
        ("f_f_l", "ffl"),
        ("f_t.alt", "ft"),
        ("ffi", "ffi"),
        ("uniFB02", "fl"),
        ("a27", None),
        ("circlecopyrt", None),
        ("T_h", "Th"),
        ("f_1", None),
    ],
)
def test_a_glyph_name_says_which_letters_it_joins(glyph: str, letters: str | None) -> None:
    assert ligature_letters(glyph) == letters
