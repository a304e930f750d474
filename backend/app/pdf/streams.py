"""Whether a damaged file's stream can still be read, and why not when it cannot.

pypdf's decoders are lenient on purpose: a cut-off Flate stream comes back as
whatever inflated before the cut, so "get_data() did not raise" does not mean
the data is whole. Here each filter of a stream is checked: a filter PDFium
cannot decode (an unknown name, or an image codec on data that is not an
image) is named; Flate data is inflated without a zlib checksum check (some
writers omit it and every reader accepts that) and must reach its final block;
an image's data must fill its rows. Image codecs (DCT, JPX, JBIG2, CCITT) are
left to PDFium: their data is only checked to be there.

Checks inflate at most CHECK_LIMIT bytes of a stream: data this large is not
a cut-off fragment, and what it decodes to is the engines' limits' business.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, NameObject, NullObject, StreamObject

CHECK_LIMIT = 256 * 2**20
_INFLATE_STEP = 1 << 20

# Filters PDFium decodes for any stream, with their abbreviations (the inline-image forms).
_GENERAL = {
    "/FlateDecode": "/FlateDecode",
    "/Fl": "/FlateDecode",
    "/LZWDecode": "/LZWDecode",
    "/LZW": "/LZWDecode",
    "/ASCII85Decode": "/ASCII85Decode",
    "/A85": "/ASCII85Decode",
    "/ASCIIHexDecode": "/ASCIIHexDecode",
    "/AHx": "/ASCIIHexDecode",
    "/RunLengthDecode": "/RunLengthDecode",
    "/RL": "/RunLengthDecode",
}
# Image codecs: PDFium decodes them for images only, and only as the last filter.
_IMAGE_CODECS = {"/DCTDecode", "/DCT", "/JPXDecode", "/JBIG2Decode", "/CCITTFaxDecode", "/CCF"}
_COMPONENTS = {"/DeviceGray": 1, "/CalGray": 1, "/DeviceRGB": 3, "/CalRGB": 3, "/Lab": 3, "/DeviceCMYK": 4}


def resolve(value: Any) -> Any:
    """The object value names; None when it is an indirect reference to nothing (cut off, freed)."""
    if isinstance(value, IndirectObject):
        try:
            value = value.get_object()
        except Exception:  # pypdf raises many types on a damaged object: all mean "not readable"
            return None
        if isinstance(value, NullObject):  # what pypdf gives for an object it could not read
            return None
    return value


def filter_names(stream: DictionaryObject) -> list[str]:
    filters = resolve(stream.raw_get("/Filter")) if "/Filter" in stream else None
    if filters is None:
        return []
    items = filters if isinstance(filters, ArrayObject) else [filters]
    return [str(resolve(item)) for item in items]


def unreadable_filter(stream: DictionaryObject, *, image: bool) -> str | None:
    """The first filter of stream that PDFium cannot decode here, or None."""
    names = filter_names(stream)
    for position, name in enumerate(names):
        last = position == len(names) - 1
        if name not in _GENERAL and not (image and last and name in _IMAGE_CODECS):
            return name
    return None


def stream_fault(stream: StreamObject, *, image: bool = False) -> str | None:
    """Why stream's data cannot be read whole, as a predicate ("is cut off"), or None when it can."""
    damage = stream_damage(stream, image=image)
    return None if damage is None else damage.fault


@dataclass(frozen=True, slots=True)
class StreamDamage:
    fault: str  # a predicate: "is cut off", "is not valid /FlateDecode data", ...
    partial: bool  # the data decodes up to a point: a reader draws what comes before it


def stream_damage(stream: StreamObject, *, image: bool = False) -> StreamDamage | None:
    """What is wrong with stream's data, and whether part of it can still be drawn; None when it is whole."""
    unreadable = unreadable_filter(stream, image=image)
    if unreadable is not None:
        return StreamDamage(f"is compressed with {unreadable}, which cannot be read", partial=False)
    try:
        decoding = _decode(stream, CHECK_LIMIT, keep=False)
    except _Fault as fault:
        return StreamDamage(str(fault), partial=False)
    if not decoding.whole:
        return StreamDamage(decoding.fault, partial=bool(decoding.length))
    names = filter_names(stream)
    if image and decoding.length is not None and not (names and names[-1] in _IMAGE_CODECS):
        expected = _image_bytes(stream)
        if expected is not None and decoding.length < expected:
            return StreamDamage("is cut off", partial=decoding.length > 0)
    return None


def decoded(stream: StreamObject, limit: int) -> bytes | None:
    """stream's data decoded, or None when it cannot be read or would be larger than limit."""
    if unreadable_filter(stream, image=False) is not None:
        return None
    try:
        decoding = _decode(stream, limit, keep=True)
    except _Fault:
        return None
    return decoding.data if decoding.whole else None


def image_components(image: StreamObject) -> int | None:
    """How many colour components image's data holds, read from the data itself (for a lost colour space)."""
    names = filter_names(image)
    codec = names[-1] if names and names[-1] in _IMAGE_CODECS else None
    if codec in ("/JBIG2Decode", "/CCITTFaxDecode", "/CCF"):
        return 1
    if codec in ("/DCTDecode", "/DCT"):
        return _jpeg_components(image)
    if codec is not None:
        return None
    try:
        length = _decode(image, CHECK_LIMIT, keep=False).length
        width, height = int(resolve(image.get("/Width", 0))), int(resolve(image.get("/Height", 0)))
        bits = int(resolve(image.get("/BitsPerComponent", 8)))
    except (_Fault, TypeError, ValueError):
        return None
    if length is None or width <= 0 or height <= 0 or bits <= 0:
        return None
    for components in (4, 3, 1):  # rows are whole bytes; PNG predictors add one byte per row
        row = (width * components * bits + 7) // 8
        if length in (row * height, (row + 1) * height):
            return components
    return None


def device_space(components: int | None) -> NameObject:
    return NameObject({1: "/DeviceGray", 4: "/DeviceCMYK"}.get(components or 3, "/DeviceRGB"))


def space_components(name: str) -> int | None:
    return _COMPONENTS.get(name)


class _Fault(Exception):
    """A predicate saying why a stream's data cannot be read."""


@dataclass(frozen=True, slots=True)
class _Decoding:
    data: bytes | None  # the decoded bytes, when kept and within the limit
    length: int | None  # how many there are; None past the limit
    whole: bool  # every filter reached the end of its data
    fault: str = "is cut off"  # when not whole: why it stops where it does


def _decode(stream: StreamObject, limit: int, *, keep: bool) -> _Decoding:
    """stream's data through its general filters (an image codec's input is left as it is).

    Flate output is only counted, not kept, when nothing follows it and keep is False: checking a
    large image costs time, not memory.
    """
    data: bytes = stream._data  # the raw bytes as stored in the file
    if not data:
        return _Decoding(data, 0, True)  # an empty stream draws nothing, whatever its filters
    names = filter_names(stream)
    parameters = _decode_parameters(stream, len(names))
    for position, (name, parameter) in enumerate(zip(names, parameters, strict=True)):
        if name in _IMAGE_CODECS:
            break
        last = position == len(names) - 1
        canonical = _GENERAL[name]
        if canonical == "/FlateDecode":
            inflated = _inflate(data, limit, keep=keep or not last)
            if not inflated.whole or inflated.length is None or inflated.data is None:
                return inflated
            data = inflated.data
        else:
            data = _pypdf_decode(canonical, data, parameter)
        if len(data) > limit:
            return _Decoding(None, None, True)
    return _Decoding(data, len(data), True)


def _decode_parameters(stream: StreamObject, count: int) -> list[Any]:
    if "/DecodeParms" not in stream:
        return [None] * count
    parameters = resolve(stream.raw_get("/DecodeParms"))
    if parameters is None:
        raise _Fault("has lost its decoding parameters")
    items = list(parameters) if isinstance(parameters, ArrayObject) else [parameters]
    resolved = [resolve(item) for item in items]
    if any(item is None for item, raw in zip(resolved, items, strict=True) if raw is not None):
        raise _Fault("has lost its decoding parameters")
    return (resolved + [None] * count)[:count]


def _inflate(data: bytes, limit: int, *, keep: bool) -> _Decoding:
    """Inflate zlib (or bare deflate) data a step at a time, without needing its checksum."""
    header_ok = len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
    pending = data[2:] if header_ok else data
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate: the final block ends it
    pieces: list[bytes] = []
    length = 0
    try:
        while not inflater.eof:
            piece = inflater.decompress(pending, _INFLATE_STEP)
            pending = inflater.unconsumed_tail
            if not piece and not pending:
                break  # all input used and nothing more comes out: the data stops before its end
            length += len(piece)
            if length > limit:
                return _Decoding(None, None, True)
            if keep:
                pieces.append(piece)
    except zlib.error:
        if not length:
            raise _Fault("is not valid /FlateDecode data") from None
        return _Decoding(b"".join(pieces) if keep else None, length, False, "is corrupt part way")
    return _Decoding(b"".join(pieces) if keep else None, length, inflater.eof)


def _pypdf_decode(name: str, data: bytes, parameter: Any) -> bytes:
    from pypdf import filters

    decoders = {
        "/LZWDecode": filters.LZWDecode,
        "/ASCII85Decode": filters.ASCII85Decode,
        "/ASCIIHexDecode": filters.ASCIIHexDecode,
        "/RunLengthDecode": filters.RunLengthDecode,
    }
    try:
        decoder: Any = decoders[name]
        return bytes(decoder.decode(data, parameter if isinstance(parameter, DictionaryObject) else None))
    except Exception:  # the decoders raise ValueError, PdfStreamError, LimitReachedError, ...
        raise _Fault(f"is not valid {name} data") from None


def _image_bytes(image: StreamObject) -> int | None:
    """Bytes an uncompressed image's rows need, or None when its size or depth is unreadable."""
    try:
        width, height = int(resolve(image.get("/Width", 0))), int(resolve(image.get("/Height", 0)))
        bits = int(resolve(image.get("/BitsPerComponent", 1 if image.get("/ImageMask") else 8)))
    except (TypeError, ValueError):
        return None
    if image.get("/ImageMask"):
        components: int | None = 1
    else:
        space = resolve(image.raw_get("/ColorSpace")) if "/ColorSpace" in image else None
        components = space_components(str(space)) if isinstance(space, NameObject) else None
    if components is None or width <= 0 or height <= 0 or bits <= 0:
        return None
    return (width * components * bits + 7) // 8 * height


def _jpeg_components(image: StreamObject) -> int | None:
    """The component count in a JPEG's start-of-frame header."""
    data: bytes = image._data
    position = 2
    while position + 9 < len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        length = data[position + 2] << 8 | data[position + 3]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return data[position + 9]
        position += 2 + length
    return None
