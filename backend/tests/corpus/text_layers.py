"""Text layers, annotations and forms: pages whose text is where real files put it.

Short layers in scripts OCR cannot read (a Japanese title, an Arabic one drawn as real
producers draw it: shaped presentation forms in visual order), a layer that spaces out every
CJK character, FreeText notes and filled forms (with and without appearance streams), and
three garbage layers over pages that show the right text: a content stream as an invisible
OCR layer over a scan, a font whose ToUnicode map points into the private-use area (as a
symbolic TrueType font's does), and one whose map gives UTF-8 read as Windows-1252. The
expected text of a garbage page is what the page shows, which OCR has to read.

reportlab draws the pages (its AcroForm fields come with appearance streams); pypdf adds what
reportlab does not write (FreeText appearance streams, ToUnicode maps, NeedAppearances).
"""

from __future__ import annotations

import io
from pathlib import Path

from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    BooleanObject,
    DictionaryObject,
    FloatObject,
    NameObject,
    NumberObject,
    StreamObject,
    TextStringObject,
)
from reportlab.lib.pagesizes import letter
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from app.pdf.samples import FONT_CANDIDATES, page_text, render_scan, wrapped
from tests.corpus import Fixture
from tests.corpus.right_to_left import hebrew_lines

JAPANESE_FONT = "HeiseiMin-W3"  # one of reportlab's CID fonts: no font file needed
UNICODE_FONT = "DejaVuSans"  # fonts-dejavu-core: Arabic presentation forms included

# "The Arabic language", as a shaping producer draws it: presentation forms, right to left
# written left to right (visual order). PDFium hands it back in reading order, as base letters.
ARABIC_TITLE = "\u0627\u0644\u0644\u063a\u0629 \u0627\u0644\u0639\u0631\u0628\u064a\u0629"
_ARABIC_TITLE_DRAWN = "\ufe94\ufef4\ufe91\ufeae\ufecc\ufedf\ufe8d \ufe94\ufed0\ufee0\ufedf\ufe8d"
JAPANESE_TITLE = "報告書"  # "report": three characters, a whole title

# A filled form: (label, field name, value) of text fields, then the choices and check boxes.
FORM_TITLE = "Application for a library card"
FORM_TEXT_FIELDS = (
    ("Name:", "name", "Margaret Hamilton"),
    ("Address:", "address", "12 Harbour Road, Boston"),
    ("Email:", "email", "margaret@example.org"),
)
FORM_MEMBERSHIP = ("Membership:", "membership", ("Adult", "Student", "Senior"), "Student")
FORM_BRANCH = ("Branch:", "branch", ("Central", "Harbour", "Hill"), "Harbour")
FORM_CHECKBOXES = (("Newsletter:", "newsletter", True), ("Large print:", "large_print", False))
FORM_RADIO = ("Card:", "card", ("Paper", "Digital"), "Digital")

FREETEXT_BODY = "Clause 4 sets the rent for the second year of the lease."
FREETEXT_NOTES = ("Reviewed by counsel on 3 May", "Ask the landlord about the deposit")

_FRENCH = (
    "Le comit\u00e9 s\u2019est r\u00e9uni \u00e0 Gen\u00e8ve pour \u00e9tudier les comptes du port.",
    "La r\u00e9union a dur\u00e9 jusqu\u2019\u00e0 midi, et le tr\u00e9sorier a pr\u00e9sent\u00e9 le bilan.",
    "Les d\u00e9penses de l\u2019ann\u00e9e pass\u00e9e ont \u00e9t\u00e9 approuv\u00e9es sans r\u00e9serve.",
    "Le proc\u00e8s-verbal sera envoy\u00e9 \u00e0 chaque membre avant la f\u00eate de No\u00ebl.",
)

# Languages whose right text a garbage check once took for a broken map: Czech and Slovak write
# letter pairs that are UTF-8 lead and continuation bytes in Windows-1252 ("váš", "môže"), and
# TeX's Cyrillic fonts write the Serbian je and the Ukrainian i as the Latin letters they look like.
CZECH_SLOVAK = (
    "V\u00e1\u0161 \u00fa\u010det je p\u0159ipraven a va\u0161e hl\u00e1\u0161en\u00ed o v\u00fd\u0161i dan\u00ed jsme p\u0159ijali.",
    "M\u016f\u017eete n\u00e1m napsat, a\u017e v\u00e1\u0161 l\u00e9ka\u0159 podep\u00ed\u0161e \u017e\u00e1dost.",
    "\u010c\u00ed\u0161n\u00edk p\u0159inesl v\u00edno a \u0159ekl, \u017ee je to na\u0161e nejlep\u0161\u00ed.",
    "M\u00f4\u017eete n\u00e1m posla\u0165 v\u00e1\u0161 n\u00e1vrh, ak v\u00e1\u0161 \u00fa\u010det m\u00f4\u017ee po\u010dka\u0165.",
)
SERBIAN_TEX = (
    "\u041f\u043e\u0434\u0440\u0448\u043a\u0430 \u0441\u0440\u043f\u0441\u043a\u043e\u043c j\u0435\u0437\u0438\u043a\u0443 \u0443 \u045b\u0438\u0440\u0438\u043b\u0438\u0447\u043d\u043e\u043c \u043f\u0438\u0441\u043c\u0443.",
    "\u041e\u0432\u0430j \u0434\u043e\u043a\u0443\u043c\u0435\u043d\u0442 \u043f\u043e\u043a\u0430\u0437\u0443j\u0435 \u043a\u0430\u043a\u043e \u0441\u0435 \u043f\u0438\u0448\u0435 \u043d\u0430 \u043d\u0430\u0448\u0435\u043c j\u0435\u0437\u0438\u043a\u0443.",
    "\u041a\u043ej\u0438 \u0441\u0443 \u043a\u043e\u0440\u0438\u0441\u043d\u0438\u0446\u0438 \u043e\u0432\u043e\u0433 \u043f\u0430\u043a\u0435\u0442\u0430 \u043a\u043ej\u0438 \u0441\u0435 \u043a\u043e\u0440\u0438\u0441\u0442\u0438 \u0443 \u0441\u0432\u0430\u043a\u043e\u043c \u0434\u043e\u043a\u0443\u043c\u0435\u043d\u0442\u0443.",
    "\u0418\u043d\u0441\u0442\u0430\u043b\u0430\u0446\u0438j\u0430 j\u0435 j\u0435\u0434\u043d\u043e\u0441\u0442\u0430\u0432\u043d\u0430 \u0438 \u043d\u0435 \u0437\u0430\u0445\u0442\u0435\u0432\u0430 \u043d\u0438\u0448\u0442\u0430 \u043f\u043e\u0441\u0435\u0431\u043d\u043e.",
)
UKRAINIAN_TEX = (
    "\u041e\u0441\u043e\u0431\u043b\u0438\u0432\u043e\u0441\u0442i \u0435\u0442i\u043e\u043b\u043e\u0433i\u0457 i \u043f\u0430\u0442\u043e\u0433\u0435\u043d\u0435\u0437\u0443 \u0445\u0432\u043e\u0440\u043e\u0431\u0438.",
    "\u041d\u0430\u0446i\u043e\u043d\u0430\u043b\u044c\u043d\u0438\u0439 \u0443\u043di\u0432\u0435\u0440\u0441\u0438\u0442\u0435\u0442 i\u043c\u0435\u043di \u0422\u0430\u0440\u0430\u0441\u0430 \u0428\u0435\u0432\u0447\u0435\u043d\u043a\u0430, \u041ai\u0457\u0432.",
    "\u0412\u0438\u0434\u0430\u0432\u043d\u0438\u0446\u0442\u0432\u043e \u043fi\u0434 \u0440\u0435\u0434\u0430\u043a\u0446i\u0454\u044e \u0412. \u041bi\u0441i\u0432\u0430, \u0432\u0438\u0434\u0430\u043d\u043d\u044f \u0434\u0440\u0443\u0433\u0435.",
    "\u0412i\u0441\u043d\u0438\u043a \u041a\u0438\u0457\u0432\u0441\u044c\u043a\u043e\u0433\u043e \u0443\u043di\u0432\u0435\u0440\u0441\u0438\u0442\u0435\u0442\u0443, \u0441\u0435\u0440i\u044f \u0431i\u043e\u043b\u043e\u0433i\u044f.",
)
LANGUAGE_PAGES = (
    ("czech-slovak", CZECH_SLOVAK, "Czech and Slovak: váš, môže"),
    ("serbian-tex", SERBIAN_TEX, "Serbian Cyrillic with a Latin j for je, as TeX writes it"),
    ("ukrainian-tex", UKRAINIAN_TEX, "Ukrainian with a Latin i, as TeX writes it"),
)


def build_all(directory: Path) -> list[Fixture]:
    """Every fixture of this family, written into directory."""
    return [
        short_japanese_title(directory),
        short_arabic_title(directory),
        hebrew_lines(directory),
        vertical_japanese(directory),
        spaced_out_japanese(directory),
        freetext_notes(directory),
        filled_form(directory, appearance_streams=True),
        filled_form(directory, appearance_streams=False),
        content_stream_layer(directory),
        private_use_layer(directory),
        mojibake_layer(directory),
        *typeset_marks(directory),
        *language_pages(directory),
    ]


# Pages whose marks between words outnumber the letters, and are text all the same: leaders,
# a form's blanks, a table's borders, mathematics. A garbage OCR layer is mostly marks too.
TOC_LINES = (
    "Table of Contents",
    *(
        f"{n} {title} {'.' * (60 - len(title))} {page}"
        for n, title, page in (
            (1, "Introduction", 3),
            (2, "System overview", 7),
            (3, "Data model", 12),
            (4, "Results", 19),
        )
    ),
    "Contents",
    *(f"{n}.{k} Section {n}.{k} {'. ' * 28}{n * 10 + k}" for n in (1, 2) for k in (1, 2, 3)),
)
BLANK_FORM_LINES = (
    "Change of address",
    *(f"{label}: {'_' * 44}" for label in ("Full name", "Old address", "New address", "Date", "Signature")),
)
BORDERED_TABLE_LINES = (
    "+------------+----------+--------+",
    "| Account    | Branch   | Amount |",
    "+------------+----------+--------+",
    "| 1042       | Harbour  | 180.00 |",
    "| 2210       | Central  | 75.50  |",
    "+------------+----------+--------+",
)
MATH_LINES = (
    "\u2200\u03b5>0 \u2203\u03b4>0 : |x\u2212a|<\u03b4 \u21d2 |f(x)\u2212f(a)|<\u03b5",
    "|a+b| \u2264 |a|+|b|, \u2200a,b \u2208 \u211d",
    "x \u2208 A \u2229 B \u21d4 x \u2208 A \u2227 x \u2208 B",
    "\u2211 i = n(n+1)/2, n \u2265 1",
)


def typeset_marks(directory: Path) -> list[Fixture]:
    pages = (
        ("toc", TOC_LINES, "dot leaders, solid and spaced"),
        ("blank-form", BLANK_FORM_LINES, "underscores to fill in"),
        ("bordered-table", BORDERED_TABLE_LINES, "a table drawn in ASCII"),
        ("math", MATH_LINES, "mathematical signs"),
    )
    return _unicode_pages(directory, pages)


def language_pages(directory: Path) -> list[Fixture]:
    return _unicode_pages(directory, LANGUAGE_PAGES)


def _unicode_pages(directory: Path, pages: tuple[tuple[str, tuple[str, ...], str], ...]) -> list[Fixture]:
    """A page for each (name, lines, note): the lines in DejaVu Sans at 10 pt."""
    fixtures = []
    for name, lines, note in pages:
        path = directory / f"{name}.pdf"
        pdf = _canvas(path)
        pdf.setFont(_unicode_font(), 10)
        for at, line in enumerate(lines):
            pdf.drawString(72, 720 - 16 * at, line)
        pdf.save()
        fixtures.append(Fixture(name, path, ("\n".join(lines),), note))
    return fixtures


def short_japanese_title(directory: Path) -> Fixture:
    path = directory / "short-japanese.pdf"
    pdf = _canvas(path)
    pdf.setFont(_japanese_font(), 24)
    pdf.drawString(72, 620, JAPANESE_TITLE)
    pdf.save()
    return Fixture("short-japanese", path, (JAPANESE_TITLE,), "a three-character title, all the page says")


def short_arabic_title(directory: Path) -> Fixture:
    path = directory / "short-arabic.pdf"
    pdf = _canvas(path)
    pdf.setFont(_unicode_font(), 24)
    pdf.drawRightString(540, 620, _ARABIC_TITLE_DRAWN)
    pdf.save()
    return Fixture("short-arabic", path, (ARABIC_TITLE,), "a two-word title, drawn in visual order")


VERTICAL_TITLE = "契約書の写し"
VERTICAL_COLUMNS = ("本合同由甲乙双方签订。", "この契約書は東京で締結されました。", "付款期限为三十天。")


def vertical_japanese(directory: Path) -> Fixture:
    """A title set across the page over columns set down it (a vertical CMap), read right to left."""
    path = directory / "vertical-japanese.pdf"
    pdf = _canvas(path)
    pdf.setFont(_japanese_font(), 18)
    pdf.drawString(300, 740, VERTICAL_TITLE)
    pdf.setFont(_japanese_font(vertical=True), 16)
    for number, column in enumerate(VERTICAL_COLUMNS):
        pdf.drawString(500 - 32 * number, 700, column)
    pdf.save()
    expected = "\n".join((VERTICAL_TITLE, *VERTICAL_COLUMNS))
    return Fixture("vertical-japanese", path, (expected,), "columns set down the page, right to left")


def spaced_out_japanese(directory: Path) -> Fixture:
    """Glyphs spaced out with real spaces between them, as some producers justify CJK lines;
    the Latin word keeps the space after it."""
    drawn = ("こ れ は 日 本 語 の 文 書 で す 。", "PDF フ ァ イ ル を 使 う 。")
    path = directory / "spaced-japanese.pdf"
    pdf = _canvas(path)
    pdf.setFont(_japanese_font(), 14)
    for row, line in enumerate(drawn):
        pdf.drawString(72, 700 - 24 * row, line)
    pdf.save()
    expected = "これは日本語の文書です。\nPDF ファイルを使う。"
    return Fixture("spaced-japanese", path, (expected,), "a space between every two CJK characters")


def freetext_notes(directory: Path) -> Fixture:
    """A page of text and two FreeText notes: one with its appearance stream, one without (the
    text is then only in /Contents, which viewers draw)."""
    path = directory / "freetext.pdf"
    pdf = _canvas(path)
    pdf.setFont("Helvetica", 12)
    pdf.drawString(72, 720, FREETEXT_BODY)
    pdf.save()
    writer = PdfWriter(clone_from=PdfReader(path))
    font = writer._add_object(_helvetica())
    annotations = ArrayObject()
    for row, note in enumerate(FREETEXT_NOTES):
        top = 600 - 80 * row
        annotation = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Annot"),
                NameObject("/Subtype"): NameObject("/FreeText"),
                NameObject("/Rect"): _rect(72, top - 30, 420, top),
                NameObject("/Contents"): TextStringObject(note),
                NameObject("/DA"): TextStringObject("/Helv 12 Tf 0 g"),
                NameObject("/F"): NumberObject(4),  # print
            }
        )
        if row == 0:
            appearance = StreamObject()
            appearance.set_data(f"BT /Helv 12 Tf 2 10 Td ({note}) Tj ET".encode("latin-1"))
            appearance.update(
                {
                    NameObject("/Type"): NameObject("/XObject"),
                    NameObject("/Subtype"): NameObject("/Form"),
                    NameObject("/BBox"): _rect(0, 0, 348, 30),
                    NameObject("/Resources"): DictionaryObject(
                        {NameObject("/Font"): DictionaryObject({NameObject("/Helv"): font})}
                    ),
                }
            )
            annotation[NameObject("/AP")] = DictionaryObject(
                {NameObject("/N"): writer._add_object(appearance)}
            )
        annotations.append(writer._add_object(annotation))
    writer.pages[0][NameObject("/Annots")] = annotations
    with path.open("wb") as handle:
        writer.write(handle)
    return Fixture(
        "freetext", path, ("\n".join([FREETEXT_BODY, *FREETEXT_NOTES]),), "one note without an appearance"
    )


def filled_form(directory: Path, *, appearance_streams: bool) -> Fixture:
    """Three text fields, a combo box, a list box, two check boxes (one ticked) and a pair of
    radio buttons, filled in.
    Without appearance streams, the form says NeedAppearances, as many form fillers leave it:
    a viewer draws the values from /V."""
    name = "form" if appearance_streams else "form-no-appearances"
    path = directory / f"{name}.pdf"
    pdf = _canvas(path)
    pdf.setFont("Helvetica", 14)
    pdf.drawString(72, 730, FORM_TITLE)
    pdf.setFont("Helvetica", 11)
    form = pdf.acroForm
    rows = iter(range(680, 0, -40))
    for label, field, value in FORM_TEXT_FIELDS:
        y = next(rows)
        pdf.drawString(72, y + 5, label)
        form.textfield(name=field, value=value, x=170, y=y, width=300, height=20, borderWidth=1)
    for (label, field, options, value), kind in ((FORM_MEMBERSHIP, "combo"), (FORM_BRANCH, "")):
        y = next(rows)
        pdf.drawString(72, y + 5, label)
        make = form.choice if kind == "combo" else form.listbox
        make(name=field, value=value, options=list(options), x=170, y=y - 10, width=150, height=30)
    for label, field, checked in FORM_CHECKBOXES:
        y = next(rows)
        pdf.drawString(72, y + 5, label)
        form.checkbox(name=field, checked=checked, x=170, y=y, size=16)
    label, field, options, chosen = FORM_RADIO
    y = next(rows)
    pdf.drawString(72, y + 5, label)
    for column, option in enumerate(options):
        form.radio(name=field, value=option, selected=option == chosen, x=170 + 80 * column, y=y, size=16)
    pdf.save()
    if not appearance_streams:
        writer = PdfWriter(clone_from=PdfReader(path))
        for annotation in writer.pages[0].get("/Annots", ()):
            annotation.get_object().pop("/AP", None)
        writer.root_object["/AcroForm"][NameObject("/NeedAppearances")] = BooleanObject(True)
        with path.open("wb") as handle:
            writer.write(handle)
    labels = [label for label, _, _ in FORM_TEXT_FIELDS] + [FORM_MEMBERSHIP[0], FORM_BRANCH[0]]
    labels += [label for label, _, _ in FORM_CHECKBOXES] + [FORM_RADIO[0]]
    values = [value for _, _, value in FORM_TEXT_FIELDS] + [FORM_MEMBERSHIP[3], FORM_BRANCH[3], "Yes", chosen]
    note = "appearance streams" if appearance_streams else "no appearance streams, NeedAppearances"
    return Fixture(name, path, ("\n".join([FORM_TITLE, *labels, *values]),), note)


def content_stream_layer(directory: Path) -> Fixture:
    """A scan whose invisible text layer is a content stream (a fuzzed or broken producer wrote
    its operators where the OCR text belonged)."""
    text = page_text(0, seed=21)
    stream = [
        "BT /F1 12 Tf 72 712 Td (The committee met) Tj ET",
        "q 1 0 0 1 0 0 cm 0 0 1 rg 72 600 200 50 re f Q",
        "BT /F2 9.5 Tf 1 0 0 1 72 580 Tm [(Ledg)20(ers)] TJ 0 -12 Td (were kept) Tj ET",
        "0.5 w 72 560 m 540 560 l S /Im0 Do",
    ]
    path = directory / "content-stream-layer.pdf"
    _scan_with_invisible_layer(path, text, stream * 3)
    return Fixture("content-stream-layer", path, (wrapped(text),), "operators as the OCR layer of a scan")


def private_use_layer(directory: Path) -> Fixture:
    """Prose drawn in a font whose ToUnicode map sends every code to U+F000 + code, as a
    symbolic TrueType font without one does: the page reads well, its text layer is noise."""
    lines = wrapped(page_text(0, seed=22, sentences=5)).split("\n")
    path = directory / "private-use-layer.pdf"
    _helvetica_page(path, lines, {code: chr(0xF000 + code) for code in range(0x20, 0x100)})
    return Fixture("private-use-layer", path, ("\n".join(lines),), "every glyph mapped into U+F0xx")


def mojibake_layer(directory: Path) -> Fixture:
    """French drawn in Helvetica whose ToUnicode map gives each accented letter and quote as
    its UTF-8 bytes read as Windows-1252 (an e acute as two characters, A tilde and copyright)."""
    lines = list(_FRENCH)
    mapping = {code: chr(code) for code in range(0x20, 0x7F)}
    for char in {c for line in lines for c in line if not c.isascii()}:
        mapping[char.encode("cp1252")[0]] = char.encode("utf-8").decode("cp1252")
    path = directory / "mojibake-layer.pdf"
    _helvetica_page(path, lines, mapping)
    return Fixture("mojibake-layer", path, ("\n".join(lines),), "UTF-8 read as Windows-1252 in the map")


def _canvas(path: Path) -> canvas.Canvas:
    # invariant=1: no creation date or random id, so a fixture's bytes are the same every time
    return canvas.Canvas(str(path), pagesize=letter, pageCompression=1, invariant=1)


def _japanese_font(*, vertical: bool = False) -> str:
    name = f"{JAPANESE_FONT}-V" if vertical else JAPANESE_FONT
    if name not in pdfmetrics.getRegisteredFontNames():
        font = UnicodeCIDFont(JAPANESE_FONT, isVertical=vertical)
        font.fontName = font.name = name  # reportlab names both by their face
        pdfmetrics.registerFont(font)
    return name


def _unicode_font() -> str:
    if UNICODE_FONT not in pdfmetrics.getRegisteredFontNames():
        path = next(p for p in FONT_CANDIDATES if p.endswith("DejaVuSans.ttf"))
        pdfmetrics.registerFont(TTFont(UNICODE_FONT, path))
    return UNICODE_FONT


def _scan_with_invisible_layer(path: Path, text: str, layer_lines: list[str]) -> None:
    pdf = _canvas(path)
    pdf.drawImage(ImageReader(render_scan(text)), 0, 0, width=letter[0], height=letter[1])
    layer = pdf.beginText(72, 700)
    layer.setFont("Helvetica", 10)
    layer.setTextRenderMode(3)  # invisible, as OCR layers are
    for line in layer_lines:
        layer.textLine(line)
    pdf.drawText(layer)
    pdf.save()


def _helvetica_page(path: Path, lines: list[str], to_unicode: dict[int, str]) -> None:
    """Lines in Helvetica (WinAnsi codes), the font given to_unicode as its ToUnicode map."""
    pdf = _canvas(path)
    pdf.setFont("Helvetica", 12)
    for row, line in enumerate(lines):
        pdf.drawString(72, 700 - 18 * row, line)
    pdf.save()
    writer = PdfWriter(clone_from=PdfReader(path))
    cmap = StreamObject()
    cmap.set_data(_to_unicode_cmap(to_unicode))
    reference = writer._add_object(cmap)
    for font in writer.pages[0]["/Resources"]["/Font"].values():
        if font.get_object()["/BaseFont"] == "/Helvetica":
            font.get_object()[NameObject("/ToUnicode")] = reference
    buffer = io.BytesIO()
    writer.write(buffer)
    path.write_bytes(buffer.getvalue())


def _to_unicode_cmap(mapping: dict[int, str]) -> bytes:
    entries = [
        f"<{code:02X}> <{text.encode('utf-16-be').hex().upper()}>" for code, text in sorted(mapping.items())
    ]
    blocks = [entries[i : i + 100] for i in range(0, len(entries), 100)]  # at most 100 a block
    body = "\n".join(f"{len(block)} beginbfchar\n" + "\n".join(block) + "\nendbfchar" for block in blocks)
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        f"1 begincodespacerange\n<00> <FF>\nendcodespacerange\n{body}\n"
        "endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    ).encode("ascii")


def _helvetica() -> DictionaryObject:
    return DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )


def _rect(left: float, bottom: float, right: float, top: float) -> ArrayObject:
    return ArrayObject([FloatObject(left), FloatObject(bottom), FloatObject(right), FloatObject(top)])
