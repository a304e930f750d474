"""How a page of the original changes to draw its layer: shared by both ways of grafting."""

from __future__ import annotations

from dataclasses import dataclass

import pikepdf
from pikepdf import Name

from app.pdf._content_size import content_exceeds
from app.pdf.errors import TextLayerError
from app.pdf.layer_file import LayerPage
from app.pdf.page_space import inherited, page_geometry

# QPDF decodes a content whole to parse it: a large map is counted, a Flate bomb is not.
MAX_COUNTED_BYTES = 64 << 20
_BOX_TOLERANCE = 0.01  # points: a layer page's media box is its page's, as written to 4 places


@dataclass(frozen=True, slots=True)
class PageEdit:
    """How one page changes: the Form XObject's name in its resources, and how many q open and
    Q close its original content so the content's graphics state ends before the layer's."""

    resources: pikepdf.Dictionary | None  # the page's (maybe inherited) resources, as they are
    name: Name
    opens: int
    closes: int

    @classmethod
    def of(cls, page: pikepdf.Dictionary) -> PageEdit:
        resources = inherited(page, Name.Resources)
        resources = resources if isinstance(resources, pikepdf.Dictionary) else None
        taken = resources.get(Name.XObject) if resources is not None else None
        name, suffix = Name("/OCRText"), 0
        while isinstance(taken, pikepdf.Dictionary) and name in taken:
            suffix += 1
            name = Name(f"/OCRText{suffix}")
        unmatched, depth = graphics_depth(page)
        return cls(resources, name, 1 + unmatched, 1 + unmatched + depth)

    def wrappers(self) -> tuple[bytes, bytes]:
        """The streams before and after the original content."""
        return b"q\n" * self.opens, b"Q\n" * self.closes + b"q %s Do Q\n" % self.name.unparse()


def graphics_depth(page: pikepdf.Dictionary) -> tuple[int, int]:
    """(Q without a q before them, q left open at the end) in the page's content; (0, 0) when it
    cannot be parsed or decodes to more than MAX_COUNTED_BYTES (then the content is closed in
    one q ... Q, which is right for most)."""
    unmatched = depth = 0
    try:
        if content_exceeds(page.get(Name.Contents), MAX_COUNTED_BYTES):
            return 0, 0
        instructions = pikepdf.parse_content_stream(page, "q Q")
    except pikepdf.PdfError:
        return 0, 0
    for instruction in instructions:
        if str(instruction.operator) == "q":
            depth += 1
        elif depth:
            depth -= 1
        else:
            unmatched += 1
    return unmatched, depth


def check_fits(layer_page: LayerPage, page: pikepdf.Dictionary, number: int) -> None:
    """A layer page is drawn in its page's user space as it is: their boxes and turn must agree."""
    geometry = page_geometry(page)
    if geometry.rotate != layer_page.geometry.rotate or any(
        abs(ours - theirs) > _BOX_TOLERANCE
        for ours, theirs in zip(geometry.media_box, layer_page.geometry.media_box, strict=True)
    ):
        raise TextLayerError(
            f"page {number}'s layer does not fit it: media box {layer_page.geometry.media_box} "
            f"turned {layer_page.geometry.rotate}, the page's {geometry.media_box} turned {geometry.rotate}"
        )
