"""An OCR'd page whose content is a Flate bomb is grafted without decoding it.

The graft parses a page's content to count its q and Q (_page_edit.graphics_depth) and to find
an earlier OCR's invisible text (prior_text). QPDF decodes a content whole to parse it: 512 MB
of spaces, 0.5 MB in the file, took the graft over 1 GB. Sizes are now counted as they inflate
(_content_size), and the graft measures its peak in a process of its own.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pikepdf
from pikepdf import Name

from app.pdf._content_size import content_exceeds
from app.pdf.text_layer import render_text_layer
from tests.layer_pages import Setup, scanned_page

BOMB = 512 << 20  # bytes of spaces

_GRAFT = r"""
import json, sys
from pathlib import Path
from app.pdf.graft import graft_text_layers

def peak_kib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

original, layer, output = (Path(arg) for arg in sys.argv[1:4])
before = peak_kib()
summary = graft_text_layers(original, [(1, layer)], output)
print(json.dumps({"extra_kib": peak_kib() - before, "with_text": summary.pages_with_text}))
"""


def bomb_stream(pdf: pikepdf.Pdf, size: int = BOMB) -> pikepdf.Stream:
    inflater = zlib.compressobj(9)
    packed = (
        b"".join(inflater.compress(b" " * (16 << 20)) for _ in range(size // (16 << 20))) + inflater.flush()
    )
    stream = pikepdf.Stream(pdf, packed)
    stream.Filter = Name.FlateDecode
    return stream


def test_a_content_bomb_under_a_scan_is_grafted_in_little_memory(tmp_path: Path) -> None:
    setup = Setup("letter")
    scan = scanned_page(setup, lines=["harbour accounts reviewed"])
    original = tmp_path / "bomb.pdf"
    with pikepdf.open(io.BytesIO(scan.pdf)) as pdf:
        pdf.pages[0].contents_add(bomb_stream(pdf))
        pdf.save(original)
    assert original.stat().st_size < 2 << 20
    layer = tmp_path / "layer.pdf"
    layer.write_bytes(render_text_layer(scan.pdf, [setup.page_text(scan.words)]))  # OCR saw the scan
    done = subprocess.run(
        [sys.executable, "-c", _GRAFT, str(original), str(layer), str(tmp_path / "out.pdf")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["with_text"] == 1
    assert figures["extra_kib"] < 100 * 1024, figures  # it took 1.0 GiB
    read = subprocess.run(["pdftotext", str(tmp_path / "out.pdf"), "-"], capture_output=True, check=True)
    assert read.stdout.decode().split() == ["harbour", "accounts", "reviewed"]


def test_content_sizes_are_counted_as_far_as_the_limit() -> None:
    with pikepdf.new() as pdf:
        plain = pdf.make_stream(b"q Q " * 100)
        packed = pikepdf.Stream(pdf, zlib.compress(b"q Q " * 100))
        packed.Filter = Name.FlateDecode
        listed = pikepdf.Stream(pdf, zlib.compress(b"q Q " * 100))
        listed.Filter = pikepdf.Array([Name.FlateDecode])
        hexed = pikepdf.Stream(pdf, (b"q Q " * 100).hex().encode() + b">")
        hexed.Filter = Name.ASCIIHexDecode
        for stream in (plain, packed, listed, hexed):
            assert not content_exceeds(stream, 400)
            assert content_exceeds(stream, 399)
        assert content_exceeds(pikepdf.Array([plain, packed]), 799)
        assert not content_exceeds(pikepdf.Array([plain, packed]), 800)
        assert content_exceeds(bomb_stream(pdf, 64 << 20), 1 << 20)
        assert not content_exceeds(None, 0)
