"""The page check of a damaged file: every reference a page draws is followed, each lost one gets a
substitute where a sane one exists, and only a page whose drawing cannot be recovered is lost."""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass

import pytest
from pypdf import PdfReader
from pypdf.generic import DictionaryObject

from app.pdf.page_check import DrawingCheck, PageVerdict
from app.pdf.page_tree import Locator, PageSlot, page_slots
from app.pdf.streams import resolve
from tests.corpus.pdf_objects import classic_pdf, stream_object

CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"
HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
TEXT = stream_object(b"", b"BT /F1 12 Tf 72 700 Td (Plain text) Tj ET", compress=True)
DRAW_IMAGE = stream_object(b"", b"q 100 0 0 100 0 0 cm /Im0 Do Q", compress=True)


def rgb_image(extra: bytes, side: int = 8, components: int = 3) -> bytes:
    header = b"/Type /XObject /Subtype /Image /Width %d /Height %d /BitsPerComponent 8 " % (side, side)
    return stream_object(header + extra, bytes(range(side * side * components)), compress=True)


def page(resources: bytes, contents: bytes = b"/Contents 4 0 R", extra: bytes = b"") -> bytes:
    return b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << %s >> %s %s >>" % (
        resources,
        contents,
        extra,
    )


@dataclass
class Checked:
    verdicts: list[PageVerdict]
    slots: list[PageSlot]

    def page(self, number: int = 1) -> DictionaryObject:
        found = self.slots[number - 1].page
        assert found is not None
        return found

    def resource(self, kind: str, name: str, number: int = 1) -> object:
        resources = resolve(self.page(number).raw_get("/Resources"))
        return resolve(resolve(resources.raw_get(kind)).raw_get(name))


def check(objects: dict[int, bytes], kids: int = 1, *, truncated: bool = False) -> Checked:
    objects = {1: CATALOG, **objects}
    objects.setdefault(
        2,
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (3 + 2 * k) for k in range(kids)), kids),
    )
    data, _ = classic_pdf(objects)
    reader = PdfReader(io.BytesIO(data), strict=False)
    locator = Locator(reader, data, truncated=truncated)
    slots = page_slots(reader, locator)
    drawing = DrawingCheck(locator.missing)
    verdicts = [drawing.page(s.page) if s.page is not None else PageVerdict(s.reason, ()) for s in slots]
    drawing.apply_substitutes()
    return Checked(verdicts, slots)


# -- what loses a page ---------------------------------------------------------------------------


def test_a_lost_content_stream_loses_the_page() -> None:
    checked = check({3: page(b"/Font << /F1 5 0 R >>"), 5: HELVETICA}, truncated=True)
    assert checked.verdicts == [PageVerdict("the page's content stream is cut off", ())]


def test_image_data_that_is_not_there_loses_the_page_and_data_cut_part_way_does_not() -> None:
    header = b"/Type /XObject /Subtype /Image /Width 64 /Height 64 /BitsPerComponent 8 /ColorSpace /DeviceRGB"
    pixels = zlib.compress(bytes(range(256)) * 48)
    garbage = check(
        {
            3: page(b"/XObject << /Im0 5 0 R >>"),
            4: DRAW_IMAGE,
            5: stream_object(header + b" /Filter /FlateDecode", b"\x78\x9c\x07" + pixels[3:], compress=False),
        }
    )
    assert garbage.verdicts == [PageVerdict("the data of image /Im0 is not valid /FlateDecode data", ())]
    cut = stream_object(header + b" /Filter /FlateDecode", pixels[: len(pixels) // 2], compress=False)
    half = check({3: page(b"/XObject << /Im0 5 0 R >>"), 4: DRAW_IMAGE, 5: cut})
    assert half.verdicts == [
        PageVerdict(None, ("the data of image /Im0 is cut off, drawn as far as it goes",))
    ]


def test_a_content_stream_cut_part_way_is_drawn_as_far_as_it_goes() -> None:
    content = zlib.compress(b"BT /F1 12 Tf 72 700 Td (Plain text) Tj ET\n" * 200)
    cut = stream_object(b"/Filter /FlateDecode", content[: len(content) // 2], compress=False)
    checked = check({3: page(b"/Font << /F1 5 0 R >>"), 4: cut, 5: HELVETICA})
    assert checked.verdicts == [
        PageVerdict(None, ("the page's content stream is cut off, drawn as far as it goes",))
    ]


def test_a_lost_image_or_form_loses_the_page() -> None:
    checked = check({3: page(b"/XObject << /Im0 5 0 R >>"), 4: DRAW_IMAGE})
    assert checked.verdicts == [PageVerdict("image or form /Im0 is missing", ())]


def test_a_lost_form_content_loses_the_page_but_a_lost_annotation_appearance_does_not() -> None:
    annotated = check(
        {
            3: page(b"/Font << /F1 5 0 R >>", extra=b"/Annots [6 0 R 7 0 R]"),
            4: TEXT,
            5: HELVETICA,
            6: b"<< /Type /Annot /Subtype /Stamp /Rect [0 0 50 50] /AP << /N 9 0 R >> >>",
            7: b"<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] >>",
        }
    )
    assert annotated.verdicts[0].lost is None
    assert annotated.verdicts[0].notes == ("annotation /Stamp: its appearance is lost, dropped",)
    assert len(resolve(annotated.page().raw_get("/Annots"))) == 1  # the link stays
    nested = check({3: page(b"/XObject << /Fm0 5 0 R >>"), 4: DRAW_IMAGE.replace(b"Im0", b"Fm0"), 5: b"junk"})
    assert nested.verdicts[0].lost is not None


def test_a_lost_palette_loses_the_page() -> None:
    image = rgb_image(b"/ColorSpace [/Indexed /DeviceRGB 255 6 0 R]", components=1)
    checked = check({3: page(b"/XObject << /Im0 5 0 R >>"), 4: DRAW_IMAGE, 5: image})
    assert checked.verdicts[0].lost == "the palette of image /Im0 is missing"


# -- what is substituted -------------------------------------------------------------------------


@pytest.mark.parametrize(("components", "space"), [(1, "/DeviceGray"), (3, "/DeviceRGB"), (4, "/DeviceCMYK")])
def test_a_lost_icc_profile_is_drawn_in_the_device_space_of_the_image(components: int, space: str) -> None:
    image = rgb_image(b"/ColorSpace [/ICCBased 6 0 R]", components=components)
    checked = check({3: page(b"/XObject << /Im0 5 0 R >>"), 4: DRAW_IMAGE, 5: image}, truncated=True)
    assert checked.verdicts == [
        PageVerdict(None, (f"image /Im0: ICC profile is cut off, drawn as {space[1:]}",))
    ]
    assert checked.resource("/XObject", "/Im0")["/ColorSpace"] == space  # type: ignore[index]


def test_an_unreadable_icc_profile_is_drawn_in_the_space_its_n_names() -> None:
    image = rgb_image(b"/ColorSpace 6 0 R", components=1)
    profile = b"<< /N 1 /Filter /FlateDecode /Length 5 >>\nstream\nxxxxx\nendstream"
    checked = check(
        {3: page(b"/XObject << /Im0 5 0 R >>"), 4: DRAW_IMAGE, 5: image, 6: b"[/ICCBased 7 0 R]", 7: profile}
    )
    assert checked.verdicts[0].notes == (
        "image /Im0: ICC profile is not valid /FlateDecode data, drawn as DeviceGray",
    )


def test_a_lost_colour_space_resource_is_drawn_in_rgb() -> None:
    checked = check({3: page(b"/ColorSpace << /CS0 [/ICCBased 6 0 R] /CS1 7 0 R >>"), 4: TEXT})
    assert checked.verdicts[0].notes == (
        "colour space /CS0: ICC profile is missing, drawn as DeviceRGB",
        "colour space /CS1: colour space is missing, drawn as DeviceRGB",
    )


def test_the_base_of_a_palette_gets_its_components_from_the_palette() -> None:
    palette = stream_object(b"", bytes(range(16 * 4)), compress=True)  # 16 CMYK entries
    image = rgb_image(b"/ColorSpace [/Indexed [/ICCBased 7 0 R] 15 6 0 R]", components=1)
    checked = check({3: page(b"/XObject << /Im0 5 0 R >>"), 4: DRAW_IMAGE, 5: image, 6: palette})
    assert checked.verdicts[0].notes == ("image /Im0: ICC profile is missing, drawn as DeviceCMYK",)


def test_a_lost_tint_transform_of_one_ink_is_a_grey_ramp_and_of_several_loses_the_page() -> None:
    one_ink = check({3: page(b"/ColorSpace << /Spot [/Separation /Gold /DeviceCMYK 6 0 R] >>"), 4: TEXT})
    assert one_ink.verdicts[0].notes == (
        "colour space /Spot: tint transform is missing, drawn as a grey ramp",
    )
    ramp = resolve(one_ink.resource("/ColorSpace", "/Spot")[3])  # type: ignore[index]
    assert ramp["/FunctionType"] == 2
    assert list(ramp["/C1"]) == [0, 0, 0, 1]
    inks = b"/ColorSpace << /Duo [/DeviceN [/Gold /Silver] /DeviceRGB 6 0 R] >>"
    assert (
        check({3: page(inks), 4: TEXT}).verdicts[0].lost
        == "the colour conversion of colour space /Duo is missing"
    )


def test_lost_font_parts_are_dropped_so_the_viewer_substitutes() -> None:
    font = b"<< /Type /Font /Subtype /TrueType /BaseFont /Vera /FontDescriptor 6 0 R /ToUnicode 7 0 R /Widths 8 0 R >>"
    descriptor = b"<< /Type /FontDescriptor /FontName /Vera /Flags 32 /FontFile2 9 0 R >>"
    checked = check({3: page(b"/Font << /F1 5 0 R >>"), 4: TEXT, 5: font, 6: descriptor}, truncated=True)
    assert checked.verdicts[0].lost is None
    assert set(checked.verdicts[0].notes) == {
        "font /F1: text map is cut off, dropped",
        "font /F1: embedded font is cut off, drawn with a substitute font",
        "font /F1: width table is cut off, dropped",
    }
    font_dict = checked.resource("/Font", "/F1")
    assert "/ToUnicode" not in font_dict  # type: ignore[operator]
    assert "/FontFile2" not in resolve(font_dict.raw_get("/FontDescriptor"))  # type: ignore[union-attr]


def test_a_lost_font_showing_plain_ascii_is_drawn_with_helvetica() -> None:
    checked = check({3: page(b"/Font << /F1 5 0 R >>"), 4: TEXT})
    assert checked.verdicts[0].notes == ("font /F1 is missing, drawn with Helvetica",)
    assert checked.resource("/Font", "/F1")["/BaseFont"] == "/Helvetica"  # type: ignore[index]


def test_a_lost_font_showing_two_byte_codes_loses_the_page() -> None:
    cid_text = stream_object(b"", b"BT /F1 12 Tf 72 700 Td <00240025> Tj ET", compress=True)
    assert check({3: page(b"/Font << /F1 5 0 R >>"), 4: cid_text}).verdicts[0].lost == "font /F1 is missing"
    composite = (
        b"<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /DescendantFonts [6 0 R] >>"
    )
    lost = check({3: page(b"/Font << /F1 5 0 R >>"), 4: cid_text, 5: composite}).verdicts[0].lost
    assert lost == "font /F1's descendant font is missing"


def test_a_lost_font_is_judged_by_each_page_that_shares_it() -> None:
    """Page 1 draws nothing with the lost /F1 it shares with page 2, whose two-byte codes Helvetica
    cannot show: page 1 is kept as it is, page 2 is lost, whatever the order they are checked in."""
    shared = b"/Font 7 0 R"
    objects = {
        3: page(shared),
        4: stream_object(b"", b"BT /F2 12 Tf 72 700 Td (Plain text) Tj ET", compress=True),
        5: page(shared).replace(b"/Contents 4 0 R", b"/Contents 6 0 R"),
        6: stream_object(b"", b"BT /F1 12 Tf 72 700 Td <00240025> Tj ET", compress=True),
        7: b"<< /F1 9 0 R /F2 8 0 R >>",
        8: HELVETICA,
    }
    checked = check(objects, kids=2)
    assert checked.verdicts == [PageVerdict(None, ()), PageVerdict("font /F1 is missing", ())]
    assert checked.resource("/Font", "/F1")["/BaseFont"] == "/Helvetica"  # type: ignore[index]


def test_a_lost_type3_glyph_is_dropped() -> None:
    type3 = (
        b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1 1] /FontMatrix [1 0 0 1 0 0] "
        b"/CharProcs << /a 6 0 R /b 7 0 R >> /Encoding << /Differences [97 /a /b] >> /FirstChar 97 /LastChar 98 "
        b"/Widths [1 1] >>"
    )
    glyph = stream_object(b"", b"1 0 0 0 1 1 d1 0 0 1 1 re f", compress=True)
    checked = check({3: page(b"/Font << /F1 5 0 R >>"), 4: TEXT, 5: type3, 6: glyph})
    assert checked.verdicts[0].notes == ("font /F1: 1 glyphs lost, not drawn",)


def test_decorations_that_are_lost_are_dropped() -> None:
    resources = (
        b"/ExtGState << /GS0 6 0 R /GS1 << /SMask << /S /Luminosity /G 7 0 R >> >> >> "
        b"/Pattern << /P0 8 0 R >> /Shading << /Sh0 << /ShadingType 2 /ColorSpace /DeviceRGB /Function 9 0 R "
        b"/Coords [0 0 1 1] >> >> /Properties << /MC0 10 0 R >>"
    )
    checked = check({3: page(resources), 4: TEXT})
    assert checked.verdicts[0].lost is None
    assert set(checked.verdicts[0].notes) == {
        "graphics state /GS0 is missing, ignored",
        "graphics state /GS1: soft mask lost, drawn without it",
        "pattern /P0 is missing, not drawn",
        "shading /Sh0's colour function is lost, not drawn",
        "properties /MC0 is missing, ignored",
    }
    assert checked.resource("/ExtGState", "/GS1")["/SMask"] == "/None"  # type: ignore[index]


def test_an_image_keeps_drawing_without_its_lost_soft_mask() -> None:
    image = rgb_image(b"/ColorSpace /DeviceRGB /SMask 6 0 R")
    checked = check({3: page(b"/XObject << /Im0 5 0 R >>"), 4: DRAW_IMAGE, 5: image})
    assert checked.verdicts[0].notes == ("image /Im0: soft mask is missing, drawn without it",)


# -- how the check walks -------------------------------------------------------------------------


def test_forms_are_followed_into_their_own_resources() -> None:
    form = stream_object(
        b"/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /Im0 6 0 R >> >>",
        b"/Im0 Do",
        compress=True,
    )
    image = rgb_image(b"/ColorSpace [/ICCBased 7 0 R]")
    checked = check(
        {3: page(b"/XObject << /Fm0 5 0 R >>"), 4: DRAW_IMAGE.replace(b"Im0", b"Fm0"), 5: form, 6: image}
    )
    assert checked.verdicts[0].notes == ("image /Im0: ICC profile is missing, drawn as DeviceRGB",)


def test_resources_inherited_from_the_page_tree_are_checked() -> None:
    tree = b"<< /Type /Pages /Kids [3 0 R] /Count 1 /Resources << /XObject << /Im0 5 0 R >> >> >>"
    bare_page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>"
    checked = check({2: tree, 3: bare_page, 4: DRAW_IMAGE, 5: rgb_image(b"/ColorSpace [/ICCBased 6 0 R]")})
    assert checked.verdicts[0].notes == ("image /Im0: ICC profile is missing, drawn as DeviceRGB",)


def test_shared_resources_are_reported_on_every_page_that_uses_them() -> None:
    shared = b"/XObject << /Im0 7 0 R >>"
    objects = {3: page(shared), 4: DRAW_IMAGE, 5: page(shared), 6: DRAW_IMAGE}
    objects[5] = objects[5].replace(b"/Contents 4 0 R", b"/Contents 6 0 R")
    checked = check({**objects, 7: rgb_image(b"/ColorSpace [/ICCBased 8 0 R]")}, kids=2)
    assert [v.notes for v in checked.verdicts] == [
        ("image /Im0: ICC profile is missing, drawn as DeviceRGB",)
    ] * 2


def test_a_form_that_draws_itself_ends() -> None:
    loop = stream_object(
        b"/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /Fm0 5 0 R >> >>",
        b"/Fm0 Do",
        compress=True,
    )
    checked = check({3: page(b"/XObject << /Fm0 5 0 R >>"), 4: DRAW_IMAGE.replace(b"Im0", b"Fm0"), 5: loop})
    assert checked.verdicts == [PageVerdict(None, ())]


def test_an_intact_page_has_nothing_to_say() -> None:
    image = rgb_image(b"/ColorSpace /DeviceRGB")
    content = stream_object(b"", b"/Im0 Do BT /F1 9 Tf (x) Tj ET", compress=True)
    checked = check(
        {3: page(b"/XObject << /Im0 5 0 R >> /Font << /F1 6 0 R >>"), 4: content, 5: image, 6: HELVETICA}
    )
    assert checked.verdicts == [PageVerdict(None, ())]
