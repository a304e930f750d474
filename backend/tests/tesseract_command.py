"""The tesseract command's own reading of a page image: what the engine's in-process reading
(app.engines._tesseract_api) is held to."""

from __future__ import annotations

from pathlib import Path

from app.engines._tesseract_exec import TsvWord, tesseract_process, tsv_words


def command_tsv(image: Path, *, dpi: int = 300, language: str = "eng") -> str:
    """`tesseract IMAGE stdout --dpi DPI -l LANGUAGE tsv`: its TSV, header row included."""
    done = tesseract_process(str(image), "stdout", "--dpi", str(dpi), "-l", language, "tsv")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode("utf-8")


def command_words(image: Path, *, dpi: int = 300, language: str = "eng") -> list[TsvWord]:
    return tsv_words(command_tsv(image, dpi=dpi, language=language), 1)[0]
