"""Letter-spaced words (tracking), which PDFium spaces out letter by letter, and single-letter
words, which must stay apart.

- `chromium_tracked`: a page printed to PDF by Chromium: a heading of several words and a
  one-word heading in capitals (`text-transform`), both with CSS `letter-spacing`, on rows of
  their own; justified paragraphs with a letter-spaced phrase inside one, and runs of
  single-letter words ("sets a e k r") inside the others. Chromium draws each glyph on its own
  and no space: PDFium makes every space, between letters as between words.
- `tj_tracked`: written directly: each line one TJ with the tracking as an offset after every
  character; its spaces drawn, or left out and the word gap given as a wider offset.
- `positioned_words`: prose a word at a time, the word gap an offset and no space drawn (as TeX
  writes), with runs of single-letter words; a row of one-character table cells an em and more
  apart. Nothing may be joined.

Each builder returns the page's lines (or, for Chromium, which chooses where lines break, its
words) as a reader reads them.
"""

from __future__ import annotations

import html
import random
from pathlib import Path

from reportlab.pdfbase.pdfmetrics import stringWidth

from app.pdf.samples import page_text
from tests.corpus.word_gaps import font_page, pdf_string, print_html

TOP, LEFT = 740.0, 72.0
_LETTERS = "abcdeknrstxyz"


def _single_letters(rng: random.Random) -> list[str]:
    return [rng.choice(_LETTERS) for _ in range(rng.randint(4, 6))]


def _with_single_letters(words: list[str], rng: random.Random) -> list[str]:
    """words with a run of single-letter words put in after the first few ("the sets a e k r")."""
    at = rng.randint(3, max(3, len(words) - 3))
    return [*words[:at], "sets", *_single_letters(rng), *words[at:]]


def chromium_tracked(path: Path, seed: int = 0, spacing: float = 0.3) -> list[str]:
    """spacing: the headings' and the phrase's letter spacing, in em."""
    rng = random.Random(seed)
    heading = page_text(seed + 5, seed, sentences=1).split()[:5]
    one_word = max(page_text(seed + 6, seed, sentences=1).split(), key=len).strip(".,;:").upper()
    paragraphs: list[list[str]] = []
    marked: list[str] = []
    for number in range(3):
        words = page_text(seed * 3 + number, seed, sentences=4).split()
        if number == 1:
            at = rng.randint(2, len(words) - 6)
            phrase = words[at : at + 3]
            paragraphs.append(words)
            marked.append(
                " ".join(html.escape(word) for word in words[:at])
                + f' <span class="tracked">{html.escape(" ".join(phrase))}</span> '
                + " ".join(html.escape(word) for word in words[at + 3 :])
            )
            continue
        words = _with_single_letters(words, rng)
        paragraphs.append(words)
        marked.append(" ".join(html.escape(word) for word in words))
    source = path.with_suffix(".html")
    source.write_text(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><style>"
        "@page { size: A4; margin: 18mm; } body { font-family: 'DejaVu Sans'; font-size: 11pt; }"
        f"h1 {{ font-size: 18pt; letter-spacing: {spacing}em; }}"
        f"h2 {{ font-size: 12pt; letter-spacing: {spacing}em; text-transform: uppercase; }}"
        f"p {{ text-align: justify; }} .tracked {{ letter-spacing: {spacing}em; }}"
        "</style></head><body>"
        f"<h1>{html.escape(' '.join(heading))}</h1><p>{marked[0]}</p>"
        f"<h2>{html.escape(one_word.lower())}</h2><p>{marked[1]}</p><p>{marked[2]}</p>"
        "</body></html>",
        encoding="utf-8",
    )
    print_html(source, path)
    return [*heading, *paragraphs[0], one_word, *paragraphs[1], *paragraphs[2]]


def tracked_tj(text: str, tracking: float, spaces_drawn: bool) -> str:
    """One TJ of text with tracking (thousandths of an em) after each character; without its
    spaces drawn, a word gap is a space's width and the tracking twice."""
    space = stringWidth(" ", "Helvetica", 1000)
    parts: list[str] = []
    for char in text:
        if char == " " and not spaces_drawn:
            parts.append(f"{-(space + tracking):.0f}")
            continue
        parts += [pdf_string(char), f"{-tracking:.0f}"]
    return "[" + " ".join(parts) + "] TJ"


def tj_tracked(path: Path, seed: int = 0, tracking: float = 300, spaces_drawn: bool = True) -> list[str]:
    """A letter-spaced heading of several words, a letter-spaced one-word heading, a
    letter-spaced paragraph at body size, and a plain paragraph with single-letter words, in
    Helvetica; tracking in thousandths of an em."""
    rng = random.Random(seed)
    heading = _wrapped(" ".join(page_text(seed + 7, seed, sentences=1).split()[:4]), 16.0, 440.0, tracking)
    one_word = max(page_text(seed + 8, seed, sentences=1).split(), key=len).strip(".,;:").upper()
    body = _wrapped(page_text(seed + 9, seed, sentences=3), 10.0, 440.0, tracking)
    plain = _wrapped(
        " ".join(_with_single_letters(page_text(seed + 10, seed, sentences=3).split(), rng)), 10.0
    )
    content, y = ["BT"], TOP
    for line in heading:
        content.append(f"/F1 16 Tf 1 0 0 1 {LEFT} {y} Tm {tracked_tj(line, tracking, spaces_drawn)}")
        y -= 22
    content.append(f"/F1 12 Tf 1 0 0 1 {LEFT} {y - 8} Tm {tracked_tj(one_word, tracking, spaces_drawn)}")
    y -= 34
    for line in body:
        content.append(f"/F1 10 Tf 1 0 0 1 {LEFT} {y} Tm {tracked_tj(line, tracking, spaces_drawn)}")
        y -= 14
    y -= 10
    for line in plain:
        content.append(f"/F1 10 Tf 1 0 0 1 {LEFT} {y} Tm {pdf_string(line)} Tj")
        y -= 14
    content.append("ET")
    font_page(content, path)
    return [*heading, one_word, *body, *plain]


def _wrapped(text: str, size: float, width: float = 440.0, tracking: float = 0.0) -> list[str]:
    lines: list[list[str]] = [[]]
    for word in text.split():
        candidate = " ".join([*lines[-1], word])
        wide = stringWidth(candidate, "Helvetica", size) + len(candidate) * tracking * size / 1000
        if lines[-1] and wide > width:
            lines.append([word])
        else:
            lines[-1].append(word)
    return [" ".join(words) for words in lines]


def positioned_words(path: Path, seed: int = 0) -> list[str]:
    """Lines of prose drawn a word at a time with the word gap an offset in a TJ (no space
    drawn), some with a run of single-letter words; then rows of a table of one-character cells
    an em and more apart. Nothing on it is letter-spaced."""
    rng = random.Random(seed)
    size = 10.0
    space = stringWidth(" ", "Helvetica", 1000)
    words = _with_single_letters(page_text(seed + 11, seed, sentences=3).split(), rng)
    words += _with_single_letters(page_text(seed + 12, seed, sentences=3).split(), rng)
    lines = _wrapped(" ".join(words), size)
    content = ["BT", f"/F1 {size:g} Tf"]
    y = TOP
    for line in lines:
        parts = [pdf_string(word) for word in line.split()]
        content.append(f"1 0 0 1 {LEFT} {y} Tm [" + f" {-space:.0f} ".join(parts) + "] TJ")
        y -= 14
    rows = []
    for _ in range(4):
        y -= 14
        cells = [rng.choice("XYN0123456789") for _ in range(8)]
        x = LEFT
        for cell in cells:
            content.append(f"1 0 0 1 {x:.2f} {y} Tm {pdf_string(cell)} Tj")
            x += size * rng.uniform(1.6, 3.0)
        rows.append(" ".join(cells))
    content.append("ET")
    font_page(content, path)
    return [*lines, *rows]
