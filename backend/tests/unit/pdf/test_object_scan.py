"""scan_objects: whether a file names optional content, in clear or in its object streams, and
whether its object streams are a decompression bomb."""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path

import pikepdf
import pytest

from app.pdf import object_scan
from app.pdf.errors import ObjectsTooLargeError
from app.pdf.object_scan import LAYER_MARK, may_hide_layers
from app.pdf.samples import make_born_digital_pdf
from tests.layered_pdfs import LayeredPdf, hidden, line

WINDOW = object_scan._WINDOW
BACKEND = Path(__file__).resolve().parents[3]


def _layered(path: Path) -> Path:
    doc = LayeredPdf()
    doc.page(
        line(700, "Shown") + hidden("off", line(650, "Hidden")),
        properties={"off": doc.group("Off", on=False)},
    )
    return doc.save(path)


def _compressed(source: Path, target: Path) -> Path:
    """source rewritten with its objects (the catalog's too) in object streams."""
    subprocess.run(["qpdf", "--object-streams=generate", str(source), str(target)], check=True)
    return target


def test_a_catalog_naming_layers_is_found_in_clear_and_in_an_object_stream(tmp_path: Path) -> None:
    plain = _layered(tmp_path / "layered.pdf")
    compressed = _compressed(plain, tmp_path / "compressed.pdf")
    assert LAYER_MARK not in compressed.read_bytes()  # only inside an object stream

    assert may_hide_layers(plain)
    assert may_hide_layers(compressed)


def test_a_file_without_layers_is_not_opened(tmp_path: Path) -> None:
    with pikepdf.new() as pdf:
        pdf.add_blank_page()
        pdf.save(tmp_path / "plain.pdf")
    compressed = _compressed(tmp_path / "plain.pdf", tmp_path / "compressed.pdf")
    assert b"/ObjStm" in compressed.read_bytes()

    assert not may_hide_layers(tmp_path / "plain.pdf")
    assert not may_hide_layers(compressed)


@pytest.mark.parametrize("cut", range(1, len(LAYER_MARK)))
def test_a_mark_cut_by_a_window_end_is_found(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "cut.pdf"
    path.write_bytes(b"%PDF-1.7\n" + b"x" * (WINDOW - 9 - cut) + LAYER_MARK + b"y" * 100)
    assert may_hide_layers(path)


def _object_stream(data: bytes, filter_name: bytes = b"/FlateDecode") -> bytes:
    return (
        b"5 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter %s /Length %d >>\nstream\r\n%s\nendstream\nendobj\n"
        % (
            filter_name,
            len(data),
            data,
        )
    )


def test_an_object_stream_that_is_not_flate_may_hide_layers(tmp_path: Path) -> None:
    """What cannot be inflated here is left to pikepdf, which reads the catalog."""
    other = tmp_path / "other.pdf"
    other.write_bytes(b"%PDF-1.7\n" + _object_stream(b"89ab<~garbage~>", b"/ASCII85Decode"))
    small = tmp_path / "small.pdf"
    small.write_bytes(b"%PDF-1.7\n" + _object_stream(zlib.compress(b"1 0 << /Type /Catalog >>")) * 3)

    assert may_hide_layers(other)
    assert not may_hide_layers(small)


@pytest.mark.parametrize(
    ("streams", "each"),
    [(1, object_scan.MAX_OBJECT_STREAM_BYTES + 1), (5, object_scan.MAX_OBJECT_STREAMS_BYTES // 5 + 1)],
    ids=["one", "all"],
)
def test_object_streams_that_decompress_past_the_limits_are_refused(
    tmp_path: Path, streams: int, each: int
) -> None:
    """A 1 MB file whose catalog sat in an object stream of 1 GiB took PDFium and pikepdf 2 GB
    each to open, in the API's planning. Refused before either opens it."""
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(b"%PDF-1.7\n" + _object_stream(zlib.compress(b" " * each, 9)) * streams)

    with pytest.raises(ObjectsTooLargeError, match="decompression bomb"):
        object_scan.scan_objects(bomb)


def test_object_stream_data_is_read_once_however_the_marks_lie(tmp_path: Path) -> None:
    """Stored deflate blocks may hold anything, the next object stream's dictionary included, and
    empty ones inflate to nothing: from each of 2,000 marks the data ran on, one valid stream, to
    a tail that never ends, and a 100 MB tail was read 2,000 times (778 s). Each object stream is
    read up to the next mark: the file's bytes are read about twice (the mark scan, then this),
    counted by the kernel (rchar)."""
    path = tmp_path / "marks.pdf"
    piece = b"<< /Type /ObjStm >>\nstream\n\x78\x01"
    stored = b"\x00" + len(piece).to_bytes(2, "little") + (len(piece) ^ 0xFFFF).to_bytes(2, "little")
    with path.open("wb") as out:
        out.write(b"%PDF-1.7\n" + piece)
        for _ in range(2_000):
            out.write(stored + piece)  # the next dictionary, inside a stored block of this stream
        out.write(b"\x00\x00\x00\xff\xff" * 2_000_000)  # 10 MB of empty blocks, never a last one
    code = (
        "import sys; from pathlib import Path; from app.pdf.object_scan import scan_objects; "
        "print(scan_objects(Path(sys.argv[1])).may_hide_layers); "
        "print(next(l for l in open('/proc/self/io') if l.startswith('rchar')).split()[1])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        cwd=BACKEND,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found, read = done.stdout.split()
    assert found == "False"
    assert int(read) < 3 * path.stat().st_size + 50_000_000  # the interpreter's own start reads some


def test_an_unreadable_file_is_left_to_pikepdf(tmp_path: Path) -> None:
    assert may_hide_layers(tmp_path / "missing.pdf")
    assert may_hide_layers(tmp_path)  # a directory


@pytest.mark.parametrize("object_streams", [False, True], ids=["in-clear", "in-object-streams"])
def test_the_objects_a_file_holds_are_counted_as_pikepdf_counts_them(
    tmp_path: Path, object_streams: bool
) -> None:
    texts = tmp_path / "born.pdf"
    make_born_digital_pdf(texts, pages=40, seed=2)
    path = _compressed(texts, tmp_path / "compressed.pdf") if object_streams else texts
    with pikepdf.open(path) as pdf:
        expected = len(pdf.objects)  # the object streams and the cross-reference stream among them

    assert object_scan.scan_objects(path).objects == expected


def test_a_file_of_more_objects_than_the_limit_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    """2,000,001 one-byte objects in clear (a 60 MB file): PDFium took 187 MB to open 2,000,000 of
    them, and 1 GB to cut a page that reaches them all."""
    count = object_scan.MAX_OBJECTS + 1
    body = bytearray(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
    body += b"".join(b"%d 0 obj\n1\nendobj\n" % number for number in range(2, count + 1))
    path = tmp_path / "many.pdf"
    path.write_bytes(bytes(body))
    fewer = tmp_path / "fewer.pdf"
    fewer.write_bytes(bytes(body[: body.rfind(b"%d 0 obj" % count)]))

    with pytest.raises(ObjectsTooLargeError, match="2,000,000 objects"):
        object_scan.scan_objects(path)
    assert object_scan.scan_objects(fewer).objects == object_scan.MAX_OBJECTS


def test_object_streams_that_claim_more_objects_than_the_limit_are_refused(tmp_path: Path) -> None:
    claim = b"<< /Type /ObjStm /N %d /First 4 /Filter /FlateDecode /Length %d >>"
    data = zlib.compress(b"1 0 2")
    path = tmp_path / "claims.pdf"
    path.write_bytes(
        b"%PDF-1.7\n5 0 obj\n"
        + claim % (object_scan.MAX_OBJECTS, len(data))
        + b"\nstream\n"
        + data
        + b"\nendstream\nendobj\n"
    )

    with pytest.raises(ObjectsTooLargeError, match="2,000,000 objects"):
        object_scan.scan_objects(path)  # the stream's own object, and the 2,000,000 it says it holds
