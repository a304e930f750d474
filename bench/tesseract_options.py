"""Tesseract's options and reading resolutions, each against tesseract as the engine runs it
(its defaults, pages at 300 DPI): the CPU it saves and the accuracy it costs on every scanned
corpus, so an option is adopted only when the table shows it free.

Every corpus page goes the engine's way: a PDF rendered at 300 DPI in gray by PDFium, read by
libtesseract in this process (one thread, the model loaded once per language), the options
set before each reading and put back after. The corpora: the scanned benchmark's two files
(degraded, dense), the Russian and German scans (tests/corpus/languages.py), and small print:
pages of 6.5 to 11.5-point prose scanned at 200 DPI, clean and degraded (the pages where
resolution matters most; a 200 DPI scan is upsampled to 300 by the render, as in the engine,
and `own_resolution` reads it as stored instead).
Each option is read beside the defaults page by page, `--repeat` times, each taking every place
in the order in turn; `control` is the defaults again, so its row is the table's own noise.

Two rows an option: its CPU against the defaults' (all pages; ratio under 1 is a saving), and
the corpus where its mean CER moved most, in points (the issue's bar: within 0.1).

    uv run python -m bench.tesseract_options [--pages 3] [--repeat 2] [--options NAME,...]
        [--corpora NAME,...]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# One OpenMP thread, as in the engine's OCR processes; read when libtesseract loads.
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

import pypdfium2 as pdfium
from PIL import Image, ImageDraw

from app.engines._pages import RENDER_DPI
from app.engines._tesseract_api import reader
from app.engines._tesseract_exec import words_to_text
from app.pdf.samples import DPI, SENTENCES, font
from bench._env import HEADER, NAME_WIDTH, choice_list, row
from bench._samples import degrade_scan, make_degraded_scan_pdf, make_dense_scan_pdf
from tests.corpus.languages import german_scan, russian_scan
from tests.pdf_factories import cer


@dataclass(frozen=True, slots=True)
class Option:
    """tesseract variables to set (each with the default it is put back to) and a resolution."""

    variables: dict[str, tuple[str, str]] = field(default_factory=dict)  # name: (value, default)
    dpi: int = RENDER_DPI
    own_resolution: bool = False  # a scan stored at less than RENDER_DPI read as stored, not upsampled


OPTIONS = {
    "textord_all_prop": Option({"textord_all_prop": ("1", "0")}),  # no fixed-pitch test per row
    "textord_fast_pitch_test": Option({"textord_fast_pitch_test": ("1", "0")}),
    "no_table_finding": Option({"textord_tabfind_find_tables": ("0", "1")}),
    "no_invert": Option({"tessedit_do_invert": ("0", "1")}),
    "250_dpi": Option(dpi=250),
    "200_dpi": Option(dpi=200),
    "own_resolution": Option(own_resolution=True),  # as ocrmypdf reads a scan
    # The defaults again, as an option: what the table shows for no change at all (its spread).
    "control": Option(),
}
DEFAULTS = Option()


@dataclass(frozen=True, slots=True)
class Page:
    corpus: str
    language: str
    image: Image.Image  # at RENDER_DPI, 8-bit gray
    text: str
    stored: Image.Image | None = None  # the scan as stored, when at less than RENDER_DPI
    stored_dpi: int = RENDER_DPI


def _rendered(
    corpus: str, language: str, pdf: Path, texts: list[str] | tuple[str, ...], stored_dpi: int = RENDER_DPI
) -> list[Page]:
    document = pdfium.PdfDocument(str(pdf))

    def gray(index: int, dpi: int) -> Image.Image:
        return document[index].render(scale=dpi / 72, grayscale=True).to_pil().convert("L")

    try:
        return [
            Page(
                corpus,
                language,
                gray(i, RENDER_DPI),
                text,
                gray(i, stored_dpi) if stored_dpi < RENDER_DPI else None,
                stored_dpi,
            )
            for i, text in enumerate(texts)
        ]
    finally:
        document.close()


# Points, and whether degraded (degrade_scan keeps about 80 DPI of detail on a 200 DPI page, and
# under 8 points that leaves nothing any reading can read).
_SMALL_PRINT_DPI = 200
_SMALL_PRINT = ((6.5, False), (8.0, False), (10.0, False), (8.0, True), (10.0, True), (11.5, True))


def _small_print(path: Path, pages: int) -> list[str]:
    """Prose at 6.5 to 11.5 points scanned at 200 DPI, clean then degraded, as a PDF."""
    dpi, images, texts = _SMALL_PRINT_DPI, [], []
    for index in range(pages):
        points, degraded = _SMALL_PRINT[index % len(_SMALL_PRINT)]
        rng = random.Random(index)
        lines = textwrap.wrap(" ".join(rng.choice(SENTENCES) for _ in range(30)), width=round(920 / points))
        lines = lines[: round(500 / points)]
        image = Image.new("L", (round(8.5 * dpi), round(11 * dpi)), 255)
        draw = ImageDraw.Draw(image)
        face = font(points * dpi / DPI)  # the samples' serif, sized for their DPI
        for number, line in enumerate(lines):
            draw.text(
                (round(0.75 * dpi), round(0.8 * dpi + number * points * 1.25 * dpi / 72)),
                line,
                font=face,
                fill=0,
            )
        images.append(degrade_scan(image, index) if degraded else image)
        texts.append("\n".join(lines))
    images[0].save(path, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    return texts


CORPORA = ("degraded", "dense", "rus", "deu", "small 200dpi")


def corpora(pages: int, work: Path, names: Sequence[str] = CORPORA) -> list[Page]:
    found: list[Page] = []
    if "degraded" in names:
        texts = make_degraded_scan_pdf(work / "d.pdf", pages, seed=7)
        found += _rendered("degraded", "eng", work / "d.pdf", texts)
    if "dense" in names:
        found += _rendered("dense", "eng", work / "n.pdf", make_dense_scan_pdf(work / "n.pdf", pages, seed=7))
    for language, build in (("rus", russian_scan), ("deu", german_scan)):
        if language in names:
            fixture = build(work, pages=pages)
            found += _rendered(language, language, fixture.path, fixture.expected)
    if "small 200dpi" in names:
        small = _small_print(work / "s.pdf", 2 * pages)
        found += _rendered("small 200dpi", "eng", work / "s.pdf", small, stored_dpi=_SMALL_PRINT_DPI)
    return found


def read(page: Page, option: Option) -> tuple[float, float]:
    """CPU seconds (resizing included) and CER of one reading of the page with option."""
    tesseract = reader(page.language)
    started = time.process_time()
    image, dpi = page.image, option.dpi
    if option.own_resolution and page.stored is not None:
        image, dpi = page.stored, page.stored_dpi
    elif option.dpi != RENDER_DPI:
        scale = option.dpi / RENDER_DPI
        image = image.resize(
            (round(image.width * scale), round(image.height * scale)), Image.Resampling.BILINEAR
        )
    for name, (value, _) in option.variables.items():
        tesseract.set_variable(name, value)
    try:
        words = tesseract.read(image, dpi=dpi)
    finally:
        for name, (_, default) in option.variables.items():
            tesseract.set_variable(name, default)
    return time.process_time() - started, cer(page.text, words_to_text(words))


def main(pages: int, repeat: int, names: list[str], corpus_names: Sequence[str] = CORPORA) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-options-"))
    corpus = corpora(pages, work, corpus_names)
    options = {"defaults": DEFAULTS} | {name: OPTIONS[name] for name in names}
    cpu = dict.fromkeys(options, 0.0)
    errors: dict[tuple[str, str], list[float]] = {}
    turn = 0
    for round_number in range(repeat):
        for page in corpus:
            # Each in every place of the order in turn: the first reading of a page can cost more.
            order = list(options)[turn % len(options) :] + list(options)[: turn % len(options)]
            turn += 1
            for name in order:
                seconds, error = read(page, options[name])
                cpu[name] += seconds
                if round_number == 0:  # the same pixels read the same way: one reading's error is its error
                    errors.setdefault((name, page.corpus), []).append(error)
    lines = []
    corpus_names = list(dict.fromkeys(page.corpus for page in corpus))
    for name in names:
        lines.append(
            row(f"{name}: CPU, {len(corpus)} p vs defaults", cpu[name], cpu["defaults"], "CPU-s", "lower")
        )
        moved = {
            corpus_name: (_mean(errors[name, corpus_name]), _mean(errors["defaults", corpus_name]))
            for corpus_name in corpus_names
        }
        worst = max(corpus_names, key=lambda corpus_name: moved[corpus_name][0] - moved[corpus_name][1])
        ours, defaults = moved[worst]
        label = f"{name}: CER, {worst}"  # the corpus it moved most
        lines.append(
            f"{label[:NAME_WIDTH]:<{NAME_WIDTH}}{ours * 100:>10.3f}{defaults * 100:>10.3f} "
            f"{'%':<8}{(ours - defaults) * 100:>+7.3f}  within 0.1 points"
        )
    return lines


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--pages", type=int, default=3, help="pages of each corpus (small print: twice as many)"
    )
    parser.add_argument("--repeat", type=int, default=2, help="readings of every page with each option")
    parser.add_argument(
        "--options", type=choice_list(OPTIONS), default=list(OPTIONS), help=f"any of {', '.join(OPTIONS)}"
    )
    parser.add_argument(
        "--corpora",
        type=choice_list(CORPORA),
        default=list(CORPORA),
        help=f"any of {', '.join(CORPORA)} (the smoke run reads one)",
    )
    args = parser.parse_args()
    lines = main(args.pages, args.repeat, args.options, args.corpora)
    print(HEADER)
    print("\n".join(lines))


if __name__ == "__main__":
    run()
