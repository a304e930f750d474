"""Resource limits of an OCR process: what a page may decode to, and how much memory it may map.

A PDF says nothing trustworthy about what its streams decode to: a 3 MB file
whose content stream inflates to 3 GiB made PDFium hold 4 GB (PDFium decodes
a page's whole content stream before it parses it, and aborts the process
when an allocation fails). So two limits, both set per OCR process by the
pool's initializer (pool.py), from the settings:

- Before PDFium loads a page, pypdf walks what the page draws (content
  streams, form XObjects, tiling patterns, Type 3 glyph procedures, embedded
  font files, images) and adds up their decoded size: FlateDecode streams
  are inflated 1 MiB at a time and thrown away, never held; images count
  what their dictionary declares (width x height x components x bits),
  which is what a renderer must produce whatever the stream holds. A page
  over MAX_PAGE_DECODED_MB fails its chunk with ResourceLimitError
  (`resource_limit`, permanent), before anything big is allocated.
  Each object is counted once per page, however often the page draws it.
- RLIMIT_AS (OCR_PROCESS_MEMORY_MB) caps the process's address space, and
  tesseract inherits it: the backstop for what the walk does not see
  (filters other than FlateDecode, inline images, annotation appearances).
  A Python allocation over it is a MemoryError, reported as
  ResourceLimitError; PDFium aborts the process instead, and pool.py
  replaces it (the chunk fails with the retryable `ocr_process_died`).
"""

from __future__ import annotations

import io
import os
import resource
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from app.core.errors import ResourceLimitError
from app.engines._page_clock import set_page_seconds
from app.engines.base import PageResult

_MIB = 1 << 20
_INFLATE_STEP = _MIB  # bytes inflated (then dropped) at a time while counting


@dataclass(frozen=True, slots=True)
class Limits:
    page_decoded_bytes: int | None = None  # None: pages are not measured
    address_space_bytes: int | None = None  # None: no RLIMIT_AS
    page_cpu_seconds: float | None = None  # None: pages are not timed (_page_clock)
    page_text_chars: int | None = None  # None: a page's text may be as long as it is


_limits = Limits()


def set_limits(limits: Limits) -> None:
    """In an OCR process (the pool's initializer): apply the memory limit, keep the page limit and
    time each page (_page_clock)."""
    global _limits
    _limits = limits
    set_page_seconds(limits.page_cpu_seconds)
    if limits.address_space_bytes is not None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = limits.address_space_bytes
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def current_limits() -> Limits:
    return _limits


@contextmanager
def address_space_headroom(headroom: int) -> Iterator[None]:
    """Within: this process may map at most `headroom` bytes more than it maps now (and never
    more than its RLIMIT_AS). For work that reads pages unmetered, the planner's text pass: a
    page that needs more is left to the workers, which measure it first; without this, a
    decompression bomb took the process to its whole RLIMIT_AS before PDFium gave up. Where
    the process's mapped size cannot be read (no /proc), nothing changes."""
    try:
        with open("/proc/self/statm") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError, AttributeError):
        yield
        return
    cap = mapped + headroom
    if soft != resource.RLIM_INFINITY:
        cap = min(cap, soft)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def text_within_limit(result: PageResult) -> PageResult:
    """The page, or when its text is longer than MAX_PAGE_TEXT_CHARS, the page failed with
    `resource_limit`. A 144 KB page of 7 million tiny letters is one PDFium reads in 3 s; a page
    tree may name it 10,000 times, and every chunk result and merge holds its text in memory."""
    limit = _limits.page_text_chars
    if limit is None or len(result.text) <= limit:
        return result
    return PageResult.failed(
        result.page_number,
        ResourceLimitError.code,
        f"page {result.page_number}'s text is {len(result.text):,} characters, more than "
        f"{limit:,} (MAX_PAGE_TEXT_CHARS)",
        result.source,
    )


def memory_error(page_number: int | None = None) -> ResourceLimitError:
    where = f"page {page_number}: " if page_number is not None else ""
    limit = _limits.address_space_bytes
    cap = f" of {limit // _MIB} MiB (OCR_PROCESS_MEMORY_MB)" if limit is not None else ""
    return ResourceLimitError(f"{where}the OCR process ran out of its memory{cap}", page=page_number)


class PageMeter:
    """Counts, for one chunk PDF, what each of its pages decodes to (pypdf, lazily)."""

    def __init__(self, pdf_bytes: bytes, limit: int) -> None:
        self.limit = limit
        self._data = pdf_bytes
        self._reader: Any = None
        self._sizes_of: dict[tuple[int, int], int] = {}  # decoded size by stream object number

    def check(self, index: int, page_number: int) -> None:
        """Raise ResourceLimitError when page `index` (0-based) decodes to more than the limit."""
        total = 0
        for size in self._sizes(index):
            total += size
            if total > self.limit:
                raise ResourceLimitError(
                    f"page {page_number} decodes to more than {self.limit // _MIB} MiB of content "
                    f"and images (MAX_PAGE_DECODED_MB)",
                    page=page_number,
                    limit_bytes=self.limit,
                )

    def _sizes(self, index: int) -> Iterator[int]:
        from pypdf import PdfReader  # imported in the forkserver (pool._preload), not per chunk

        if self._reader is None:
            try:
                self._reader = PdfReader(io.BytesIO(self._data), strict=False)
            except Exception:  # what pypdf cannot read, PDFium judges (and reports) itself
                self._reader = False
        if self._reader is False:
            return
        try:
            page = self._reader.pages[index]
        except Exception:
            return
        yield from _drawn_sizes(page, _Counter(self.limit, self._sizes_of), set(), depth=0)


@dataclass(frozen=True, slots=True)
class _Counter:
    """Decoded sizes of streams, each inflated once per chunk: a font file or form drawn on every
    page is counted on every page, but inflated only for the first."""

    limit: int
    sizes: dict[tuple[int, int], int]

    def stream_size(self, stream: Any) -> int:
        ref = getattr(stream, "indirect_reference", None)
        if ref is None:  # not an object of the file (cannot be drawn twice): nothing to remember
            return _stream_size(stream, self.limit)
        key = (ref.idnum, ref.generation)
        if key not in self.sizes:
            self.sizes[key] = _stream_size(stream, self.limit)
        return self.sizes[key]


def _drawn_sizes(node: Any, counter: _Counter, seen: set[int], depth: int) -> Iterator[int]:
    """Decoded sizes of the streams a page (or a form, pattern or Type 3 font) draws."""
    from pypdf.generic import ArrayObject, DictionaryObject, StreamObject

    if depth > 16:  # forms drawing forms: deeper than any real file; PDFium refuses loops itself
        return
    contents = _resolve(node.get("/Contents"))
    streams = contents if isinstance(contents, ArrayObject) else [contents] if contents is not None else []
    if isinstance(node, StreamObject):  # a form XObject or a tiling pattern: its own content
        streams = [node]
    for ref in streams:
        stream = _once(ref, seen)
        if isinstance(stream, StreamObject):
            yield counter.stream_size(stream)
    resources = _resolve(node.get("/Resources"))
    if not isinstance(resources, DictionaryObject):
        return
    for ref in _values(resources.get("/XObject")):
        xobject = _once(ref, seen)
        if not isinstance(xobject, StreamObject):
            continue
        if xobject.get("/Subtype") == "/Image":
            yield _image_size(xobject)
            mask = _once(xobject.get("/SMask"), seen)
            if isinstance(mask, StreamObject):
                yield _image_size(mask)
        elif xobject.get("/Subtype") == "/Form":
            yield from _drawn_sizes(xobject, counter, seen, depth + 1)
    for ref in _values(resources.get("/Pattern")):
        pattern = _once(ref, seen)
        if isinstance(pattern, StreamObject):
            yield from _drawn_sizes(pattern, counter, seen, depth + 1)
    for ref in _values(resources.get("/Font")):
        font = _once(ref, seen)
        if not isinstance(font, DictionaryObject):
            continue
        descriptor = _resolve(font.get("/FontDescriptor"))
        if isinstance(descriptor, DictionaryObject):
            for key in ("/FontFile", "/FontFile2", "/FontFile3"):
                file = _once(descriptor.get(key), seen)
                if isinstance(file, StreamObject):
                    yield counter.stream_size(file)
        for ref_proc in _values(font.get("/CharProcs")):
            proc = _once(ref_proc, seen)
            if isinstance(proc, StreamObject):
                yield counter.stream_size(proc)
        if font.get("/Subtype") == "/Type3":
            yield from _drawn_sizes(font, counter, seen, depth + 1)


def _resolve(value: Any) -> Any:
    try:
        return value.get_object() if value is not None and hasattr(value, "get_object") else value
    except Exception:
        return None


def _once(ref: Any, seen: set[int]) -> Any:
    """The object behind ref, or None if this page already counted it."""
    number = getattr(ref, "idnum", None)
    if number is not None:
        if number in seen:
            return None
        seen.add(number)
    return _resolve(ref)


def _values(dictionary: Any) -> list[Any]:
    from pypdf.generic import DictionaryObject

    resolved = _resolve(dictionary)
    return list(resolved.values()) if isinstance(resolved, DictionaryObject) else []


def _filters(stream: Any) -> list[str]:
    filters = _resolve(stream.get("/Filter"))
    if filters is None:
        return []
    if isinstance(filters, list):
        return [str(_resolve(f)) for f in filters]
    return [str(filters)]


def _stream_size(stream: Any, limit: int) -> int:
    """What the stream decodes to, counted by inflating it piecewise (stops once past limit).

    Filters other than FlateDecode count their encoded length: those are left to the memory limit.
    """
    raw = getattr(stream, "_data", b"") or b""
    if _filters(stream) not in (["/FlateDecode"], ["/Fl"]):
        return len(raw)
    inflater = zlib.decompressobj()
    total = 0
    pending = raw
    try:
        while pending and total <= limit:
            total += len(inflater.decompress(pending, _INFLATE_STEP))
            pending = inflater.unconsumed_tail
    except zlib.error:
        pass  # a damaged stream decodes to what came before the damage (PDFium does the same)
    return total


_COMPONENTS = {
    "/DeviceGray": 1,
    "/G": 1,
    "/CalGray": 1,
    "/Indexed": 1,
    "/I": 1,
    "/Separation": 1,
    "/Pattern": 1,
    "/DeviceRGB": 3,
    "/RGB": 3,
    "/CalRGB": 3,
    "/Lab": 3,
    "/DeviceCMYK": 4,
    "/CMYK": 4,
}


def _image_size(image: Any) -> int:
    """What the image decodes to by its own dictionary: the renderer's work, whatever its stream holds."""
    try:
        width = int(_resolve(image.get("/Width", 0)))
        height = int(_resolve(image.get("/Height", 0)))
    except (TypeError, ValueError):
        return 0
    if _resolve(image.get("/ImageMask")) is True:
        components, bits = 1, 1
    else:
        components = _components(_resolve(image.get("/ColorSpace")))
        try:
            bits = int(_resolve(image.get("/BitsPerComponent", 8)))
        except (TypeError, ValueError):
            bits = 8
    return max(0, width) * max(0, height) * components * max(1, min(bits, 16)) // 8


def _components(space: Any) -> int:
    if space is None:  # JPX carries its own: count the most it can be
        return 4
    if isinstance(space, list) and space:
        family = str(_resolve(space[0]))
        if family == "/ICCBased" and len(space) > 1:
            profile = _resolve(space[1])
            try:
                return int(_resolve(profile.get("/N", 3)))
            except (AttributeError, TypeError, ValueError):
                return 3
        if family == "/DeviceN" and len(space) > 1:
            names = _resolve(space[1])
            return len(names) if isinstance(names, list) else 4
        return _COMPONENTS.get(family, 4)
    return _COMPONENTS.get(str(space), 4)
