"""The page meter: what a page makes PDFium decode and build, added up before PDFium loads it.

pypdf walks what the page can draw and counts:

- every stream the page's contents, resources and annotations' appearances reach, once however
  often it is named: content streams, fonts' files and CMaps (ToUnicode, a Type 0 font's encoding,
  its descendant fonts' files), colour spaces' ICC profiles and lookup tables, functions (tint
  transforms, transfer functions), shadings' meshes, soft masks, tiling patterns, Type 3 glyph
  procedures. FlateDecode streams are inflated 1 MiB at a time and thrown away, never held,
  through every FlateDecode of a chain (after the ASCII filters before them, which only shrink);
  a stream under other filters counts its encoded length (the memory limit is the backstop);
- images by what their dictionary declares (width x height x components x bits), which is what a
  renderer must produce whatever the stream holds, and a JPEG 2000 image by what its own
  codestream declares when that is more;
- forms by how often they are drawn: PDFium builds a form's objects again each time a content
  stream draws it (`/Name Do`), so forms drawing forms multiply (one drawing the next twice, 20
  deep, is a million forms: 845 bytes of PDF took an OCR process to its 2 GB), and a form that
  draws itself twice never ends. Each drawing counts the form's content and _FORM_COST, down to
  _MAX_FORM_DEPTH forms deep (PDFium stops at about 40);
- marked content by how deep it nests (`BDC`/`BMC` ... `EMC`): PDFium held about 36 KB a level,
  and 20 KB of a page that begins marked content 20,000 times and never ends it took an OCR
  process to its 2 GB. Each content stream counts _MARK_COST a level at its deepest (a page's
  streams run on from one another).

Keys that name nothing drawn (the page tree, links, metadata, an editor's private data) are not
followed. A page over the limit fails with ResourceLimitError before PDFium sees it.
"""

from __future__ import annotations

import io
import re
import struct
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard

from app.core.errors import ResourceLimitError

if TYPE_CHECKING:  # pypdf is imported where it is used: the forkserver has it, the planner not
    from pypdf.generic import DictionaryObject, StreamObject

_MIB = 1 << 20
_INFLATE_STEP = _MIB  # bytes inflated (then dropped) at a time while counting
_MAX_FORM_DEPTH = 100  # forms drawing forms (PDFium draws some 40 deep; a bomb hid at 20)
# What PDFium holds for each drawing of a form besides its objects: measured at about 1.3 KB a
# form on a page that draws 131,071 small ones (175 MB).
_FORM_COST = 1024
# What PDFium holds for each level of marked content open at once: measured at about 36 KB a
# level between 5,000 (220 MB) and 10,000 (398 MB) levels on one page.
_MARK_COST = 36 * 1024
_MAX_NESTING = 512  # objects inside one another from the page (forms 100 deep, 4 levels each)
_MAX_OBJECTS = 100_000  # objects a page's walk visits; past them the rest is the memory limit's
# What a resource dictionary holds that a page can draw (ISO 32000-1, 7.8.3); other keys are
# not followed (a file may hang millions of objects from one no reader uses).
_RESOURCE_KINDS = frozenset({"/ExtGState", "/ColorSpace", "/Pattern", "/Shading", "/XObject", "/Font"})
_FLATE = frozenset({"/FlateDecode", "/Fl"})
_ASCII = frozenset({"/ASCIIHexDecode", "/AHx", "/ASCII85Decode", "/A85"})
_JPX_SIZ = b"\xff\x4f\xff\x51"  # a JPEG 2000 codestream's start, then its SIZ marker
_JPX_HEAD = 1 << 16  # where a JP2 file's codestream starts at the latest (after its header boxes)
# Keys whose values are not drawn with the page: the page tree, structure, links and actions,
# metadata and an editor's private data (Illustrator keeps megabytes there), thumbnails.
_NOT_DRAWN = frozenset(
    {
        "/Parent",
        "/P",
        "/Kids",
        "/StructParent",
        "/StructParents",
        "/Metadata",
        "/PieceInfo",
        "/Thumb",
        "/B",
        "/Dest",
        "/A",
        "/AA",
        "/Next",
        "/First",
        "/Last",
        "/Prev",
        "/Popup",
        "/IRT",
        "/Annots",
        "/Contents",
        "/AP",
    }
)
# `/Name Do`: a content stream drawing an XObject (white space and delimiters per ISO 32000-1, 7.2.2)
_DO = re.compile(rb"/([^\x00\t\n\x0c\r /\[\]()<>{}%]*)[\x00\t\n\x0c\r ]*Do(?![^\x00\t\n\x0c\r /\[\]()<>{}%])")
_DO_CARRY = 256  # bytes of one inflated piece kept for a `/Name Do` cut by the next
# A marked-content operator, delimited as an operator is
_MARK = re.compile(rb"(?<![^\x00\t\n\x0c\r /\[\]()<>{}%])(BDC|BMC|EMC)(?![^\x00\t\n\x0c\r /\[\]()<>{}%])")


class PageMeter:
    """Counts, for one chunk PDF, what each of its pages decodes to (pypdf, lazily)."""

    def __init__(self, pdf_bytes: bytes, limit: int) -> None:
        self.limit = limit
        self._data = pdf_bytes
        self._reader: Any = None
        self._streams: dict[tuple[int, int], _Stream] = {}  # by object number, for the whole chunk

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
        yield from _Walk(_Counter(self.limit, self._streams)).page(page)


@dataclass(frozen=True, slots=True)
class _Stream:
    """A stream's decoded size, and as content (where it was read as such): the XObjects it draws
    by name (`/Name Do`, how often; None where it was not read, or cannot be), how deep its marked
    content nests at its deepest, and how many levels it leaves open."""

    size: int
    draws: Counter[str] | None
    marks: int = 0
    open_marks: int = 0


@dataclass(frozen=True, slots=True)
class _Counter:
    """Decoded sizes of streams, each inflated once per chunk: a font file or form drawn on every
    page is counted on every page, but inflated only for the first."""

    limit: int
    streams: dict[tuple[int, int], _Stream]

    def stream(self, stream: Any, *, content: bool = False) -> _Stream:
        """The stream's size, and with content, what it draws and how deep its marked content
        nests (read once, as it is inflated)."""
        ref = getattr(stream, "indirect_reference", None)
        key = (ref.idnum, ref.generation) if ref is not None else None
        known = self.streams.get(key) if key is not None else None
        if known is None or (content and known.draws is None):
            known = _measure(stream, self.limit, content=content)
            if key is not None:
                self.streams[key] = known
        return known


@dataclass
class _Walk:
    """One page's walk: the objects it counted (by number), and what each form costs drawn at a
    depth (by form and depth: a form drawn in many places is worked out once)."""

    counter: _Counter
    seen: set[int] = field(default_factory=set)
    form_costs: dict[tuple[int, int], int] = field(default_factory=dict)

    def page(self, page: Any) -> Iterator[int]:
        from pypdf.generic import ArrayObject

        contents = _resolve(page.get("/Contents"))
        streams = list(contents) if isinstance(contents, ArrayObject) else [contents]
        resources = page.get("/Resources")
        forms = _form_names(resources)
        open_marks = deepest = 0
        for ref in streams:
            stream = self._once(ref)
            if _is_stream(stream):
                measured = self.counter.stream(stream, content=True)
                yield measured.size
                if forms:
                    yield self._forms_drawn(_draws_or_all(measured, forms), resources, depth=1)
                deepest = max(deepest, open_marks + measured.marks)
                open_marks += measured.open_marks
        yield deepest * _MARK_COST
        yield from self.reached(resources, "/Resources")
        yield from self._appearances(page)

    def reached(self, value: Any, key: str | None = None) -> Iterator[int]:
        """What the streams reachable from value decode to, each once. Of a resource dictionary,
        only the kinds of resource are followed; forms drawn by name (under /XObject) are counted
        where they are drawn (_forms_drawn), and what they reach here."""
        from pypdf.generic import ArrayObject, DictionaryObject

        stack: list[tuple[Any, str | None, int]] = [(value, key, 0)]
        while stack:
            node, under, nesting = stack.pop()
            node = self._once(node)
            if node is None or nesting > _MAX_NESTING or len(self.seen) > _MAX_OBJECTS:
                continue
            if _is_stream(node):
                yield from self._stream_sizes(node, under)
            if isinstance(node, DictionaryObject):
                if "/CharProcs" in node:
                    yield self._glyph_forms(node)
                keys = _RESOURCE_KINDS if under == "/Resources" else None
                # an XObject dictionary's entries are XObjects; any other's, what their key says
                xobjects = under == "/XObject" and not _is_stream(node)
                stack.extend(
                    (child, "/XObject" if xobjects else str(name), nesting + 1)
                    for name, child in node.items()
                    if (name in keys if keys is not None else name not in _NOT_DRAWN)
                )
            elif isinstance(node, ArrayObject):
                stack.extend((child, under, nesting + 1) for child in node)

    def _stream_sizes(self, stream: Any, under: str | None) -> Iterator[int]:
        subtype = stream.get("/Subtype")
        if subtype == "/Image":
            yield _image_size(stream)
        elif subtype == "/Form" and under == "/XObject":
            return  # counted each time a content stream draws it (_forms_drawn)
        elif subtype == "/Form" or stream.get("/PatternType") == 1:
            # content drawn as it is where it is drawn: an appearance, a soft mask, a tiling pattern
            yield from self._drawn_as_is(stream, stream.get("/Resources"))
        else:  # a font's file or CMap, an ICC profile, a function, a shading's data
            yield self.counter.stream(stream).size

    def _drawn_as_is(self, stream: Any, resources: Any) -> Iterator[int]:
        """A content stream drawn once with resources: its size, its marked content, and the forms
        it draws."""
        forms = _form_names(resources)
        measured = self.counter.stream(stream, content=True)
        yield measured.size + measured.marks * _MARK_COST
        if forms:
            yield self._forms_drawn(_draws_or_all(measured, forms), resources, depth=1)

    def _glyph_forms(self, font: Any) -> int:
        """What a Type 3 font's glyph procedures build beyond their size: their marked content and the
        forms they draw (PDFium builds each glyph once)."""
        resources = font.get("/Resources")
        forms = _form_names(resources)
        procs = _resolve(font.get("/CharProcs"))
        if not _is_dictionary(procs):
            return 0
        total = 0
        for ref in procs.values():
            proc = _resolve(ref)
            if _is_stream(proc):
                measured = self.counter.stream(proc, content=True)
                total += measured.marks * _MARK_COST
                if forms:
                    total += self._forms_drawn(_draws_or_all(measured, forms), resources, depth=1)
            if total > self.counter.limit:
                break
        return total

    def _forms_drawn(self, draws: Counter[str], resources: Any, depth: int) -> int:
        """What PDFium builds for the forms a content stream draws: each drawing of a form its
        content, _FORM_COST and the forms it draws in turn. Past the limit, the sum so far."""
        if not draws or depth > _MAX_FORM_DEPTH:
            return 0
        forms = _form_names(resources)
        total = 0
        for name, times in draws.items():
            form = forms.get(name)
            if form is None:
                continue
            total += times * self._form_cost(form, depth)
            if total > self.counter.limit:
                break
        return total

    def _form_cost(self, form: Any, depth: int) -> int:
        ref = getattr(form, "indirect_reference", None)
        key = (ref.idnum if ref is not None else id(form), depth)
        cost = self.form_costs.get(key)
        if cost is None:
            resources = form.get("/Resources")
            forms = _form_names(resources)
            measured = self.counter.stream(form, content=True)
            drawn = self._forms_drawn(_draws_or_all(measured, forms), resources, depth + 1) if forms else 0
            own = measured.size + _FORM_COST + measured.marks * _MARK_COST
            cost = self.form_costs[key] = own + drawn
        return cost

    def _appearances(self, page: Any) -> Iterator[int]:
        """What the page's annotations draw: each one's normal appearance (a form, or one form per
        state of a check box or a radio button), drawn as it is."""
        annotations = _resolve(page.get("/Annots"))
        for ref in annotations if isinstance(annotations, list) else []:
            annotation = self._once(ref)
            if not _is_dictionary(annotation):
                continue
            appearances = _resolve(annotation.get("/AP"))
            if not _is_dictionary(appearances):
                continue
            normal = appearances.get("/N")
            states = _resolve(normal)
            by_state = _is_dictionary(states) and not _is_stream(states)
            for form in list(states.values()) if by_state else [normal]:
                yield from self.reached(form, "/N")

    def _once(self, ref: Any) -> Any:
        """The object behind ref, or None if this page already counted it."""
        number = getattr(ref, "idnum", None)
        if number is not None:
            if number in self.seen:
                return None
            self.seen.add(number)
        return _resolve(ref)


def _form_names(resources: Any) -> dict[str, Any]:
    """The form XObjects resources name, by name: only a content stream with some is read for `Do`."""
    resources = _resolve(resources)
    xobjects = _resolve(resources.get("/XObject")) if _is_dictionary(resources) else None
    if not _is_dictionary(xobjects):
        return {}
    forms = {}
    for name, ref in xobjects.items():
        xobject = _resolve(ref)
        if _is_stream(xobject) and xobject.get("/Subtype") == "/Form":
            forms[str(name)] = xobject
    return forms


def _draws_or_all(measured: _Stream, forms: dict[str, Any]) -> Counter[str]:
    """What the stream draws; for one whose content cannot be read here (a filter not inflated
    here), each of its forms once."""
    return measured.draws if measured.draws is not None else Counter(dict.fromkeys(forms, 1))


def _is_stream(value: Any) -> TypeGuard[StreamObject]:
    from pypdf.generic import StreamObject

    return isinstance(value, StreamObject)


def _is_dictionary(value: Any) -> TypeGuard[DictionaryObject]:
    from pypdf.generic import DictionaryObject

    return isinstance(value, DictionaryObject)


def _resolve(value: Any) -> Any:
    try:
        return value.get_object() if value is not None and hasattr(value, "get_object") else value
    except Exception:
        return None


def _filters(stream: Any) -> list[str]:
    filters = _resolve(stream.get("/Filter"))
    if filters is None:
        return []
    if isinstance(filters, list):
        return [str(_resolve(f)) for f in filters]
    return [str(filters)]


def _measure(stream: Any, limit: int, *, content: bool) -> _Stream:
    """What the stream decodes to, counted by inflating it piecewise (stops once past limit), and
    with content, what it draws by name and how deep its marked content nests, read from the
    same pieces.

    A chain of ASCII filters (decoded whole: they only shrink) then one or more FlateDecode is
    counted through all of them; other filters count their encoded length, and what a stream
    under them draws is not known: those are left to the memory limit.
    """
    raw = getattr(stream, "_data", b"") or b""
    filters = _filters(stream)
    ascii_filters = 0
    while ascii_filters < len(filters) and filters[ascii_filters] in _ASCII:
        ascii_filters += 1
    flates = filters[ascii_filters:]
    if flates and not _FLATE.issuperset(flates):
        return _Stream(len(raw), None)
    data = raw
    if ascii_filters:
        from pypdf.filters import ASCII85Decode, ASCIIHexDecode

        try:
            for name in filters[:ascii_filters]:
                decoder = ASCII85Decode if name in ("/ASCII85Decode", "/A85") else ASCIIHexDecode
                data = decoder.decode(data)
        except Exception:  # pypdf raises several types on bad input: PDFium decodes what it can
            return _Stream(len(raw), None)
    total = 0
    names = _ContentScan() if content else None
    for piece in _inflated(data, len(flates)) if flates else iter((data,)):
        total += len(piece)
        if names is not None:
            names.read(piece)
        if total > limit:
            break
    if names is None:
        return _Stream(total, None)
    return _Stream(total, names.counts(), names.deepest, names.depth)


class _ContentScan:
    """A content stream read a piece at a time: how often each name is drawn (`/Name Do`), and
    how deep its marked content nests (depth: open now; deepest: at most)."""

    def __init__(self) -> None:
        self._raw: Counter[bytes] = Counter()
        self._carry = b""
        self.depth = self.deepest = 0

    def read(self, piece: bytes) -> None:
        if b"o" not in piece and b"C" not in piece:
            # No `Do`, `BDC`, `BMC` or `EMC` ends in this piece, so none is counted here: two
            # scans for a byte (memchr) instead of copying the piece and four searches, which
            # were half the time of measuring a bomb of zeros.
            self._carry = (self._carry + piece[-_DO_CARRY:])[-_DO_CARRY:]
            return
        text = self._carry + piece
        # A search for the operator first (in C, as fast as the inflating): a bomb of zeros is
        # not run through the expressions, which took 0.03 s a MiB.
        for match in _DO.finditer(text) if b"Do" in text else ():
            if match.end() > len(self._carry):  # not one the last piece counted
                self._raw[match.group(1)] += 1
        marked = b"BDC" in text or b"BMC" in text or b"EMC" in text
        for match in _MARK.finditer(text) if marked else ():
            if match.end() > len(self._carry):
                if match.group(1) == b"EMC":
                    self.depth = max(0, self.depth - 1)
                else:
                    self.depth += 1
                    self.deepest = max(self.deepest, self.depth)
        self._carry = text[-_DO_CARRY:]

    def counts(self) -> Counter[str]:
        """By the name as the resource dictionary spells it (pypdf reads #xx escapes and the
        name's bytes the same way there)."""
        from pypdf.generic import NameObject

        counts: Counter[str] = Counter()
        for raw, times in self._raw.items():
            try:
                name = str(NameObject.read_from_stream(io.BytesIO(b"/" + raw + b" "), None))
            except Exception:
                continue
            counts[name] += times
        return counts


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
