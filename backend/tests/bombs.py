"""PDFs that are small on disk and huge once decoded or slow to read, and page trees that repeat
one page.

Written by hand (no dependency): a few objects and a cross-reference table.
The deflate streams are made without compressing gigabytes: after a full
flush, zlib's output for a block of zeros no longer depends on what came
before, so one compressed block repeated N times inflates to N blocks of
zeros (the Adler-32 of n zeros is (n mod 65521) << 16 | 1).
"""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

_BLOCK = 1 << 20  # 1 MiB of zeros per repeated deflate segment


def deflated_zeros(size: int) -> bytes:
    """A zlib stream that inflates to `size` zero bytes (size a multiple of 1 MiB)."""
    if size % _BLOCK or size <= 0:
        raise ValueError("size must be a positive multiple of 1 MiB")
    zeros = bytes(_BLOCK)
    compressor = zlib.compressobj(9)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    segment = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.flush(zlib.Z_FINISH)[:-4]  # the final empty block, without its checksum
    adler = ((size % 65521) << 16) | 1
    return first + segment * (size // _BLOCK - 1) + tail + adler.to_bytes(4, "big")


def _write(path: Path, objects: list[bytes]) -> Path:
    """objects[i] is object i + 1; object 1 is the catalog."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def _stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def content_bomb_pdf(path: Path, inflated: int = 1 << 30) -> Path:
    """One letter page whose content stream (FlateDecode) inflates to `inflated` bytes of zeros
    (NUL is white space to a PDF parser: PDFium must decode all of it to find no operator)."""
    return _write(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            _stream(b"/Filter /FlateDecode", deflated_zeros(inflated)),
        ],
    )


def scattered_glyphs_pdf(path: Path, glyphs: int = 100_000) -> Path:
    """One letter page of `glyphs` letters, each placed by its own text matrix on a grid: small
    on disk (FlateDecode), and PDFium's text page takes time as the square of their number
    (40,000 took 7 s, 100,000 took 56 s on a 2-core machine)."""
    body = b"BT /F1 4 Tf\n" + b"".join(
        b"1 0 0 1 %d %d Tm (x) Tj\n" % (index % 600, index // 600 % 780) for index in range(glyphs)
    )
    return _write(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
            b" /Resources << /Font << /F1 5 0 R >> >> >>",
            _stream(b"/Filter /FlateDecode", zlib.compress(body + b"ET\n", 6)),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ],
    )


def reachable_objects_pdf(path: Path, objects: int) -> Path:
    """One blank page whose dictionary reaches `objects` one-byte objects through an array under
    a key no reader uses: PDFium opens the file holding every object, and copies all of them when
    it cuts the page (about 500 bytes each)."""
    first = 5
    return _write(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Junk 4 0 R >>",
            b"[" + b" ".join(b"%d 0 R" % (first + i) for i in range(objects)) + b"]",
            *[b"1"] * objects,
        ],
    )


def image_bomb_pdf(path: Path, side: int = 60_000) -> Path:
    """One letter page drawing a side x side DeviceGray image of zeros (side^2 bytes decoded)."""
    raw = side * side
    padded = -(-raw // _BLOCK) * _BLOCK  # extra zeros past the image's end are ignored by readers
    content = b"q 612 0 0 792 0 0 cm /Im0 Do Q"
    return _write(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>",
            _stream(b"", content),
            _stream(
                b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                b"/BitsPerComponent 8 /Filter /FlateDecode" % (side, side),
                deflated_zeros(padded),
            ),
        ],
    )


def repeated_page_pdf(path: Path, count: int) -> Path:
    """A page tree whose /Kids names one page object `count` times (/Count says so too):
    a few hundred kilobytes that every reader takes for `count` pages."""
    kids = b" ".join([b"3 0 R"] * count)
    return _write(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
            _stream(b"", b"BT /F1 12 Tf 72 720 Td (The same page again and again.) Tj ET"),
        ],
    )


def big_page_pdf(path: Path, side_pt: int = 2840) -> Path:
    """One square page of side_pt points with a small black square: 140 megapixels at 300 DPI
    (under the renderer's 160 MP cap), so rendering it needs about 140 MB at once."""
    return _write(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Contents 4 0 R >>" % (side_pt, side_pt),
            _stream(b"", b"0 0 0 rg 10 10 100 100 re f"),
        ],
    )


def process_memory_mib() -> dict[str, int]:
    """Run in an OCR process: its peak RSS (VmHWM) and peak address space (VmPeak), in MiB."""
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status if line.startswith(("VmHWM", "VmPeak")))
    return {name: int(value.split()[0]) // 1024 for name, value in fields.items()}


def own_pid() -> int:
    import os

    return os.getpid()


def pid_after(seconds: float) -> int:
    """Run in an OCR process: its pid, after `seconds`."""
    import os
    import time

    time.sleep(seconds)
    return os.getpid()


def die_after(seconds: float) -> None:
    """Run in an OCR process: end it, as PDFium's abort does, after `seconds`."""
    import os
    import time

    time.sleep(seconds)
    os._exit(134)


def _one_page(path: Path, page_extra: bytes, content: bytes, more: list[bytes]) -> Path:
    """One letter page (object 3) drawing content (object 4), with more objects from 5 on."""
    return _write(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] " + page_extra + b" /Contents 4 0 R >>",
            content,
            *more,
        ],
    )


def chained_filter_bomb_pdf(path: Path, inflated: int, filters: bytes = b"/FlateDecode /FlateDecode") -> Path:
    """A page whose content stream inflates to `inflated` zeros through a chain of filters: twice
    FlateDecode (the inner stream deflated again), or ASCII85Decode then FlateDecode."""
    data = deflated_zeros(inflated)
    if filters.count(b"/FlateDecode") == 2:
        data = zlib.compress(data, 9)
    if filters.startswith(b"/ASCII85Decode"):
        data = base64.a85encode(data) + b"~>"
    return _one_page(path, b"", _stream(b"/Filter [%s]" % filters, data), [])


def deep_form_bomb_pdf(path: Path, inflated: int, depth: int = 24) -> Path:
    """A page drawing a form that draws a form ... `depth` forms deep, the last one's content a
    FlateDecode bomb of `inflated` zeros."""
    forms = []
    for level in range(depth):
        number = 5 + level
        if level == depth - 1:
            body = _stream(
                b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Filter /FlateDecode",
                deflated_zeros(inflated),
            )
        else:
            body = _stream(
                b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /F %d 0 R >> >>"
                % (number + 1),
                b"/F Do",
            )
        forms.append(body)
    return _one_page(path, b"/Resources << /XObject << /F 5 0 R >> >>", _stream(b"", b"/F Do"), forms)


def appearance_bomb_pdf(path: Path, inflated: int) -> Path:
    """A page with nothing drawn but a square annotation whose appearance's content is a
    FlateDecode bomb of `inflated` zeros (renders draw annotations)."""
    return _one_page(
        path,
        b"/Annots [5 0 R]",
        _stream(b"", b""),
        [
            b"<< /Type /Annot /Subtype /Square /Rect [72 72 540 720] /AP << /N 6 0 R >> >>",
            _stream(
                b"/Type /XObject /Subtype /Form /BBox [0 0 468 648] /Filter /FlateDecode",
                deflated_zeros(inflated),
            ),
        ],
    )


def jpx_size_bomb_pdf(path: Path, side: int = 20_000) -> Path:
    """A page drawing a JPEG 2000 image whose dictionary says 100 x 100 and whose codestream's SIZ
    marker says side x side, three components (then nothing a decoder can use)."""
    siz = struct.pack(">HH4I4IH", 47, 0, side, side, 0, 0, side, side, 0, 0, 3) + b"\x07\x01\x01" * 3
    codestream = b"\xff\x4f\xff\x51" + siz + b"\xff\x52" + bytes(64)
    return _one_page(
        path,
        b"/Resources << /XObject << /Im 5 0 R >> >>",
        _stream(b"", b"q 612 0 0 792 0 0 cm /Im Do Q"),
        [
            _stream(
                b"/Type /XObject /Subtype /Image /Width 100 /Height 100 /BitsPerComponent 8 /Filter /JPXDecode",
                codestream,
            )
        ],
    )


def form_fan_out_pdf(path: Path, levels: int = 20, times: int = 2) -> Path:
    """A page drawing a form that draws the next form `times` times, `levels` deep, the last one a
    letter: a few kilobytes that make PDFium build times ** levels forms (2 ** 20: past 2 GB)."""
    forms = []
    for level in range(levels):
        number = 5 + level
        forms.append(
            _stream(
                b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /F %d 0 R >> >>"
                % (number + 1),
                b"q /F Do Q " * times,
            )
        )
    forms.append(
        _stream(
            b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 << /Type /Font "
            b"/Subtype /Type1 /BaseFont /Helvetica >> >> >>",
            b"BT /F1 12 Tf 72 720 Td (x) Tj ET",
        )
    )
    return _one_page(path, b"/Resources << /XObject << /F 5 0 R >> >>", _stream(b"", b"/F Do"), forms)


def self_drawing_form_pdf(path: Path, times: int = 2, pages: int = 1) -> Path:
    """Pages (one page object, named `pages` times) drawing a form that draws itself `times` times:
    under 1 KB that PDFium draws down to its own depth limit, times ** depth forms."""
    form = _stream(
        b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /S 4 0 R >> >>",
        b"q 0.5 0 0 0.5 0 0 cm /S Do Q " * times,
    )
    kids = b" ".join([b"3 0 R"] * pages)
    return _write(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /S 4 0 R >> >> "
            b"/Contents 5 0 R >>",
            form,
            _stream(b"", b"/S Do"),
        ],
    )


_TEXT = b"BT /F1 24 Tf 72 700 Td (Resources) Tj ET"
_HELVETICA = b"/Type /Font /Subtype /Type1 /BaseFont /Helvetica"


def resource_bomb_pdf(path: Path, kind: str, inflated: int) -> Path:
    """A page of a few words or a fill whose resources hold a FlateDecode stream of `inflated`
    zeros that PDFium decodes to draw it: kind "icc" (an ICCBased colour space's profile),
    "function" (a Separation colour's tint transform, a PostScript calculator function), "shading" (a free-form
    mesh shading's data), "tounicode" (the font's ToUnicode CMap) or "cid font" (a Type 0 font's
    descendant font's file)."""
    bomb = b"/Filter /FlateDecode"
    zeros = deflated_zeros(inflated)
    fill = b" 72 72 468 648 re f"
    if kind == "icc":
        return _one_page(
            path,
            b"/Resources << /ColorSpace << /CS0 [/ICCBased 5 0 R] >> >>",
            _stream(b"", b"/CS0 cs 0.2 0.4 0.6 sc" + fill),
            [_stream(b"/N 3 " + bomb, zeros)],
        )
    if kind == "function":
        return _one_page(
            path,
            b"/Resources << /ColorSpace << /CS0 [/Separation /Spot /DeviceGray 5 0 R] >> >>",
            _stream(b"", b"/CS0 cs 0.5 sc" + fill),
            [_stream(b"/FunctionType 4 /Domain [0 1] /Range [0 1] " + bomb, zeros)],
        )
    if kind == "shading":
        return _one_page(
            path,
            b"/Resources << /Shading << /Sh0 5 0 R >> >>",
            _stream(b"", b"/Sh0 sh"),
            [
                _stream(
                    b"/ShadingType 4 /ColorSpace /DeviceGray /BitsPerCoordinate 16 /BitsPerComponent 8 "
                    b"/BitsPerFlag 8 /Decode [0 612 0 792 0 1] " + bomb,
                    zeros,
                )
            ],
        )
    if kind == "tounicode":
        return _one_page(
            path,
            b"/Resources << /Font << /F1 5 0 R >> >>",
            _stream(b"", _TEXT),
            [b"<< " + _HELVETICA + b" /ToUnicode 6 0 R >>", _stream(bomb, zeros)],
        )
    if kind == "cid font":
        return _one_page(
            path,
            b"/Resources << /Font << /F1 5 0 R >> >>",
            _stream(b"", b"BT /F1 24 Tf 72 700 Td <00010002> Tj ET"),
            [
                b"<< /Type /Font /Subtype /Type0 /BaseFont /Bomb /Encoding /Identity-H "
                b"/DescendantFonts [6 0 R] >>",
                b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Bomb /CIDSystemInfo << /Registry (Adobe) "
                b"/Ordering (Identity) /Supplement 0 >> /FontDescriptor 7 0 R >>",
                b"<< /Type /FontDescriptor /FontName /Bomb /Flags 4 /FontBBox [0 0 1000 1000] /ItalicAngle 0 "
                b"/Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 8 0 R >>",
                _stream(bomb, zeros),
            ],
        )
    raise ValueError(kind)


def unbalanced_marks_pdf(path: Path, levels: int) -> Path:
    """A page of one line that begins marked content `levels` times and never ends it: 20 KB at
    20,000 levels, which PDFium took to 2 GB."""
    content = b"BT /F1 12 Tf 72 700 Td " + b"/P <<>> BDC " * levels + b"(Marked content) Tj ET"
    return _one_page(
        path,
        b"/Resources << /Font << /F1 << " + _HELVETICA + b" >> >> >>",
        _stream(b"", content),
        [],
    )
