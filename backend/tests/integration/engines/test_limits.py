"""Resource limits in the OCR processes: a decompression bomb is a failed page (resource_limit)
before PDFium decodes it, a MemoryError on a page is resource_limit too, and a process that dies
(PDFium aborts when an allocation fails) costs its own task only: the pool replaces it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.core.errors import ResourceLimitError
from app.engines._limits import Limits
from app.engines.errors import OcrProcessDiedError
from app.engines.pool import make_ocr_pool, recognize_in_process, stop_ocr_pool
from app.pdf.samples import make_born_digital_pdf
from tests.bombs import (
    appearance_bomb_pdf,
    big_page_pdf,
    chained_filter_bomb_pdf,
    content_bomb_pdf,
    deep_form_bomb_pdf,
    deflated_zeros,
    die_after,
    form_fan_out_pdf,
    image_bomb_pdf,
    jpx_size_bomb_pdf,
    own_pid,
    pid_after,
    process_memory_mib,
    resource_bomb_pdf,
    self_drawing_form_pdf,
    unbalanced_marks_pdf,
)
from tests.integration.engines.conftest import Sample
from tests.pdf_factories import between_text_pages

MIB = 1 << 20


def test_deflated_zeros_inflate_to_what_they_say() -> None:
    import zlib

    assert zlib.decompress(deflated_zeros(8 * MIB)) == bytes(8 * MIB)
    assert len(deflated_zeros(1 << 30)) < 1_100_000  # 1 GiB from about 1 MB


@pytest.mark.timeout(300)
def test_bombs_are_failed_pages_with_resource_limit_before_they_are_decoded(
    tmp_path: Path, scan_2p: Sample
) -> None:
    bombs = {
        "content": content_bomb_pdf(tmp_path / "content.pdf", 3 << 30),  # 3 GiB: 4.1 GB RSS unlimited
        "image": image_bomb_pdf(tmp_path / "image.pdf"),  # 60,000 x 60,000 gray: 3.6 GB decoded
    }
    pool = make_ocr_pool(1, Limits(page_decoded_bytes=512 * MIB, address_space_bytes=2048 * MIB))
    try:
        pid = pool.submit(own_pid).result(timeout=60)
        for name, path in bombs.items():
            for engine in ("tesseract", "auto", "text-layer"):
                future = pool.submit(recognize_in_process, engine, path.read_bytes(), 1)
                (page,), _ = future.result(timeout=120)
                assert page.error is not None, (name, engine)
                assert page.error.code == "resource_limit", name
                assert "page 1 decodes to more than 512 MiB" in page.error.message
                assert page.text == ""
        # The same process, never near the bombs' size, goes on with a real scan.
        assert pool.submit(own_pid).result(timeout=60) == pid
        assert pool.submit(process_memory_mib).result(timeout=60)["VmHWM"] < 300
        pages, _ = pool.submit(recognize_in_process, "tesseract", scan_2p.data, 1).result(timeout=120)
        assert [p.page_number for p in pages] == [1, 2]
        assert all(p.text for p in pages)
        assert pool.replaced == 0
    finally:
        stop_ocr_pool(pool)


@pytest.mark.timeout(300)
def test_bombs_behind_filter_chains_deep_forms_appearances_and_codestreams_are_measured(
    tmp_path: Path, scan_2p: Sample
) -> None:
    """What the walk did not count went to PDFium, which decoded it up to the process's memory
    limit (2 GB each): a content deflated twice, or in ASCII85 then deflated; a bomb in the 24th
    form down; one in an annotation's appearance; a JPEG 2000 image whose dictionary says 100 x 100
    and whose codestream says 20,000 x 20,000."""
    inflated = 256 * MIB
    bombs = {
        "flate twice": chained_filter_bomb_pdf(tmp_path / "twice.pdf", inflated),
        "ascii85 flate": chained_filter_bomb_pdf(
            tmp_path / "a85.pdf", inflated, b"/ASCII85Decode /FlateDecode"
        ),
        "form 24 deep": deep_form_bomb_pdf(tmp_path / "deep.pdf", inflated),
        "appearance": appearance_bomb_pdf(tmp_path / "appearance.pdf", inflated),
        "jpx": jpx_size_bomb_pdf(tmp_path / "jpx.pdf"),
    }
    small = {  # the same shapes well under the limit: read as before (blank pages of zeros)
        "flate twice": chained_filter_bomb_pdf(tmp_path / "twice-small.pdf", 4 * MIB),
        "ascii85 flate": chained_filter_bomb_pdf(
            tmp_path / "a85-small.pdf", 4 * MIB, b"/ASCII85Decode /FlateDecode"
        ),
        "form 24 deep": deep_form_bomb_pdf(tmp_path / "deep-small.pdf", 4 * MIB),
        "appearance": appearance_bomb_pdf(tmp_path / "appearance-small.pdf", 4 * MIB),
        "jpx": jpx_size_bomb_pdf(tmp_path / "jpx-small.pdf", side=1000),
    }
    pool = make_ocr_pool(1, Limits(page_decoded_bytes=128 * MIB, address_space_bytes=2048 * MIB))
    try:
        for name, path in bombs.items():
            for engine in ("tesseract", "auto"):
                (page,), _ = pool.submit(recognize_in_process, engine, path.read_bytes(), 1).result(
                    timeout=120
                )
                assert page.error is not None, (name, engine)
                assert page.error.code == "resource_limit", (name, engine, page.error)
                assert "page 1 decodes to more than 128 MiB" in page.error.message
        for name, path in small.items():
            (page,), _ = pool.submit(recognize_in_process, "tesseract", path.read_bytes(), 1).result(
                timeout=120
            )
            assert page.error is None, (name, page.error)
        assert pool.submit(process_memory_mib).result(timeout=60)["VmHWM"] < 400
        pages, _ = pool.submit(recognize_in_process, "tesseract", scan_2p.data, 1).result(timeout=120)
        assert all(p.text for p in pages)
        assert pool.replaced == 0
    finally:
        stop_ocr_pool(pool)


RESOURCE_BOMBS = ("icc", "function", "shading", "tounicode", "cid font")


@pytest.mark.timeout(300)
def test_bombs_in_colour_spaces_functions_shadings_fonts_and_forms_drawn_over_and_over_are_measured(
    tmp_path: Path,
) -> None:
    """PDFium decodes a colour space's ICC profile, a tint transform, a mesh shading's data, a
    ToUnicode CMap and a Type 0 font's descendant font file whole (512 MiB of each took 1 GB), and
    builds a form again each time it is drawn: 4 KB of forms drawing the next one twice, 20 deep,
    took an OCR process to 2.8 GB, and 1 KB of a form drawing itself twice to its limit; 20 KB of
    marked content begun 20,000 times and never ended killed it too. Each is now a failed page
    before PDFium loads it; the same shapes at a small size are read."""
    inflated = 256 * MIB
    bombs = {kind: resource_bomb_pdf(tmp_path / f"{kind}.pdf", kind, inflated) for kind in RESOURCE_BOMBS}
    bombs["fan-out"] = form_fan_out_pdf(tmp_path / "fan-out.pdf", levels=20, times=2)
    bombs["self"] = self_drawing_form_pdf(tmp_path / "self.pdf", times=2)
    bombs["marks"] = unbalanced_marks_pdf(tmp_path / "marks.pdf", 20_000)
    small = {
        kind: resource_bomb_pdf(tmp_path / f"{kind}-small.pdf", kind, 4 * MIB) for kind in RESOURCE_BOMBS
    }
    small["fan-out"] = form_fan_out_pdf(tmp_path / "fan-out-small.pdf", levels=6, times=2)
    small["self"] = self_drawing_form_pdf(tmp_path / "self-small.pdf", times=1)  # PDFium stops it
    small["marks"] = unbalanced_marks_pdf(tmp_path / "marks-small.pdf", 100)
    pool = make_ocr_pool(1, Limits(page_decoded_bytes=128 * MIB, address_space_bytes=2048 * MIB))
    try:
        for name, path in bombs.items():
            (page,), _ = pool.submit(recognize_in_process, "text-layer", path.read_bytes(), 1).result(
                timeout=120
            )
            assert page.error is not None, name
            assert page.error.code == "resource_limit", (name, page.error)
            assert "page 1 decodes to more than 128 MiB" in page.error.message
        for name, path in small.items():
            (page,), _ = pool.submit(recognize_in_process, "text-layer", path.read_bytes(), 1).result(
                timeout=120
            )
            assert page.error is None, (name, page.error)
        assert pool.submit(process_memory_mib).result(timeout=60)["VmHWM"] < 400
        assert pool.replaced == 0
    finally:
        stop_ocr_pool(pool)


@pytest.mark.timeout(300)
def test_a_memory_error_fails_the_page_with_resource_limit_and_the_process_goes_on(tmp_path: Path) -> None:
    # 192 MiB of address space: a text page fits, a 140-megapixel render does not.
    big = big_page_pdf(tmp_path / "big.pdf")
    make_born_digital_pdf(tmp_path / "text.pdf", pages=2, seed=9)
    pool = make_ocr_pool(1, Limits(page_decoded_bytes=512 * MIB, address_space_bytes=192 * MIB))
    try:
        pid = pool.submit(own_pid).result(timeout=60)
        (page,), _ = pool.submit(recognize_in_process, "tesseract", big.read_bytes(), 7).result(timeout=120)
        assert page.page_number == 7
        assert page.error is not None
        assert page.error.code == ResourceLimitError.code
        assert "page 7: the OCR process ran out of its memory of 192 MiB (OCR_PROCESS_MEMORY_MB)" in (
            page.error.message
        )
        pages, _ = pool.submit(
            recognize_in_process, "text-layer", (tmp_path / "text.pdf").read_bytes(), 1
        ).result(timeout=60)
        assert len(pages) == 2
        assert all(p.text for p in pages)
        assert pool.submit(own_pid).result(timeout=60) == pid
        assert pool.replaced == 0
    finally:
        stop_ocr_pool(pool)


@pytest.mark.timeout(300)
def test_a_process_that_dies_fails_only_its_own_task_and_the_pool_is_replaced(tmp_path: Path) -> None:
    # Without the page meter, PDFium meets the address-space limit while it inflates the content
    # stream, and aborts the process (it does not raise). The task beside it is run again.
    bomb = content_bomb_pdf(tmp_path / "content.pdf", 1 << 30)
    make_born_digital_pdf(tmp_path / "text.pdf", pages=2, seed=9)
    pool = make_ocr_pool(2, Limits(page_decoded_bytes=None, address_space_bytes=768 * MIB))
    try:
        innocent = pool.submit(time.sleep, 4)  # busy in the other process when the bomb goes off
        doomed = pool.submit(recognize_in_process, "tesseract", bomb.read_bytes(), 1)
        with pytest.raises(OcrProcessDiedError) as raised:
            doomed.result(timeout=120)
        assert raised.value.code == "ocr_process_died"
        assert raised.value.retryable
        assert "the OCR process running this chunk died" in str(raised.value)
        assert innocent.result(timeout=120) is None  # run again on the new processes
        assert pool.replaced == 1
        pages, _ = pool.submit(
            recognize_in_process, "text-layer", (tmp_path / "text.pdf").read_bytes(), 1
        ).result(timeout=60)
        assert len(pages) == 2
        assert not any(pool._running.iterdir())  # no task is left marked as running
    finally:
        stop_ocr_pool(pool)


@pytest.mark.timeout(120)
def test_a_process_that_dies_again_and_again_leaves_the_task_beside_it_running() -> None:
    """Each OCR process has an executor of its own: one that dies ends its own task alone. With
    one executor for both, every death killed the process beside it too and its task began again
    (another user's chunk, restarted by a stream of hostile pages until its attempts were spent).
    And a death is seen when it happens, not when the task beside it ends."""
    pool = make_ocr_pool(2, Limits())
    try:
        innocent = pool.submit(pid_after, 3)
        deadline = time.monotonic() + 30
        while not pool._current_processes():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        (first,) = pool._current_processes()
        for _ in range(4):  # four deaths in the other process while it sleeps
            with pytest.raises(OcrProcessDiedError):
                pool.submit(die_after, 0.3).result(timeout=60)
            assert not innocent.done()  # seen at once, while the task beside it still ran
        assert innocent.result(timeout=60) == first  # run once, in the process it began in
        assert pool.replaced == 4
    finally:
        stop_ocr_pool(pool)


@pytest.mark.timeout(300)
def test_the_pool_names_the_page_a_dead_process_was_on_and_a_rerun_skips_it(tmp_path: Path) -> None:
    # Text, a content bomb PDFium aborts on (no page meter, 768 MiB of address space), text.
    between_text_pages(tmp_path / "chunk.pdf", content_bomb_pdf(tmp_path / "bomb.pdf", 1 << 30))
    chunk = (tmp_path / "chunk.pdf").read_bytes()
    pool = make_ocr_pool(1, Limits(page_decoded_bytes=None, address_space_bytes=768 * MIB))
    try:
        with pytest.raises(OcrProcessDiedError) as raised:
            pool.submit(recognize_in_process, "text-layer", chunk, 11).result(timeout=120)
        assert raised.value.context["page"] == 12  # the chunk's second page, numbered in the document
        assert "died on page 12" in str(raised.value)

        lost = {12: ("ocr_process_died", str(raised.value))}
        pages, _ = pool.submit(recognize_in_process, "text-layer", chunk, 11, lost=lost).result(timeout=120)
        assert [p.page_number for p in pages] == [11, 12, 13]
        assert all(len(p.text) > 100 for p in (pages[0], pages[2]))
        assert pages[1].error is not None
        assert (pages[1].error.code, pages[1].error.message) == lost[12]
        assert pool.replaced == 1  # the rerun did not touch the bomb
    finally:
        stop_ocr_pool(pool)
