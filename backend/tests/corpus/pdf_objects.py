"""PDF files written object by object, for fixtures whose damage must land on a chosen object.

classic_pdf writes numbered objects in a chosen order with a classic cross-reference table
(optionally early, as a linearized file has it); with_object_stream packs some objects into a
compressed object stream indexed by a cross-reference stream. The ICC profiles are the kind
scanners and cameras embed.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

from PIL import ImageCms


def stream_object(dictionary: bytes, data: bytes, *, compress: bool) -> bytes:
    if compress:
        data, dictionary = zlib.compress(data), dictionary + b" /Filter /FlateDecode"
    return b"<< %s /Length %d >>\nstream\n%s\nendstream" % (dictionary.strip(), len(data), data)


def srgb_profile() -> bytes:
    return bytes(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())


def grey_profile() -> bytes:
    """A minimal ICC v2 grey display profile (gamma 2.2, D50 white), as scanners embed one."""
    description = b"Grey 2.2\0"
    tags = [
        (
            b"desc",
            b"desc\0\0\0\0" + struct.pack(">I", len(description)) + description + bytes(4 + 4 + 2 + 1 + 67),
        ),
        (b"wtpt", b"XYZ \0\0\0\0" + struct.pack(">iii", 0xF6D6, 0x10000, 0xD32D)),
        (b"kTRC", b"curv\0\0\0\0" + struct.pack(">IH", 1, 0x0233) + b"\0\0"),
        (b"cprt", b"text\0\0\0\0no copyright\0\0\0\0"),
    ]
    offset = 128 + 4 + 12 * len(tags)
    table, body = struct.pack(">I", len(tags)), b""
    for signature, data in tags:
        table += signature + struct.pack(">II", offset + len(body), len(data))
        body += data + bytes(-len(data) % 4)
    size = offset + len(body)
    header = struct.pack(
        ">I4sI4s4s4s12s4s4sI4s4s8sI12s4s16s28s",
        size,
        b"none",
        0x02100000,
        b"mntr",
        b"GRAY",
        b"XYZ ",
        bytes(12),
        b"acsp",
        b"APPL",
        0,
        b"none",
        b"none",
        bytes(8),
        0,
        struct.pack(">iii", 0xF6D6, 0x10000, 0xD32D),
        b"none",
        bytes(16),
        bytes(28),
    )
    return header + table + body


def classic_pdf(
    objects: dict[int, bytes],
    order: list[int] | None = None,
    size: int | None = None,
    table_after: int | None = None,
) -> tuple[bytes, dict[int, int]]:
    """A PDF of objects (1 the catalog) written in order (by number if none), with a classic xref
    table that marks absent numbers free; returns it and each object's offset.

    table_after puts the table and trailer right after that object instead of at the end, as a
    linearized file puts its first page's: a reader that has lost the end of the file finds it there.
    """
    order = order or sorted(objects)
    size = size or max(objects) + 1
    table_length = len(_table({}, size))
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    xref = -1
    for number in order:
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
        if number == table_after:
            xref = len(out)
            out += bytes(table_length)  # filled in below, once every offset is known
    if xref < 0:
        xref = len(out)
        out += bytes(table_length)
    out[xref : xref + table_length] = _table(offsets, size)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out), offsets


def _table(offsets: dict[int, int], size: int) -> bytes:
    table = b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        table += b"%010d 00000 n \n" % offsets[number] if number in offsets else b"0000000000 00001 f \n"
    return table + b"trailer\n<< /Size %10d /Root 1 0 R >>\n" % size


def with_object_stream(
    plain: dict[int, bytes],
    packed: dict[int, bytes],
    filter_name: bytes,
    encode: Callable[[bytes], bytes] = zlib.compress,
) -> bytes:
    """plain objects written as they are, packed ones in one object stream whose data is encoded
    (Flate by default) but labelled filter_name; the cross-reference stream says where each is."""
    header, body = b"", b""
    for number, obj in packed.items():
        header += b"%d %d " % (number, len(body))
        body += obj + b"\n"
    stream_number = max(plain | packed) + 1
    xref_number = stream_number + 1
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number, obj in sorted(plain.items()):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    data = encode(header + body)
    offsets[stream_number] = len(out)
    out += (
        b"%d 0 obj\n<< /Type /ObjStm /N %d /First %d /Filter %s /Length %d >>\nstream\n%s\nendstream\nendobj\n"
        % (
            stream_number,
            len(packed),
            len(header),
            filter_name,
            len(data),
            data,
        )
    )
    offsets[xref_number] = len(out)
    rows = b"\x00\x00\x00\x00\x00\xff\xff"
    for number in range(1, xref_number + 1):
        if number in packed:
            rows += b"\x02" + stream_number.to_bytes(4, "big") + list(packed).index(number).to_bytes(2, "big")
        else:
            rows += b"\x01" + offsets[number].to_bytes(4, "big") + b"\x00\x00"
    out += (
        b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n%s\nendstream\nendobj\n"
        % (
            xref_number,
            xref_number + 1,
            len(rows),
            rows,
        )
    )
    out += b"startxref\n%d\n%%%%EOF\n" % offsets[xref_number]
    return bytes(out)
