"""Running the tesseract binary (kept apart from the engine adapter, as OCRmyPDF does), and
reading tesseract's TSV.

Pages are read inside the OCR process (_tesseract_api.py); the command runs for what the
library does not answer as simply: the languages installed (in a process that has loaded no
model), and the orientation guess (--psm 0) on the few pages whose lines run up and down, from
an uncompressed TIFF in a scratch directory in memory (/dev/shm when it has room).

Every tesseract gets SIGKILL when the process that started it dies (a killed
OCR process must not leave it running, see _lifetime.py), through util-linux's
`setpriv --pdeathsig KILL`, which sets that and then execs tesseract. Not with a
subprocess preexec_fn: with one, CPython runs the interpreter's at-fork
handlers in the child, and gRPC's (loaded in a process that has run the
google-vision engine) abort it before it can exec (tesseract "exited with -6").
Without setpriv (not Linux, or a util-linux too old for --pdeathsig) tesseract
runs as it is, and an orphan lives until its page is done.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from app.engines.errors import EngineUnavailableError, TesseractFailedError, TesseractTimeoutError

# tesseract's own OpenMP threads fight over the cores our process pool already fills.
_ENV = {**os.environ, "OMP_THREAD_LIMIT": "1"}
_SHM = Path("/dev/shm")
_SHM_MIN_FREE = 512 * 2**20  # a letter page is 8.5 MB; leave room for other processes


@dataclass(frozen=True, slots=True)
class TsvWord:
    block: int
    paragraph: int
    line: int
    text: str
    confidence: float  # 0..100 as tesseract reports it
    left: int
    top: int
    width: int
    height: int


@cache
def _dies_with_parent() -> tuple[str, ...]:
    """The command prefix that makes tesseract die with the process that starts it (or none)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or not sys.platform.startswith("linux"):
        return ()
    prefix = (setpriv, "--pdeathsig", "KILL", "--")
    works = subprocess.run([*prefix, "true"], capture_output=True, check=False).returncode == 0
    return prefix if works else ()


@cache
def tesseract_binary() -> str:
    found = shutil.which("tesseract")
    if found is None:
        raise EngineUnavailableError("tesseract is not installed (apt-get install tesseract-ocr)")
    return found


def tesseract_process(*args: str, timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
    """tesseract with these arguments, its output captured; it dies with this process."""
    return subprocess.run(
        [*_dies_with_parent(), tesseract_binary(), *args],
        capture_output=True,
        timeout=timeout,
        check=False,
        env=_ENV,
    )


@contextmanager
def scratch_directory() -> Iterator[Path]:
    """A private directory for page images, in memory when /dev/shm has room."""
    root: Path | None = None
    if os.access(_SHM, os.W_OK):
        stats = os.statvfs(_SHM)
        if stats.f_bavail * stats.f_frsize >= _SHM_MIN_FREE:
            root = _SHM
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-tess-", dir=root) as directory:
        yield Path(directory)


@dataclass(frozen=True, slots=True)
class OrientationGuess:
    rotation: int  # degrees clockwise that turn the image upright: 0, 90, 180 or 270
    confidence: float  # tesseract's orientation confidence (about 15-25 on a page of clear text)


def detect_orientation(image: Path, *, dpi: int = 300, timeout: float = 120) -> OrientationGuess | None:
    """tesseract's orientation and script detection (--psm 0) on one image: its guess, or None
    when it finds too few letters to guess (it then exits 1 without output).

    One process per image: in a batch listing, a page with too few letters stops the whole
    batch. It costs about 0.45 s for a page of text at 300 DPI, most of what reading it costs, so
    the engine asks only about pages whose lines run up and down. Raises TesseractFailedError when tesseract
    fails otherwise, TesseractTimeoutError past timeout."""
    try:
        done = tesseract_process(str(image), "stdout", "--psm", "0", "--dpi", str(dpi), timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TesseractTimeoutError(f"tesseract's orientation detection ran past {timeout:.0f} s") from None
    fields = dict(
        line.split(":", 1) for line in done.stdout.decode("utf-8", "replace").splitlines() if ":" in line
    )
    if done.returncode == 1 and not fields:
        return None
    try:
        rotation = int(fields["Rotate"])
        confidence = float(fields["Orientation confidence"])
    except (KeyError, ValueError):
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise TesseractFailedError(
            f"tesseract's orientation detection exited with {done.returncode}: {reason[0]}"
        ) from None
    if rotation not in (0, 90, 180, 270):
        raise TesseractFailedError(f"tesseract's orientation detection answered a turn of {rotation}")
    return OrientationGuess(rotation, confidence)


def _rows(tsv: str) -> Iterator[dict[str, str]]:
    yield from csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE)


def tsv_words(tsv: str, expected: int) -> list[list[TsvWord]]:
    """The words of each of `expected` pages in tesseract's TSV (with its header row)."""
    pages: list[list[TsvWord]] = [[] for _ in range(expected)]
    seen: set[int] = set()
    for row in _rows(tsv):
        level = row.get("level")
        if level == "1":
            seen.add(int(row["page_num"]))
            continue
        text = (row.get("text") or "").strip()
        if level != "5" or not text:
            continue
        number = int(row["page_num"])
        if 1 <= number <= expected:
            pages[number - 1].append(
                TsvWord(
                    block=int(row["block_num"]),
                    paragraph=int(row["par_num"]),
                    line=int(row["line_num"]),
                    text=text,
                    confidence=max(0.0, float(row["conf"])),
                    left=int(row["left"]),
                    top=int(row["top"]),
                    width=int(row["width"]),
                    height=int(row["height"]),
                )
            )
    if not set(range(1, expected + 1)) <= seen:
        raise TesseractFailedError(f"tesseract returned {len(seen)} of {expected} pages")
    return pages


def words_to_text(words: Sequence[TsvWord]) -> str:
    """Lines joined by newlines, paragraphs and blocks by a blank line, as tesseract's txt output."""
    out: list[str] = []
    previous: tuple[int, int, int] | None = None
    line: list[str] = []
    for word in words:
        key = (word.block, word.paragraph, word.line)
        if previous is not None and key != previous:
            out.append(" ".join(line))
            line = []
            if key[:2] != previous[:2]:
                out.append("")
        line.append(word.text)
        previous = key
    if line:
        out.append(" ".join(line))
    return "\n".join(out)
