"""Resource limits of an OCR process: what a page may decode to, and how much memory it may map.

A PDF says nothing trustworthy about what its streams decode to: a 3 MB file
whose content stream inflates to 3 GiB made PDFium hold 4 GB (PDFium decodes
a page's whole content stream before it parses it, and aborts the process
when an allocation fails). So two limits, both set per OCR process by the
pool's initializer (pool.py), from the settings:

- Before PDFium loads a page, pypdf walks what the page draws (content
  streams, form XObjects, tiling patterns, Type 3 glyph procedures, embedded
  font files, images, annotations' appearances) and adds up their decoded
  size: FlateDecode streams are inflated 1 MiB at a time and thrown away,
  never held, through every FlateDecode of a chain (after the ASCII filters
  before them, which only shrink); images count what their dictionary
  declares (width x height x components x bits), which is what a renderer
  must produce whatever the stream holds, and a JPEG 2000 image what its
  own codestream declares when that is more. A page over
  MAX_PAGE_DECODED_MB fails its chunk with ResourceLimitError
  (`resource_limit`, permanent), before anything big is allocated.
  Each object is counted once per page, however often the page draws it.
- RLIMIT_AS (OCR_PROCESS_MEMORY_MB) caps the process's address space, and
  tesseract inherits it: the backstop for what the walk does not see
  (filters other than FlateDecode and the ASCII ones, inline images, forms
  nested deeper than _MAX_FORM_DEPTH).
  A Python allocation over it is a MemoryError, reported as
  ResourceLimitError; PDFium aborts the process instead, and pool.py
  replaces it (the chunk fails with the retryable `ocr_process_died`).
"""

from __future__ import annotations

import io
import os
import resource
import struct
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
_MAX_FORM_DEPTH = 100  # forms drawing forms (PDFium draws some 40 deep; a bomb hid at 20)
_FLATE = frozenset({"/FlateDecode", "/Fl"})
_ASCII = frozenset({"/ASCIIHexDecode", "/AHx", "/ASCII85Decode", "/A85"})
_JPX_SIZ = b"\xff\x4f\xff\x51"  # a JPEG 2000 codestream's start, then its SIZ marker
_JPX_HEAD = 1 << 16  # where a JP2 file's codestream starts at the latest (after its header boxes)


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
        counter, seen = _Counter(self.limit, self._sizes_of), set[int]()
        yield from _drawn_sizes(page, counter, seen, depth=0)
        yield from _appearance_sizes(page, counter, seen)


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

    if depth > _MAX_FORM_DEPTH:  # deeper than any real file; PDFium refuses loops itself
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


def _appearance_sizes(page: Any, counter: _Counter, seen: set[int]) -> Iterator[int]:
    """Decoded sizes of what the page's annotations draw: each one's normal appearance (a form, or
    one form per state of a check box or a radio button)."""
    from pypdf.generic import ArrayObject, DictionaryObject, StreamObject

    annotations = _resolve(page.get("/Annots"))
    if not isinstance(annotations, ArrayObject):
        return
    for ref in annotations:
        annotation = _once(ref, seen)
        if not isinstance(annotation, DictionaryObject):
            continue
        appearances = _resolve(annotation.get("/AP"))
        if not isinstance(appearances, DictionaryObject):
            continue
        normal = appearances.get("/N")
        states = _resolve(normal)
        by_state = isinstance(states, DictionaryObject) and not isinstance(states, StreamObject)
        for form_ref in list(states.values()) if by_state else [normal]:
            form = _once(form_ref, seen)
            if isinstance(form, StreamObject):
                yield from _drawn_sizes(form, counter, seen, depth=1)


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

    A chain of ASCII filters (decoded whole: they only shrink) then one or more FlateDecode is
    counted through all of them; other filters count their encoded length: those are left to the
    memory limit.
    """
    raw = getattr(stream, "_data", b"") or b""
    filters = _filters(stream)
    ascii_filters = 0
    while ascii_filters < len(filters) and filters[ascii_filters] in _ASCII:
        ascii_filters += 1
    flates = filters[ascii_filters:]
    if not flates or not _FLATE.issuperset(flates):
        return len(raw)
    data = raw
    if ascii_filters:
        from pypdf.filters import ASCII85Decode, ASCIIHexDecode

        try:
            for name in filters[:ascii_filters]:
                decoder = ASCII85Decode if name in ("/ASCII85Decode", "/A85") else ASCIIHexDecode
                data = decoder.decode(data)
        except Exception:  # pypdf raises several types on bad input: PDFium decodes what it can
            return len(raw)
    total = 0
    for piece in _inflated(data, len(flates)):
        total += len(piece)
        if total > limit:
            break
    return total


def _inflated(data: bytes, times: int) -> Iterator[bytes]:
    """data through `times` FlateDecode filters in a row, in pieces of at most _INFLATE_STEP: each
    filter holds one piece of its input and one of its output, however much the chain makes."""
    pieces: Iterator[bytes] = iter((data,))
    for _ in range(times):
        pieces = _inflate(pieces)
    return pieces


def _inflate(pieces: Iterator[bytes]) -> Iterator[bytes]:
    inflater = zlib.decompressobj()
    try:
        for piece in pieces:
            pending = piece
            while pending and not inflater.eof:
                out = inflater.decompress(pending, _INFLATE_STEP)
                pending = inflater.unconsumed_tail
                if out:
                    yield out
    except zlib.error:
        return  # a damaged stream decodes to what came before the damage (PDFium does the same)


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
    """What the image decodes to by its own dictionary: the renderer's work, whatever its stream
    holds; for a JPEG 2000 image, by its codestream when that says more (the decoder works at the
    codestream's size: one whose dictionary said 100 x 100 took its process to 2 GB)."""
    declared = _declared_image_size(image)
    if "/JPXDecode" in _filters(image):
        return max(declared, _codestream_size(getattr(image, "_data", b"") or b""))
    return declared


def _codestream_size(data: bytes) -> int:
    """width x height x components of a JPEG 2000 codestream (raw, or in a JP2 file's first
    _JPX_HEAD bytes) by its SIZ marker, a byte a sample; 0 when none is found."""
    at = data.find(_JPX_SIZ, 0, _JPX_HEAD)
    siz = data[at + len(_JPX_SIZ) : at + len(_JPX_SIZ) + 38] if at >= 0 else b""
    if len(siz) < 38:
        return 0
    # Lsiz, Rsiz (2 bytes each), Xsiz, Ysiz, XOsiz, YOsiz, four tile sizes (4 each), Csiz (2)
    width, height, left, top = (int(value) for value in struct.unpack(">4I", siz[4:20]))
    components = int.from_bytes(siz[36:38], "big")
    return max(0, width - left) * max(0, height - top) * components


def _declared_image_size(image: Any) -> int:
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
