"""tesseract inside the OCR process, through libtesseract's C API: its model loaded once per
process and language, each page handed over in memory.

Compared with a tesseract command per batch of pages (what this replaced), on 300 DPI letter
pages with one core each: a command starts, loads its model (about 0.17 s of CPU, once per
chunk) and decodes the page image the OCR process had encoded to a file for it. The C API
reads the same pixels and gives the words of the command's TSV, the same to the byte
(tests/integration/engines/test_tesseract_api.py; how they are taken from the library is
_tesseract_words'), with what the command sets on its own:
page segmentation mode 3 (fully automatic, the command's default; the API's is 6) and the
resolution `--dpi` gives (user_defined_dpi). One read may ask for another mode (what follows a
page's dotted leaders is read as one block of lines, _leader_lines); the next is automatic
again. The orientation guess (--psm 0) still runs the command: it is rare (pages whose lines
run up and down) and reads a file.

libtesseract is built with OpenMP. OMP_THREAD_LIMIT=1 is set before the library is loaded
(libgomp reads it once): the pool already has a process per core.

What tesseract prints while it reads ("Detected 9 diacritics", "Image too large") goes to
a file of the reader's, not to the process's stderr (the terminal of `chunk-ocr run`, a
worker's log), as the command's output was captured; its first line names why a page could
not be read. A page tesseract cannot read is a TesseractFailedError, one it reads past its
deadline a TesseractTimeoutError: each fails that page alone. A crash or an allocation past the
process's memory limit inside tesseract ends the OCR process itself; the pool replaces it,
and a page that does so twice fails alone (ocr_process_died).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import BinaryIO

from PIL import Image

from app.engines._tesseract_exec import TsvWord
from app.engines._tesseract_words import page_words
from app.engines.errors import EngineUnavailableError, TesseractFailedError, TesseractTimeoutError
from app.engines.languages import learned_installed

_PSM_AUTO = 3  # fully automatic page segmentation, no OSD: the tesseract command's default
PSM_BLOCK = 6  # one block of lines, read top to bottom (what follows a page's leaders: _leader_lines)
_NAMES = ("libtesseract.so.5", "libtesseract.so", "libtesseract.5.dylib", "libtesseract.dylib")


def _candidates() -> Iterator[str]:
    """The library by its names, then beside the tesseract on PATH (Homebrew's lib/, where the
    dynamic loader does not look by itself)."""
    yield from _NAMES
    binary = shutil.which("tesseract")
    if binary is not None:
        lib = Path(binary).resolve().parent.parent / "lib"
        yield from (str(lib / name) for name in _NAMES)


@cache
def _library() -> ctypes.CDLL:
    os.environ["OMP_THREAD_LIMIT"] = "1"  # before libgomp is loaded with the library
    for name in _candidates():
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        raise EngineUnavailableError(
            "libtesseract (tesseract's library) was not found: install tesseract (apt-get install "
            "tesseract-ocr; brew install tesseract)"
        )
    handle, text, char_p, integer = ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    for name, argtypes, restype in (
        ("TessBaseAPICreate", [], handle),
        ("TessBaseAPIInit3", [handle, char_p, char_p], integer),
        ("TessBaseAPISetPageSegMode", [handle, integer], None),
        ("TessBaseAPISetVariable", [handle, char_p, char_p], integer),
        ("TessBaseAPISetImage", [handle, char_p, integer, integer, integer, integer], None),
        ("TessBaseAPIRecognize", [handle, handle], integer),
        ("TessBaseAPIGetTsvText", [handle, integer], text),
        ("TessBaseAPIClear", [handle], None),
        ("TessBaseAPIEnd", [handle], None),
        ("TessBaseAPIDelete", [handle], None),
        ("TessDeleteText", [text], None),
        ("TessMonitorCreate", [], handle),
        ("TessMonitorSetDeadlineMSecs", [handle, integer], None),
        ("TessMonitorDelete", [handle], None),
        ("TessVersion", [], char_p),
        ("TessBaseAPIGetAvailableLanguagesAsVector", [handle], ctypes.POINTER(ctypes.c_char_p)),
        ("TessDeleteTextArray", [ctypes.POINTER(ctypes.c_char_p)], None),
        ("TessPageIteratorNext", [handle, integer], ctypes.c_bool),
        ("TessPageIteratorIsAtBeginningOf", [handle, integer], ctypes.c_bool),
        ("TessPageIteratorBoundingBox", [handle, integer, *[ctypes.POINTER(integer)] * 4], ctypes.c_bool),
        ("TessPageIteratorDelete", [handle], None),
    ):
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype
    return lib


def version() -> str:
    """What reads the pages, as `tesseract --version` names it on its first line ("tesseract
    5.3.0"; the command prints the library's own version)."""
    return f"tesseract {_library().TessVersion().decode()}"


class TesseractReader:
    """One language's tesseract, initialized once: read() a page image at a time (thread-safe,
    one page at a time)."""

    def __init__(self, language: str) -> None:
        self.language = language
        self._lib = _library()
        self._lock = threading.Lock()
        self._handle = self._lib.TessBaseAPICreate()
        if self._lib.TessBaseAPIInit3(self._handle, None, language.encode()) != 0:
            self._lib.TessBaseAPIDelete(self._handle)
            raise EngineUnavailableError(f"tesseract could not load its language data for {language!r}")
        # What tesseract prints on its stderr; open as long as the reader (close()).
        self._said: BinaryIO = tempfile.TemporaryFile()  # noqa: SIM115
        self._lib.TessBaseAPISetPageSegMode(self._handle, _PSM_AUTO)
        learned_installed(self._available())

    def _available(self) -> tuple[str, ...]:
        """The languages in the directory this reader loaded its own from: what `tesseract
        --list-langs` lists (the command asks the library the same question)."""
        listed = self._lib.TessBaseAPIGetAvailableLanguagesAsVector(self._handle)
        if not listed:
            return ()
        try:
            names = []
            for name in listed:
                if name is None:
                    break
                names.append(name.decode("utf-8", "replace"))
        finally:
            self._lib.TessDeleteTextArray(listed)
        return tuple(sorted(set(names)))

    def set_variable(self, name: str, value: str) -> None:
        """Set one of tesseract's variables (`tesseract --print-parameters`) for what this reader
        reads next; the engine sets none (bench.tesseract_options measures them). Some are
        global to the process (textord_*), not this reader's alone."""
        with self._lock:
            if not self._lib.TessBaseAPISetVariable(self._handle, name.encode(), value.encode()):
                raise ValueError(f"tesseract has no variable {name!r} that takes {value!r}")

    def read(
        self, image: Image.Image, *, dpi: int, timeout: float = 300, psm: int = _PSM_AUTO
    ) -> list[TsvWord]:
        """The words tesseract reads on image (8-bit grayscale, or converted to it) at dpi, its
        page segmented as psm says (fully automatic, unless told)."""
        if image.mode != "L":
            image = image.convert("L")
        pixels = image.tobytes()
        with self._lock, self._stderr_kept():
            lib, handle = self._lib, self._handle
            lib.TessBaseAPISetVariable(handle, b"user_defined_dpi", str(dpi).encode())
            lib.TessBaseAPISetPageSegMode(handle, psm)
            lib.TessBaseAPISetImage(handle, pixels, image.width, image.height, 1, image.width)
            monitor = lib.TessMonitorCreate()
            lib.TessMonitorSetDeadlineMSecs(monitor, int(timeout * 1000))
            started = time.monotonic()
            try:
                status = lib.TessBaseAPIRecognize(handle, monitor)
                if status != 0:
                    if time.monotonic() - started >= timeout:
                        raise TesseractTimeoutError(f"tesseract read one page for more than {timeout:.0f} s")
                    raise TesseractFailedError(f"tesseract could not read the page: {self._said_first()}")
                words = page_words(lib, handle)
                if words is None:
                    raise TesseractFailedError(
                        f"tesseract returned no text for the page: {self._said_first()}"
                    )
            finally:
                lib.TessMonitorDelete(monitor)
                lib.TessBaseAPIClear(handle)
                lib.TessBaseAPISetPageSegMode(handle, _PSM_AUTO)
        return words

    @contextlib.contextmanager
    def _stderr_kept(self) -> Iterator[None]:
        """File descriptor 2 is the reader's file while tesseract runs (one thread reads at a
        time; an OCR process runs nothing else meanwhile)."""
        self._said.seek(0)
        self._said.truncate()
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(self._said.fileno(), 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)

    def _said_first(self) -> str:
        """The first thing tesseract (or leptonica under it) said about this page: the cause, where
        what follows is its consequences ("Please call SetImage before attempting recognition")."""
        self._said.seek(0)
        said = [line.strip() for line in self._said.read().decode("utf-8", "replace").splitlines()]
        return next((line for line in said if line), "no message")

    def close(self) -> None:
        with self._lock:
            if self._handle:
                self._lib.TessBaseAPIEnd(self._handle)
                self._lib.TessBaseAPIDelete(self._handle)
                self._handle = None
            self._said.close()


_readers: dict[str, TesseractReader] = {}
_readers_lock = threading.Lock()


def reader(language: str) -> TesseractReader:
    """This process's tesseract for language (eng, rus, eng+deu), loaded on first use."""
    with _readers_lock:
        found = _readers.get(language)
        if found is None:
            found = _readers[language] = TesseractReader(language)
        return found


@atexit.register
def _close_readers() -> None:
    """Free each model at exit (tesseract reports one left loaded as a leak). OCR processes leave
    by os._exit and skip this: their memory goes with them."""
    with _readers_lock:
        for found in _readers.values():
            found.close()
        _readers.clear()
