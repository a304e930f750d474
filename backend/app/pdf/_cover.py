"""Where a page's content draws an opaque image over the whole page: what it drew before is hidden.

Scanning software of one kind ("image on text", as Acrobat Capture's searchable image wrote it)
draws its OCR text in an ordinary render mode and then the page's scan over it: the text is
hidden by the image, not by its mode. Such text is an earlier OCR's layer as much as text in
render mode 3 is (prior_text removes both from a page that gets ours).

An image covers the page when it is drawn at the top level of the page's content (not inside a
form), is opaque (an image XObject or inline image that is not a stencil mask and has no /SMask,
/Mask or /SMaskInData, drawn with no ExtGState that sets a constant alpha below 1, a blend mode
or a soft mask), and its placement covers the page's crop box, within the clipping rectangles
set before it. A clip that is not a rectangle counts as not covering.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import pikepdf
from pikepdf import Name

from app.pdf.page_space import Affine, Box

_IDENTITY = Affine(1, 0, 0, 1, 0, 0)
_TOLERANCE = 1.0  # points the image may fall short of the page on a side (rounding at 72 DPI)
_OPAQUE_BLENDS = frozenset({Name.Normal, Name.Compatible})
_PATH_ENDS = frozenset({"n", "S", "s", "f", "F", "f*", "B", "B*", "b", "b*"})
_ODD = "odd"  # a path that is not one rectangle (in user space): a clip it sets is not a box
Instruction = pikepdf.ContentStreamInstruction | pikepdf.ContentStreamInlineImage


class _State:
    def __init__(self) -> None:
        self.ctm = _IDENTITY
        self.clip: Box | None = None  # the clipping rectangle in user space, None: the whole page
        self.odd_clip = False  # clipped by a path that is not a rectangle
        self.transparent = False


def cover_index(
    instructions: Sequence[Instruction], resources: pikepdf.Dictionary | None, page_box: Box
) -> int:
    """The index in instructions (a page's whole content, parsed) of the last one that draws an
    opaque image over all of page_box, or -1 when none does."""
    xobjects = resources.get(Name.XObject) if resources is not None else None
    states = resources.get(Name.ExtGState) if resources is not None else None
    state, saved = _State(), []
    path: Box | str | None = None  # the path being built: None, one rectangle, or _ODD
    found = -1
    for index, instruction in enumerate(instructions):
        if isinstance(instruction, pikepdf.ContentStreamInlineImage):
            if _opaque_inline(instruction) and _covers(state, page_box):
                found = index
            continue
        operator, operands = str(instruction.operator), instruction.operands
        if operator == "q":
            saved.append(_copy(state))
        elif operator == "Q":
            if saved:
                state = saved.pop()
        elif operator == "cm":
            if (matrix := _matrix(operands)) is not None:
                state.ctm = matrix.then(state.ctm)
        elif operator == "gs":
            ext = (
                states.get(str(operands[0])) if isinstance(states, pikepdf.Dictionary) and operands else None
            )
            state.transparent = state.transparent or _transparent(ext)
        elif operator == "re":  # a second rectangle in one path: not one box
            path = _rectangle(operands, state.ctm) if path is None else _ODD
        elif operator in ("m", "l", "c", "v", "y"):
            path = _ODD
        elif operator in ("W", "W*"):
            _clip(state, path)
        elif operator in _PATH_ENDS:
            path = None
        elif operator == "Do" and operands and isinstance(xobjects, pikepdf.Dictionary):
            image = xobjects.get(str(operands[0]))
            if _opaque_image(image) and _covers(state, page_box):
                found = index
    return found


def _copy(state: _State) -> _State:
    copy = _State()
    copy.ctm, copy.clip, copy.odd_clip, copy.transparent = (
        state.ctm,
        state.clip,
        state.odd_clip,
        state.transparent,
    )
    return copy


def _clip(state: _State, path: Box | str | None) -> None:
    if not isinstance(path, tuple):
        state.odd_clip = True
        return
    if state.clip is None:
        state.clip = path
        return
    left, bottom, right, top = state.clip
    state.clip = (max(left, path[0]), max(bottom, path[1]), min(right, path[2]), min(top, path[3]))


def _covers(state: _State, page_box: Box) -> bool:
    if state.transparent or state.odd_clip:
        return False
    corners = [state.ctm.apply(x, y) for x in (0.0, 1.0) for y in (0.0, 1.0)]
    drawn = (
        min(x for x, _ in corners),
        min(y for _, y in corners),
        max(x for x, _ in corners),
        max(y for _, y in corners),
    )
    return _contains(drawn, page_box) and (state.clip is None or _contains(state.clip, page_box))


def _contains(outer: Box, inner: Box) -> bool:
    return (
        outer[0] <= inner[0] + _TOLERANCE
        and outer[1] <= inner[1] + _TOLERANCE
        and outer[2] >= inner[2] - _TOLERANCE
        and outer[3] >= inner[3] - _TOLERANCE
    )


def _rectangle(operands: Any, ctm: Affine) -> Box | str:
    """The rectangle x y w h in user space, when the matrix keeps it one (no shear or turn)."""
    try:
        x, y, width, height = (float(value) for value in operands)
    except (TypeError, ValueError):
        return _ODD
    if ctm.b or ctm.c:
        return _ODD
    (x0, y0), (x1, y1) = ctm.apply(x, y), ctm.apply(x + width, y + height)
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


def _matrix(operands: Any) -> Affine | None:
    try:
        return Affine(*(float(value) for value in operands)) if len(operands) == 6 else None
    except (TypeError, ValueError):
        return None


def _transparent(ext: object) -> bool:
    if not isinstance(ext, pikepdf.Dictionary):
        return False
    for key in (Name.CA, Name.ca):
        with contextlib.suppress(TypeError, ValueError):
            if key in ext and float(ext[key]) < 1:
                return True
    blend = ext.get(Name.BM)
    if blend is not None and not (isinstance(blend, pikepdf.Name) and blend in _OPAQUE_BLENDS):
        return True
    mask = ext.get(Name.SMask)
    return mask is not None and mask != Name("/None")


def _opaque_image(image: object) -> bool:
    if not isinstance(image, pikepdf.Stream) or image.get(Name.Subtype) != Name.Image:
        return False
    if bool(image.get(Name.ImageMask, False)):
        return False
    if any(key in image for key in (Name.SMask, Name.Mask)):
        return False
    with contextlib.suppress(TypeError, ValueError):
        if int(image.get(Name.SMaskInData, 0)) != 0:
            return False
    return True


def _opaque_inline(image: pikepdf.ContentStreamInlineImage) -> bool:
    try:
        info = image.iimage.obj
    except (AttributeError, pikepdf.PdfError):
        return False
    mask = info.get(Name.IM, info.get(Name.ImageMask, False))
    return not bool(mask)
