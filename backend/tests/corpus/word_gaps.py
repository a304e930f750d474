"""Justified prose whose word gaps are drawn as character spacing, and letter-spaced prose that is
not so.

- `ghostscript_justified`: PostScript written as groff writes a justified line, made a PDF by
  Ghostscript (ps2pdf). Each word is shown at its place; now and then a word gap is spanned by
  one `ashow` of the letter before it and the letter after it, with the gap as its character
  spacing; and now and then a word is shown in two parts with a small move back between them
  (a kerned pair). Ghostscript writes the first as a two-letter string with the gap as its Tc
  ("nm" of "raven music"), the second as a space whose advance a negative Tw takes back.
- `groff_justified`: paragraphs typeset by groff itself (justified, an italic word now and then,
  as a manual page is), printed to PDF by Ghostscript: the words are the source's in order.
- `tc_gaps`: both written directly, as Ghostscript writes them: a line is runs of words with
  their spaces drawn (widened by Tw), each placed by Tm where the one before ends, broken where
  a word gap is drawn as the Tc of a two-letter run, or where a word is drawn with a space in
  it that a negative Tw takes back.
- `tc_gap_columns`: such lines in two columns stored a row at a time.
- `chromium_small_caps`: justified paragraphs printed to PDF by Chromium, some of their words in
  small capitals (Chromium draws each as a capital glyph in an /ActualText span, whose box
  PDFium gives as its ink's: a third of its line's height).
- `tracked`: letter-spaced text (the same Tc on every character, spaces drawn): no letter may
  be set apart.

Each builder returns the page's lines as a reader reads them.
"""

from __future__ import annotations

import html
import random
import shutil
import subprocess
from pathlib import Path

import pikepdf
from reportlab.pdfbase.pdfmetrics import stringWidth

from app.pdf.samples import page_text

TOP, LEFT, WIDTH, LEADING = 740.0, 72.0, 440.0, 13.0


def _lines(text: str, font: str, size: float, width: float = WIDTH) -> list[list[str]]:
    lines: list[list[str]] = [[]]
    for word in text.split():
        candidate = " ".join([*lines[-1], word])
        if lines[-1] and stringWidth(candidate, font, size) > width:
            lines.append([word])
        else:
            lines[-1].append(word)
    return lines


def _word_gap(words: list[str], font: str, size: float, last: bool, width: float = WIDTH) -> float:
    """The gap between the line's words that justifies it to width (a last line keeps a plain
    space)."""
    space = stringWidth(" ", font, size)
    if last or len(words) < 2:
        return space
    inked = sum(stringWidth(word, font, size) for word in words)
    return (width - inked) / (len(words) - 1)


def pdf_string(text: str) -> str:
    return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def ghostscript_justified(path: Path, seed: int = 0) -> list[str]:
    font, size = "Times-Roman", 10.0
    rng = random.Random(seed)
    lines = _lines(page_text(seed, seed, sentences=24), font, size)
    program = ["%!PS-Adobe-3.0", "%%Pages: 1", "%%Page: 1 1", f"/{font} findfont {size} scalefont setfont"]
    for number, words in enumerate(lines):
        y = TOP - number * LEADING
        gap = _word_gap(words, font, size, number == len(lines) - 1)
        x = LEFT
        glued_next = False  # the first letter of this word was drawn with the one before
        for index, word in enumerate(words):
            glue = (
                index + 1 < len(words) and len(word) > 1 and len(words[index + 1]) > 1 and rng.random() < 0.3
            )
            body = word[1:] if glued_next else word
            start = x + (stringWidth(word[0], font, size) if glued_next else 0.0)
            if glue:
                body = body[:-1]
            if body:
                kern_at = len(body) // 2 if len(body) >= 4 and rng.random() < 0.3 else 0
                program.append(f"{start:.3f} {y:.3f} moveto")
                if kern_at:
                    program.append(
                        f"{pdf_string(body[:kern_at])} show -0.15 0 rmoveto {pdf_string(body[kern_at:])} show"
                    )
                else:
                    program.append(f"{pdf_string(body)} show")
            x += stringWidth(word, font, size)
            if glue:
                pair = word[-1] + words[index + 1][0]
                spacing = gap  # after the first letter: the word gap (and after the second, taken back)
                at = x - stringWidth(word[-1], font, size)
                program.append(f"{at:.3f} {y:.3f} moveto {spacing:.3f} 0 {pdf_string(pair)} ashow")
            x += gap
            glued_next = glue
    program += ["showpage", "%%EOF"]
    _ghostscript("\n".join(program) + "\n", path)
    return [" ".join(words) for words in lines]


def groff_justified(path: Path, seed: int = 0, italic: float = 0.1) -> list[str]:
    """The page's words, in order (groff chooses where lines break); italic: the share of words
    set in italics (each is drawn apart, so fewer of a row's pieces touch)."""
    rng = random.Random(seed)
    source = [".nh", ".ll 6i", ".ps 10", ".vs 12"]
    words: list[str] = []
    for paragraph in range(4):
        line: list[str] = []  # an input line a sentence (groff fills the output lines)
        for word in page_text(seed * 4 + paragraph, seed, sentences=5).split():
            words.append(word)
            line.append(f"\\fI{word}\\fP" if rng.random() < italic else word)
            if word.endswith("."):
                source.append(" ".join(line))
                line = []
        source.append(" ".join(line))
        source.append(".sp")
    typeset = subprocess.run(
        ["groff", "-Tps"], input="\n".join(source) + "\n", capture_output=True, check=True, text=True
    )
    _ghostscript(typeset.stdout, path)
    return words


def chromium_small_caps(path: Path, seed: int = 0) -> list[str]:
    """The page's words, in order (Chromium chooses where lines break)."""
    rng = random.Random(seed)
    words: list[str] = []
    paragraphs = []
    for number in range(4):
        marked = []
        for word in page_text(seed * 4 + number, seed, sentences=4).split():
            words.append(word)
            small = number % 2 == 0 or rng.random() < 0.2
            marked.append(f'<span class="sc">{html.escape(word)}</span>' if small else html.escape(word))
        paragraphs.append("<p>" + " ".join(marked) + "</p>")
    source = path.with_suffix(".html")
    source.write_text(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><style>"
        "@page { size: A4; margin: 18mm; } body { font-family: 'DejaVu Serif'; font-size: 11pt; }"
        "p { text-align: justify; } .sc { font-variant: small-caps; }"
        "</style></head><body>" + "".join(paragraphs) + "</body></html>",
        encoding="utf-8",
    )
    print_html(source, path)
    return words


def print_html(source: Path, path: Path) -> None:
    """Print the HTML file source to a PDF at path with headless Chromium."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--print-to-pdf={path}",
            source.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )


def _ghostscript(postscript: str, path: Path) -> None:
    """Print PostScript to a PDF at path with Ghostscript (ps2pdf's device)."""
    subprocess.run(
        ["gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=pdfwrite", f"-sOutputFile={path}", "-"],
        input=postscript.encode("latin-1"),
        check=True,
        capture_output=True,
    )


def font_page(content: list[str], path: Path, base_font: str = "Helvetica") -> None:
    """A letter page drawing content (operators, a line each) with base_font, one of the 14
    standard fonts, as /F1."""
    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.Type1,
            BaseFont=pikepdf.Name("/" + base_font),
            Encoding=pikepdf.Name.WinAnsiEncoding,
        )
    )
    page = pdf.add_blank_page(page_size=(612, 792))
    page.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
    page.Contents = pdf.make_stream("\n".join(content).encode("latin-1"))
    pdf.save(path)


def _run(text: str, x: float, y: float, char_spacing: float = 0.0, word_spacing: float = 0.0) -> str:
    return f"{char_spacing:.3f} Tc {word_spacing:.3f} Tw 1 0 0 1 {x:.3f} {y:.3f} Tm {pdf_string(text)} Tj"


def tc_gaps(path: Path, seed: int = 0) -> list[str]:
    font, size = "Helvetica", 10.0
    rng = random.Random(seed)
    lines = _lines(page_text(seed + 1, seed, sentences=24), font, size)
    content = [f"BT /F1 {size:g} Tf"]
    for number, words in enumerate(lines):
        runs = _glued_runs(words, _word_gap(words, font, size, number == len(lines) - 1), rng, font, size)
        content += _placed(runs, LEFT, TOP - number * LEADING, font, size)
    content.append("ET")
    font_page(content, path, font)
    return [" ".join(words) for words in lines]


def tc_gap_columns(path: Path, seed: int = 0) -> list[str]:
    """tc_gaps' lines in two columns stored a row at a time (the first line of each column, then
    the second of each); returns the left column's lines, then the right's."""
    font, size, width, gutter = "Helvetica", 10.0, 230.0, 24.0
    rng = random.Random(seed)
    columns = [_lines(page_text(seed + 3 + side, seed, sentences=8), font, size, width) for side in (0, 1)]
    content = [f"BT /F1 {size:g} Tf"]
    for number in range(max(len(column) for column in columns)):
        for side, column in enumerate(columns):
            if number < len(column):
                words = column[number]
                gap = _word_gap(words, font, size, number == len(column) - 1, width)
                x = LEFT + side * (width + gutter)
                content += _placed(
                    _glued_runs(words, gap, rng, font, size), x, TOP - number * LEADING, font, size
                )
    content.append("ET")
    font_page(content, path, font)
    return [" ".join(words) for column in columns for words in column]


def _glued_runs(
    words: list[str], gap: float, rng: random.Random, font: str, size: float
) -> list[tuple[str, float, float]]:
    """A line's runs (text, Tc, Tw), each drawn where the last ends: words with their spaces
    drawn (widened to the gap by Tw), broken where a word gap is drawn as the Tc of a two-letter
    run, or where a word is drawn with a space in it that a negative Tw takes back."""
    space = stringWidth(" ", font, size)
    runs: list[tuple[str, float, float]] = []
    text, skip = "", 0  # the run so far; letters of the word drawn with the word before
    for index, word in enumerate(words):
        body = word[skip:]
        following = words[index + 1] if index + 1 < len(words) else ""
        skip = 0
        if len(body) > 1 and len(following) > 1 and rng.random() < 0.3:
            # up to the word's last letter, then that letter and the next word's first with the
            # gap as their character spacing
            runs += [(text + body[:-1], 0.0, gap - space), (body[-1] + following[0], gap, 0.0)]
            text, skip = "", 1
            continue
        if len(body) >= 4 and rng.random() < 0.2:
            # a space inside the word whose advance Tw takes back
            middle = len(body) // 2
            runs += [
                (text + body[: middle - 1], 0.0, gap - space),
                (f"{body[middle - 1]} {body[middle]}", 0.0, -space),
            ]
            text, body = "", body[middle + 1 :]
        text += body + (" " if following else "")
    runs.append((text, 0.0, gap - space))
    return runs


def _placed(runs: list[tuple[str, float, float]], x: float, y: float, font: str, size: float) -> list[str]:
    """The runs drawn one after the other from (x, y), each where the one before ends (its last
    letter's character spacing left out, as Ghostscript places the next run)."""
    drawn = []
    for text, char_spacing, word_spacing in runs:
        if not text:
            continue
        drawn.append(_run(text, x, y, char_spacing, word_spacing))
        x += stringWidth(text, font, size) + char_spacing * (len(text) - 1) + word_spacing * text.count(" ")
    return drawn


def tracked(path: Path, seed: int = 0, spacing: float = 2.5) -> list[str]:
    """spacing: the Tc of every character (points; at 10 points, a quarter of an em), a line a
    text object."""
    font, size = "Helvetica", 10.0
    lines = _lines(page_text(seed + 2, seed, sentences=12).upper(), font, size, width=WIDTH / 1.5)
    content = [f"BT /F1 {size:g} Tf"]
    content += [
        _run(" ".join(words), LEFT, TOP - number * LEADING, spacing) for number, words in enumerate(lines)
    ]
    content.append("ET")
    font_page(content, path, font)
    return [" ".join(words) for words in lines]
