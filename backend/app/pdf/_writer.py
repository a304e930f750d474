"""A small PDF written object by object, with a classic cross-reference table."""

from __future__ import annotations

from collections.abc import Sequence


def write_pdf(objects: Sequence[bytes], root: int, version: bytes = b"1.7") -> bytes:
    """The PDF whose objects are numbered 1.. in order, with object `root` as its catalog."""
    out = bytearray(b"%PDF-" + version + b"\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)
