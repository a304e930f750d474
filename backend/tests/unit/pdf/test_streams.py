"""Whether a stream's data can be read: named filters, cut-off and corrupt data, image rows."""

from __future__ import annotations

import io
import tracemalloc
import zlib

import pytest
from PIL import Image
from pypdf.generic import ArrayObject, NameObject, NumberObject, StreamObject

from app.pdf.streams import StreamDamage, image_components, stream_damage, stream_fault
from tests.bombs import deflated_zeros


def stream(data: bytes, *filters: str, **entries: int | str) -> StreamObject:
    obj = StreamObject()
    obj._data = data
    if filters:
        names = [NameObject(f) for f in filters]
        obj[NameObject("/Filter")] = names[0] if len(names) == 1 else ArrayObject(names)
    for key, value in entries.items():
        obj[NameObject(f"/{key}")] = NumberObject(value) if isinstance(value, int) else NameObject(value)
    return obj


CONTENT = b"BT /F1 12 Tf 72 720 Td (a line of text) Tj ET\n" * 50


def test_whole_flate_data_is_readable() -> None:
    assert stream_fault(stream(zlib.compress(CONTENT), "/FlateDecode")) is None


def test_flate_data_without_its_checksum_is_readable() -> None:
    """Some writers leave out zlib's checksum; every reader accepts that, so must the check."""
    assert stream_fault(stream(zlib.compress(CONTENT)[:-4], "/FlateDecode")) is None


def test_flate_data_cut_short_is_cut_off() -> None:
    """pypdf's lenient decoder returns what inflated before the cut: the check must not."""
    assert stream_fault(stream(zlib.compress(CONTENT)[:40], "/FlateDecode")) == "is cut off"
    assert stream_damage(stream(zlib.compress(CONTENT)[:40], "/FlateDecode")) == StreamDamage(
        "is cut off", True
    )


def test_flate_data_corrupt_part_way_is_partly_readable() -> None:
    data = zlib.compress(CONTENT)
    damage = stream_damage(stream(data[:40] + b"\xff" * 40, "/FlateDecode"))
    assert damage is not None
    assert damage.partial


def test_garbage_is_not_flate_data() -> None:
    # 0x07: the final block, of block type 3, which deflate does not have
    assert stream_fault(stream(b"\x78\x9c\x07" + bytes(60), "/FlateDecode")) == (
        "is not valid /FlateDecode data"
    )


def test_a_filter_chain_is_followed() -> None:
    data = zlib.compress(CONTENT).hex().encode() + b">"
    assert stream_fault(stream(data, "/ASCIIHexDecode", "/FlateDecode")) is None
    assert stream_fault(stream(data[:60], "/ASCIIHexDecode", "/FlateDecode")) == "is cut off"


@pytest.mark.parametrize("name", ["/LZMADecode", "/BrotliDecode", "/JBIG2Decode", "/DCTDecode"])
def test_a_filter_nobody_decodes_here_is_named(name: str) -> None:
    """Unknown names, and image codecs on a stream that is not an image."""
    assert (
        stream_fault(stream(zlib.compress(CONTENT), name))
        == f"is compressed with {name}, which cannot be read"
    )


def test_an_image_codec_is_left_to_pdfium_on_an_image() -> None:
    jpeg = io.BytesIO()
    Image.new("RGB", (20, 10), (200, 30, 30)).save(jpeg, "JPEG")
    image = stream(jpeg.getvalue(), "/DCTDecode", Width=20, Height=10, BitsPerComponent=8)
    assert stream_fault(image, image=True) is None
    assert image_components(image) == 3


def test_image_rows_must_be_whole() -> None:
    rows = bytes(30 * 20 * 3)
    args = {"Width": 30, "Height": 20, "BitsPerComponent": 8, "ColorSpace": "/DeviceRGB"}
    assert stream_fault(stream(zlib.compress(rows), "/FlateDecode", **args), image=True) is None
    half = zlib.compress(rows[: len(rows) // 2])  # a complete deflate stream of half the rows
    assert stream_fault(stream(half, "/FlateDecode", **args), image=True) == "is cut off"


@pytest.mark.parametrize(("mode", "components"), [("L", 1), ("RGB", 3), ("CMYK", 4)])
def test_an_image_says_its_components_when_its_colour_space_is_lost(mode: str, components: int) -> None:
    picture = Image.new(mode, (17, 9))
    raw = stream(zlib.compress(picture.tobytes()), "/FlateDecode", Width=17, Height=9, BitsPerComponent=8)
    assert image_components(raw) == components
    jpeg = io.BytesIO()
    picture.save(jpeg, "JPEG")
    assert image_components(stream(jpeg.getvalue(), "/DCTDecode", Width=17, Height=9)) == components


def test_an_empty_stream_is_readable() -> None:
    assert stream_fault(stream(b"", "/FlateDecode")) is None


def test_checking_a_large_image_costs_no_memory() -> None:
    """The check inflates the data to count it, a step at a time, and keeps none of it."""
    side = 8192  # 64 MiB of grey pixels, from a few hundred bytes
    image = stream(deflated_zeros(side * side), "/FlateDecode", Width=side, Height=side, BitsPerComponent=8)
    image[NameObject("/ColorSpace")] = NameObject("/DeviceGray")
    tracemalloc.start()
    try:
        assert stream_fault(image, image=True) is None
        assert image_components(image) == 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20
