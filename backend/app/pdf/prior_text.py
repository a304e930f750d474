"""The text an earlier OCR laid over a page, which no one sees: it goes when ours is laid over.

A scan that comes with an OCR layer of its own is OCR'd again when that layer is garbage, when
it reads only part of the page, or when the user asks for an engine: grafted over it, our layer
doubled it, so a reader's search, selection and copy gave the old words and ours, garbage
included. Like ocrmypdf's --redo-ocr, a page that gets our layer loses the old one: the text it
shows in render mode 3 (neither filled nor stroked nor clipped: drawn by nothing; the mode does
not apply to a Type 3 font, whose glyphs are drawn whatever it is), and the Form
XObjects it draws that hold such text and nothing else (the way ocrmypdf and this service lay a
layer over a page). So does the text it draws, in any mode, before an opaque image over the
whole page (app.pdf._cover: "image on text", a layer hidden by the scan drawn over it; an inline
image is not looked for). Everything the page draws stays as it was, to the pixel; text it
shows in any other mode and not under its scan (a stamp, a header, a born-digital page OCR'd on
request) is kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import pikepdf
from pikepdf import Name

from app.core.logging import get_logger
from app.pdf._content_size import content_exceeds
from app.pdf._cover import cover_index
from app.pdf.page_space import page_geometry

log = get_logger(__name__)

INVISIBLE = 3  # the text render mode that neither fills, strokes nor clips
_SHOW = frozenset({"Tj", "TJ", "'", '"'})
# What marks the page: path painting, shadings, images (inline, or drawn with Do; a form within
# a form is taken for a mark, unread).
_PAINTS = frozenset({"S", "s", "f", "F", "f*", "B", "B*", "b", "b*", "sh", "BI", "INLINE IMAGE", "Do"})
Instruction = pikepdf.ContentStreamInstruction | pikepdf.ContentStreamInlineImage
_SCAN = "q Q Tr Do"  # the operators that say whether a content has any of it, without the rest
# Content parsed into Python objects takes about 80 times its size: a page or form whose content
# is larger than this (an old layer of a dense page is a few hundred kilobytes) is kept as it is.
MAX_CONTENT_BYTES = 1 << 20


def without_invisible_text(page: pikepdf.Object, resources: pikepdf.Dictionary | None) -> bytes | None:
    """The content of page (a page, or what has a /Contents) without the text it draws in render
    mode 3 and without the forms (named in resources, the page's own or inherited) that hold
    such text only; None when it has none, or its content cannot be parsed or is larger than
    MAX_CONTENT_BYTES (kept as it is)."""
    forms = _xobject_forms(resources)
    try:
        if content_exceeds(page.get(Name.Contents), MAX_CONTENT_BYTES):
            log.info("prior_text_kept", reason="content too large")
            return None
        if not _has_any(pikepdf.parse_content_stream(page, _SCAN), resources):
            return None
        instructions = pikepdf.parse_content_stream(page)
    except pikepdf.PdfError:
        return None
    kept: list[Instruction] = []
    removed = False
    state = _TextState(_type3_fonts(resources))
    box = page_geometry(page).crop_box if isinstance(page, pikepdf.Dictionary) else None
    covered_until = cover_index(instructions, resources, box) if box is not None else -1
    for index, instruction in enumerate(instructions):
        operator = str(instruction.operator)
        covered = index < covered_until  # drawn before a scan that hides all of the page
        state.follow(operator, instruction.operands)
        if operator in _SHOW and (state.invisible or covered):
            removed = True
            kept.extend(moves_of(operator, instruction.operands))  # ' and " go to the next line first
            continue
        form = forms.get(_name(instruction.operands) or "") if operator == "Do" else None
        if form is not None and _only_hidden_text(form, state, resources, covered=covered):
            removed = True
            continue
        kept.append(instruction)
    return pikepdf.unparse_content_stream(kept) if removed else None


class _TextState:
    """The text render mode in effect, and whether the font is a Type 3 font (which the mode
    does not apply to: its glyphs are drawn in any mode); graphics state, saved by q and
    restored by Q."""

    def __init__(self, type3: frozenset[str], mode: int = 0, in_type3: bool = False) -> None:
        self.type3 = type3  # the names of the Type 3 fonts in the content's resources
        self.mode, self.in_type3 = mode, in_type3
        self._saved: list[tuple[int, bool]] = []

    @property
    def invisible(self) -> bool:
        return self.mode == INVISIBLE and not self.in_type3

    def within(self, type3: frozenset[str]) -> _TextState:
        """The state a form drawn now starts in, its fonts' names being its own."""
        return _TextState(type3, self.mode, self.in_type3)

    def follow(self, operator: str, operands: Any) -> None:
        if operator == "q":
            self._saved.append((self.mode, self.in_type3))
        elif operator == "Q":
            if self._saved:
                self.mode, self.in_type3 = self._saved.pop()
        elif operator == "Tr" and len(operands) == 1:
            with contextlib.suppress(TypeError, ValueError):
                self.mode = int(operands[0])
        elif operator == "Tf" and operands:
            self.in_type3 = str(operands[0]) in self.type3


def _has_any(instructions: Sequence[Instruction], resources: pikepdf.Dictionary | None) -> bool:
    """Whether content of these instructions (q, Q, Tr and Do only) may show invisible text: it
    sets render mode 3, or draws an XObject (a form that may hold such text, or a scan that may
    hide text drawn before it)."""
    xobjects = resources.get(Name.XObject) if resources is not None else None
    for instruction in instructions:
        operator = str(instruction.operator)
        if operator == "Tr" and instruction.operands and _number(instruction.operands[0]) == INVISIBLE:
            return True
        name = _name(instruction.operands) if operator == "Do" else None
        if name is not None and isinstance(xobjects, pikepdf.Dictionary) and name in xobjects:
            return True
    return False


def _only_hidden_text(
    form: pikepdf.Stream, drawn_in: _TextState, page: pikepdf.Dictionary | None, *, covered: bool
) -> bool:
    """Whether form shows text, all of it invisible (drawn_in: the text state where it is drawn)
    or, covered, in any mode, and marks the page in no other way. Its fonts are its own
    resources' (else the page's)."""
    try:
        if content_exceeds(form, MAX_CONTENT_BYTES):
            return False
        instructions = pikepdf.parse_content_stream(form)
    except pikepdf.PdfError:
        return False
    own = form.get(Name.Resources)
    state = drawn_in.within(_type3_fonts(own if isinstance(own, pikepdf.Dictionary) else page))
    shown = False
    for instruction in instructions:
        if isinstance(instruction, pikepdf.ContentStreamInlineImage):
            return False
        operator = str(instruction.operator)
        if operator in _PAINTS:
            return False
        state.follow(operator, instruction.operands)
        if operator in _SHOW:
            if not (state.invisible or covered):
                return False
            shown = True
    return shown


def _type3_fonts(resources: pikepdf.Dictionary | None) -> frozenset[str]:
    fonts = resources.get(Name.Font) if resources is not None else None
    if not isinstance(fonts, pikepdf.Dictionary):
        return frozenset()
    return frozenset(
        str(name)
        for name, font in fonts.items()
        if isinstance(font, pikepdf.Dictionary) and font.get(Name.Subtype) == Name.Type3
    )


def moves_of(operator: str, operands: Any) -> list[Instruction]:
    """What a text-showing operator does besides showing: ' moves to the next line, and " sets
    word and character spacing too."""
    instruction = pikepdf.ContentStreamInstruction
    if operator == "'":
        return [instruction([], pikepdf.Operator("T*"))]
    if operator == '"' and len(operands) == 3:
        return [
            instruction([operands[0]], pikepdf.Operator("Tw")),
            instruction([operands[1]], pikepdf.Operator("Tc")),
            instruction([], pikepdf.Operator("T*")),
        ]
    return []


def _xobject_forms(resources: pikepdf.Dictionary | None) -> dict[str, pikepdf.Stream]:
    """The Form XObjects resources name, by name."""
    xobjects = resources.get(Name.XObject) if resources is not None else None
    if not isinstance(xobjects, pikepdf.Dictionary):
        return {}
    return {
        str(name): item
        for name, item in xobjects.items()
        if isinstance(item, pikepdf.Stream) and item.get(Name.Subtype) == Name.Form
    }


def _name(operands: Any) -> str | None:
    return str(operands[0]) if len(operands) == 1 and isinstance(operands[0], pikepdf.Name) else None


def _number(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
