"""Quality: the character error rate of the same page of text upright, turned 90, 180 and 270
degrees and tilted 3 (both ways) and 1.5 degrees, read by our tesseract engine and by
`ocrmypdf --rotate-pages --deskew --sidecar` on the same file (tests/corpus/orientation.py:
10-point prose through a plain office scanner). Target: every pose within 1 point of the
upright page. The last row is each side's seconds for the whole file.

    uv run python -m bench.quality [--pages 7] [--cases eng,rus,deu]

Then non-English scans (tests/corpus/languages.py) read with their language, on both sides.
Each case is a fixture and the language to read it in (CASES below).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pypdf import PdfReader, PdfWriter

from app.core.logging import configure_logging
from app.engines.tesseract import TesseractEngine
from bench._env import HEADER, NAME_WIDTH, choice_list, ocrmypdf_command, row, timed
from tests.corpus import Fixture
from tests.corpus.languages import german_scan, russian_scan
from tests.corpus.orientation import SAME_TEXT_PAGES, same_text
from tests.pdf_factories import cer


@dataclass(frozen=True, slots=True)
class Case:
    """A scanned fixture read in a language, scored page by page."""

    language: str  # tesseract's codes, for both sides (eng, rus, eng+deu)
    build: Callable[[Path], Fixture]
    labels: tuple[str, ...]  # what each page is, for its row (as many as the fixture has pages)
    # Each page is held to the first one (within this many points of its error rate); None: to
    # the target alone.
    within_points_of_first: float | None
    target: str


CASES = (
    Case(
        "eng",
        lambda directory: same_text(directory).fixture,
        tuple(label for label, _, _ in SAME_TEXT_PAGES),
        1.0,
        "within 1 point of upright",
    ),
    # Non-English scans read with their language (make install's TESSERACT_LANGS installs both).
    Case("rus", russian_scan, ("Russian scan",), None, "under 2 %"),
    Case("deu", german_scan, ("German scan",), None, "under 2 %"),
)


def _first_pages(fixture: Fixture, pages: int, directory: Path) -> Fixture:
    """The fixture cut to its first pages (the smoke run reads two)."""
    if pages >= len(fixture.expected):
        return fixture
    writer = PdfWriter()
    for page in PdfReader(fixture.path).pages[:pages]:
        writer.add_page(page)
    path = directory / f"{fixture.path.stem}-first-{pages}.pdf"
    writer.write(path)
    return Fixture(fixture.name, path, fixture.expected[:pages], fixture.note)


def _ours(pdf: Path, language: str) -> tuple[list[str], float]:
    started = time.perf_counter()
    pages = TesseractEngine(language).recognize(pdf.read_bytes(), 1)
    return [page.text for page in pages], time.perf_counter() - started


def _ocrmypdf(pdf: Path, language: str, workdir: Path) -> tuple[list[str], float]:
    sidecar = workdir / f"{pdf.stem}.ocrmypdf.txt"
    options = ["--jobs", "1", "-l", language, "--rotate-pages", "--deskew", "--output-type", "none"]
    seconds = timed([*ocrmypdf_command(), *options, "--sidecar", str(sidecar), "--force-ocr", str(pdf), "-"])
    return sidecar.read_text().split("\f"), seconds


def main(pages: int, languages: list[str]) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-quality-"))
    lines: list[str] = []
    ours_seconds = theirs_seconds = 0.0
    total_pages = 0
    for case in (case for case in CASES if case.language in languages):
        fixture = _first_pages(case.build(work), pages, work)
        our_texts, seconds = _ours(fixture.path, case.language)
        ours_seconds += seconds
        their_texts, seconds = _ocrmypdf(fixture.path, case.language, work)
        theirs_seconds += seconds
        total_pages += len(fixture.expected)
        ours = [cer(expected, text) for expected, text in zip(fixture.expected, our_texts, strict=True)]
        theirs = [cer(expected, text) for expected, text in zip(fixture.expected, their_texts, strict=False)]
        for label, our_error, their_error in zip(case.labels, ours, theirs, strict=False):
            name = f"CER {label} ({case.language}), ours vs ocrmypdf"
            # The fourth column: our error rate against our first page's, in points.
            held_to = ours[0] if case.within_points_of_first is not None else 0.0
            lines.append(
                f"{name:<{NAME_WIDTH}}{our_error * 100:>10.2f}{their_error * 100:>10.2f} "
                f"{'%':<8}{(our_error - held_to) * 100:>+7.2f}  {case.target}"
            )
    lines.append(
        row(f"quality: {total_pages} p, seconds (1 process each)", ours_seconds, theirs_seconds, "s", "lower")
    )
    return lines


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=len(SAME_TEXT_PAGES), help="pages of each case to read")
    languages = [case.language for case in CASES]
    parser.add_argument(
        "--cases",
        type=choice_list(languages),
        default=languages,
        help=f"the cases to read, by language: any of {', '.join(languages)} (the smoke run reads eng)",
    )
    args = parser.parse_args()
    # Logs go to stderr: stdout is the table.
    configure_logging(os.environ.get("LOG_LEVEL", "WARNING"), json=True)
    lines = main(args.pages, args.cases)
    print(HEADER)
    print("\n".join(lines))


if __name__ == "__main__":
    run()
