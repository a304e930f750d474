"""Objects added to a PDF as an incremental update (ISO 32000-1, 7.5.6).

The original file is copied as it is and the update follows it: new objects, new versions of
changed ones under their own numbers, a cross-reference section for those alone, and a trailer
whose /Prev points at the original's. Nothing of the original is read into memory beyond the
objects changed, so a file of any size is updated in memory that does not grow with it (the
cross-reference entries, 24 bytes an object, are the only thing kept).
"""

from __future__ import annotations

import hashlib
import itertools
import re
import zlib
from array import array
from collections.abc import Iterator, Sequence
from typing import BinaryIO

_STARTXREF = re.compile(rb"startxref\s+(\d+)\s+%%EOF", re.DOTALL)
_TAIL = 4096  # bytes at the end of a file searched for its last startxref


class NotAppendable(Exception):
    """The file's end is not one an update can follow (no startxref to point back at)."""


def last_xref(handle: BinaryIO) -> tuple[int, bool]:
    """(offset, is a stream) of the last cross-reference section of the file open in handle."""
    handle.seek(0, 2)
    size = handle.tell()
    handle.seek(max(0, size - _TAIL))
    found = list(_STARTXREF.finditer(handle.read()))
    if not found:
        raise NotAppendable("no startxref at the end of the file")
    offset = int(found[-1].group(1))
    if offset >= size:
        raise NotAppendable(f"startxref {offset} is past the end of the file")
    handle.seek(offset)
    return offset, not handle.read(32).lstrip().startswith(b"xref")


class Appender:
    """Writes an update after a file of `size` bytes already copied to out, numbering new
    objects from first_number (the original's /Size)."""

    def __init__(self, out: BinaryIO, size: int, first_number: int) -> None:
        self._out = out
        self._offset = size
        self._first = first_number
        self._new = array("q")  # offset of new object first_number + i; -1 until written
        # the original's objects written again: number, generation, offset
        self._changed = (array("q"), array("q"), array("q"))
        self._digest = hashlib.md5(usedforsecurity=False)
        self._put(b"\n")  # the original may end without an end of line after %%EOF

    def reserve(self) -> int:
        """A new object number, for an object written later."""
        self._new.append(-1)
        return self._first + len(self._new) - 1

    def write(self, number: int, body: bytes, generation: int = 0) -> None:
        """Object number (new, or the original's under its generation) with body as its value."""
        if number >= self._first:
            self._new[number - self._first] = self._offset
        else:
            for column, value in zip(self._changed, (number, generation, self._offset), strict=True):
                column.append(value)
        self._put(b"%d %d obj\n%s\nendobj\n" % (number, generation, body))

    def finish(self, trailer: bytes, file_id: bytes | None, prev: int, *, stream: bool) -> None:
        """The cross-reference section and trailer: trailer holds the original's /Root and /Info
        entries, file_id the first half of its /ID (kept, as an update must), prev its last
        section's offset; stream writes a cross-reference stream (the original has one)."""
        changed = self._digest.hexdigest().encode()
        ids = b"[ <%s> <%s> ]" % (file_id.hex().encode() if file_id else changed, changed)
        entries = b"%s /ID %s /Prev %d" % (trailer, ids, prev)
        if stream:
            self._xref_stream(entries)
        else:
            self._xref_table(entries)

    def _xref_table(self, entries: bytes) -> None:
        start = self._offset
        self._put(b"xref\n")
        for first, count, rows in self._runs():
            self._put(b"%d %d\n" % (first, count))
            for batch in _batches(rows):
                self._put(b"".join(b"%010d %05d n \n" % (offset, generation) for generation, offset in batch))
        size = self._first + len(self._new)
        self._put(b"trailer\n<< /Size %d %s >>\nstartxref\n%d\n%%%%EOF\n" % (size, entries, start))

    def _xref_stream(self, entries: bytes) -> None:
        number = self.reserve()
        start = self._offset
        self._new[number - self._first] = start
        width = max(4, (start.bit_length() + 7) // 8)
        index: list[bytes] = []
        packer = zlib.compressobj(9)
        data = []
        for first, count, rows in self._runs():
            index.append(b"%d %d" % (first, count))
            for batch in _batches(rows):
                row_bytes = (
                    b"\x01" + offset.to_bytes(width, "big") + generation.to_bytes(2, "big")
                    for generation, offset in batch
                )
                data.append(packer.compress(b"".join(row_bytes)))
        data.append(packer.flush())
        packed = b"".join(data)
        dictionary = (
            b"<< /Type /XRef /Size %d /Index [ %s ] /W [ 1 %d 2 ] %s /Filter /FlateDecode /Length %d >>"
            % (
                self._first + len(self._new),
                b" ".join(index),
                width,
                entries,
                len(packed),
            )
        )
        self._put(b"%d 0 obj\n%s\nstream\n%s\nendstream\nendobj\n" % (number, dictionary, packed))
        self._put(b"startxref\n%d\n%%%%EOF\n" % start)

    def _runs(self) -> Iterator[tuple[int, int, Iterator[tuple[int, int]]]]:
        """(first number, count, (generation, offset) of each) for every run of consecutive
        objects written: the original's changed ones by number, then the new ones."""
        numbers, generations, offsets = self._changed
        order: Sequence[int] = range(len(numbers))
        if any(later <= earlier for earlier, later in itertools.pairwise(numbers)):
            order = sorted(order, key=numbers.__getitem__)  # pages out of object order: rare
            # an object written twice (a page the tree names twice): the later one stands
            order = [i for i, j in itertools.pairwise([*order, -1]) if j < 0 or numbers[i] != numbers[j]]
        position = 0
        while position < len(order):
            end = position + 1
            while end < len(order) and numbers[order[end]] == numbers[order[end - 1]] + 1:
                end += 1
            run = order[position:end]
            yield numbers[run[0]], len(run), ((generations[i], offsets[i]) for i in run)
            position = end
        index = 0
        while index < len(self._new):
            if self._new[index] < 0:  # reserved and never written
                index += 1
                continue
            end = index
            while end < len(self._new) and self._new[end] >= 0:
                end += 1
            yield self._first + index, end - index, ((0, self._new[i]) for i in range(index, end))
            index = end

    def _put(self, data: bytes) -> None:
        self._out.write(data)
        self._digest.update(data)
        self._offset += len(data)


def _batches(rows: Iterator[tuple[int, int]], size: int = 1024) -> Iterator[list[tuple[int, int]]]:
    """rows a thousand or so at a time: the section is written without holding all of it."""
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
