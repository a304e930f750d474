"""Grafting a long document holds a page at a time, not the document.

The original is one scanned page repeated (pikepdf copies the page dictionary; the image is
shared), with a layer of 20 words over every page, in chunks of 50. Each graft runs in a
process of its own that reports its peak resident memory over what it held just before (the
peak is reset through /proc/self/clear_refs once the modules are loaded and a first graft
warmed them up).

What cannot be flat: reading any page of a PDF with QPDF means reading its cross-reference
index and its page tree's /Kids, about half a kilobyte a page for the file however little of
it is read. So the bound is on what a page costs beyond 200 pages, against what rewriting the
whole file with pikepdf costs for the same 2,000 pages.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pikepdf

from app.pdf.text_layer import render_text_layer
from tests.layer_pages import LINES, Setup, scanned_page

CHUNK = 50

_MEASURE = r"""
import json, sys, time
from pathlib import Path
from app.pdf.graft import graft_text_layers
from app.pdf._rewrite import graft_rewriting

def status(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])

original, layers, output, warm_original, warm_layer = (Path(arg) for arg in sys.argv[1:6])
chunk, how = int(sys.argv[6]), sys.argv[7]
graft_text_layers(warm_original, [(1, warm_layer)], output)  # modules, font and caches loaded
Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from here
before = status("VmRSS")
started = time.monotonic()
pairs = [(1 + i * chunk, path) for i, path in enumerate(sorted(layers.glob("*.pdf")))]
if how == "rewrite":
    pages, with_text, _ = graft_rewriting(original, pairs, output)
else:
    summary = graft_text_layers(original, pairs, output)
    pages, with_text = summary.pages, summary.pages_with_text
print(json.dumps({"extra_kib": status("VmHWM") - before, "seconds": time.monotonic() - started,
                  "pages": pages, "with_text": with_text}))
"""

SETUP = Setup("letter")


def repeated(page: bytes, count: int, path: Path) -> Path:
    with pikepdf.open(io.BytesIO(page)) as pdf:
        for _ in range(count - 1):
            pdf.pages.append(pdf.pages[0])
        pdf.save(path)
    return path


def measure(directory: Path, pages: int, how: str = "graft") -> dict[str, float]:
    """Graft a layer over each of `pages` pages in a fresh process: its figures."""
    original = directory / f"original-{pages}.pdf"
    layers = directory / f"layers-{pages}"
    if not original.exists():
        repeated((directory / "page.pdf").read_bytes(), pages, original)
        layers.mkdir()
        for index in range(pages // CHUNK):
            (layers / f"{index:05d}.pdf").symlink_to(directory / "layer.pdf")
    output = directory / f"out-{pages}-{how}.pdf"
    arguments = [original, layers, output, directory / "page.pdf", directory / "page-layer.pdf", CHUNK, how]
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *(str(argument) for argument in arguments)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
        check=True,
        timeout=300,
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    assert (figures["pages"], figures["with_text"]) == (pages, pages)
    checked = subprocess.run(["qpdf", "--check", str(output)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout
    return figures


def test_a_page_costs_little_beyond_what_reading_the_file_does(tmp_path: Path) -> None:
    scan = scanned_page(SETUP, lines=list(LINES[:2]))
    words = SETUP.page_text(scan.words)
    (tmp_path / "page.pdf").write_bytes(scan.pdf)
    (tmp_path / "page-layer.pdf").write_bytes(render_text_layer(scan.pdf, [words]))
    chunk = repeated(scan.pdf, CHUNK, tmp_path / "chunk.pdf").read_bytes()
    pages = [words.model_copy(update={"page_number": number}) for number in range(1, CHUNK + 1)]
    (tmp_path / "layer.pdf").write_bytes(render_text_layer(chunk, pages))

    small = measure(tmp_path, 200)
    large = measure(tmp_path, 2000)
    rewritten = measure(tmp_path, 2000, "rewrite")
    per_page = (large["extra_kib"] - small["extra_kib"]) / 1800
    print(
        f"\ngraft, peak memory over the process before it: 200 pages {small['extra_kib']} KiB "
        f"({small['seconds']:.2f} s), 2,000 pages {large['extra_kib']} KiB ({large['seconds']:.2f} s), "
        f"{per_page:.2f} KiB a page more; the whole file rewritten by pikepdf: {rewritten['extra_kib']} KiB "
        f"({rewritten['seconds']:.2f} s)"
    )
    assert per_page < 2.0
    assert large["extra_kib"] < rewritten["extra_kib"] / 4
