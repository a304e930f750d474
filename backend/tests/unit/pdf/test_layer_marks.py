"""may_hide_layers: whether a file names optional content, in clear or in its object streams."""

from __future__ import annotations

import subprocess
import zlib
from pathlib import Path

import pikepdf
import pytest

from app.pdf import layer_marks
from app.pdf.layer_marks import LAYER_MARK, may_hide_layers
from tests.layered_pdfs import LayeredPdf, hidden, line

WINDOW = layer_marks._WINDOW


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


def test_object_streams_past_the_budget_or_not_flate_may_hide_layers(tmp_path: Path) -> None:
    """What cannot be read within bounds is left to pikepdf, which reads the catalog."""
    huge = tmp_path / "huge.pdf"
    huge.write_bytes(b"%PDF-1.7\n" + _object_stream(zlib.compress(b" " * (layer_marks.MAX_INFLATED + 1))))
    other = tmp_path / "other.pdf"
    other.write_bytes(b"%PDF-1.7\n" + _object_stream(b"89ab<~garbage~>", b"/ASCII85Decode"))
    small = tmp_path / "small.pdf"
    small.write_bytes(b"%PDF-1.7\n" + _object_stream(zlib.compress(b"1 0 << /Type /Catalog >>")) * 3)

    assert may_hide_layers(huge)
    assert may_hide_layers(other)
    assert not may_hide_layers(small)


def test_an_unreadable_file_is_left_to_pikepdf(tmp_path: Path) -> None:
    assert may_hide_layers(tmp_path / "missing.pdf")
    assert may_hide_layers(tmp_path)  # a directory
