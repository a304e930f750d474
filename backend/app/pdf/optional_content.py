"""Optional content a viewer hides (layers set OFF), taken out of a copy of the file the pages are
read from.

A PDF's layers (optional content groups, ISO 32000-1 8.11) are shown or hidden by the document's
default configuration (/OCProperties /D: /BaseState, /ON, /OFF). Viewers, poppler's pdftotext and
PDFium's renderer leave a hidden layer out, but PDFium's text page does not, and a chunk cut by
PDFium loses the catalog that says what is hidden: its render draws every layer. A hidden layer's
text (a CAD drawing's construction notes, an answer key, text hidden to be read by a machine and
not a person) came out in the document's text, and its drawing was OCR'd.

The planner reads and cuts a copy instead, in which what the default configuration hides is gone:

- a marked-content sequence tagged /OC whose group (an OCG, or a membership dictionary: /P or
  its visibility expression /VE over its groups) is hidden draws nothing: its text, paths,
  shadings, images and forms go; what it sets (q/Q, the matrix, fonts, line moves, clipping)
  stays, as a viewer keeps following it;
- an XObject (an image or a form) whose own /OC is hidden is not drawn;
- an annotation whose /OC is hidden is removed from its page.

Forms are rewritten in place (a layer's state is the document's, wherever the form is drawn).
Only the default configuration counts, as in poppler: /AS usage events (print-only layers) are not
applied. Text shown on the same line after a hidden show inside one BT...ET starts where the
hidden text started (its width is not known without the font): the words stay, a little to the
left. A content larger than MAX_CONTENT_BYTES, and every content after MAX_PARSED_BYTES of the
document's, is kept as it is (the warning counts them).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pikepdf
from pikepdf import Name

from app.core.logging import get_logger
from app.pdf._content_size import content_size
from app.pdf.prior_text import moves_of

log = get_logger(__name__)

# Content parsed into Python objects takes about 80 times its size, and a second or so a 4 MiB
# content: a page or form whose content decodes to more than MAX_CONTENT_BYTES is kept whole,
# hidden layers and all, and so is every content after MAX_PARSED_BYTES of one document's (a
# hostile file's pages, each a different large content, would hold a planning for minutes).
MAX_CONTENT_BYTES = 2 << 20
MAX_PARSED_BYTES = 64 << 20
MIN_CHARGE = 1024  # what each content looked into costs the budget at least: 65,536 of them at most
_MAX_EXPRESSION_DEPTH = 32  # a visibility expression nested deeper is a loop or a hostile file
_SHOW = frozenset({"Tj", "TJ", "'", '"'})
_PAINT_PATH = frozenset({"S", "s", "f", "F", "f*", "B", "B*", "b", "b*"})  # each becomes n
_DRAW = frozenset({"sh", "Do", "BI", "ID", "EI", "INLINE IMAGE"})
_SCAN = "BDC BMC EMC Do"  # the operators that say whether a content has anything hidden
Instruction = pikepdf.ContentStreamInstruction | pikepdf.ContentStreamInlineImage


@dataclass(frozen=True, slots=True)
class HiddenLayers:
    """Which optional content is hidden, as PDFium's renderer reads it for viewing: a group (OCG)
    listed in /OCProperties /OCGs is hidden by its /Usage /View /ViewState when it has one, else by
    the default configuration (/BaseState, then /ON, then /OFF, which wins); a group whose /Intent
    leaves out View, or one not listed, is shown. A membership dictionary (OCMD) is hidden as its
    visibility expression /VE or its policy /P over its groups says."""

    hidden: frozenset[tuple[int, int]]  # the hidden groups' object and generation numbers
    names: tuple[str, ...]  # their /Name, for the warning

    def hides(self, item: object) -> bool:
        """Whether item (an OCG or an OCMD, as /OC or a marked-content property names it) is off."""
        if not isinstance(item, pikepdf.Dictionary):
            return False
        if item.get(Name.Type, Name.OCG) != Name.OCG:
            return not self._membership_shows(item)
        return self._group_hidden(item)

    def _group_hidden(self, group: pikepdf.Dictionary) -> bool:
        return group.is_indirect and group.objgen in self.hidden

    def _membership_shows(self, membership: pikepdf.Dictionary) -> bool:
        expression = membership.get(Name.VE)
        if isinstance(expression, pikepdf.Array):
            return self._expression_shows(expression, 0)
        members = membership.get(Name.OCGs)
        if isinstance(members, pikepdf.Dictionary):
            return not self._group_hidden(members)
        if not isinstance(members, pikepdf.Array):
            return True
        shown = [not self._group_hidden(item) for item in members if isinstance(item, pikepdf.Dictionary)]
        if not shown:  # no group: always visible (8.11.2.2)
            return True
        policy = membership.get(Name.P, Name.AnyOn)
        if policy == Name.AnyOn:
            return any(shown)
        if policy == Name.AnyOff:
            return not all(shown)
        if policy == Name.AllOn:
            return all(shown)
        if policy == Name.AllOff:
            return not any(shown)
        return False  # a policy PDFium does not know hides

    def _expression_shows(self, expression: pikepdf.Array, depth: int) -> bool:
        """A visibility expression: [/Not x], [/And x ...], [/Or x ...], each x a group or an
        expression; deeper than _MAX_EXPRESSION_DEPTH, or malformed, it hides (as PDFium's)."""
        if depth > _MAX_EXPRESSION_DEPTH or len(expression) < 2:
            return False
        operator = expression[0]
        values = []
        for operand in (expression[i] for i in range(1, len(expression))):
            if isinstance(operand, pikepdf.Dictionary):
                values.append(not self._group_hidden(operand))
            elif isinstance(operand, pikepdf.Array):
                values.append(self._expression_shows(operand, depth + 1))
            elif operator == Name.Not:
                return False
        if operator == Name.Not:
            return not values[0]
        if operator == Name.And:
            return bool(values) and all(values)
        if operator == Name.Or:
            return any(values)
        return False


def hidden_layers(pdf: pikepdf.Pdf) -> HiddenLayers | None:
    """The optional content the document hides from a viewer, or None when it hides none."""
    properties = pdf.Root.get(Name.OCProperties)
    if not isinstance(properties, pikepdf.Dictionary):
        return None
    config = properties.get(Name.D)
    config = config if isinstance(config, pikepdf.Dictionary) else pikepdf.Dictionary()
    base_on = config.get(Name.BaseState, Name.ON) != Name.OFF
    on = {group.objgen for group in _groups(config.get(Name.ON))}
    off = {group.objgen for group in _groups(config.get(Name.OFF))}
    hidden = [
        group
        for group in _groups(properties.get(Name.OCGs))
        if not _group_shown(group, base_on or group.objgen in on, group.objgen in off)
    ]
    if not hidden:
        return None
    names = tuple(sorted({str(group.get(Name.Name, "")) for group in hidden} - {""}))
    return HiddenLayers(frozenset(group.objgen for group in hidden), names)


def _group_shown(group: pikepdf.Dictionary, on: bool, off: bool) -> bool:
    intent = group.get(Name.Intent, Name.View)
    intents = list(intent) if isinstance(intent, pikepdf.Array) else [intent]
    if Name.View not in intents and Name.All not in intents:  # a design layer: not the viewer's
        return True
    usage = group.get(Name.Usage)
    view = usage.get(Name.View) if isinstance(usage, pikepdf.Dictionary) else None
    if isinstance(view, pikepdf.Dictionary) and Name.ViewState in view:
        return view.get(Name.ViewState) != Name.OFF
    return on and not off


def _groups(value: object) -> list[pikepdf.Dictionary]:
    if not isinstance(value, pikepdf.Array):
        return []
    return [item for item in value if isinstance(item, pikepdf.Dictionary) and item.is_indirect]


@dataclass(frozen=True, slots=True)
class Removed:
    """What visible_copy took out."""

    layers: tuple[str, ...]  # the hidden groups' names
    contents: int  # page and form contents rewritten
    annotations: int
    kept_too_large: int  # contents over MAX_CONTENT_BYTES or past the budget, kept as they are

    def warning(self) -> str:
        named = (
            f" ({', '.join(self.layers[:5])}{', ...' if len(self.layers) > 5 else ''})" if self.layers else ""
        )
        said = f"the PDF hides layers{named}: what they hold is left out of its text"
        if self.kept_too_large:
            said += (
                f"; {self.kept_too_large} page or form contents were not looked into (too large, or"
                " past what one file may take) and are read whole"
            )
        return said


def visible_copy(path: Path, target: Path) -> Removed | None:
    """Write to target a copy of the PDF at path without what its default configuration hides,
    and say what went; None (and nothing written) when it hides nothing, or when pikepdf cannot
    read the file (PDFium's reading of it is kept)."""
    started = time.perf_counter()
    try:
        with pikepdf.open(path) as pdf:
            layers = hidden_layers(pdf)
            if layers is None:
                return None
            rewriter = _Rewriter(pdf, layers)
            for page in pdf.pages:
                rewriter.page(page.obj)
            if rewriter.contents == 0 and rewriter.annotations == 0:
                return None
            pdf.save(target)
    except (pikepdf.PdfError, ValueError, KeyError, TypeError, RecursionError) as exc:
        log.warning("hidden_layers_kept", path=str(path), error=str(exc)[:200])
        return None
    removed = Removed(layers.names, rewriter.contents, rewriter.annotations, rewriter.too_large)
    log.info(
        "hidden_layers_removed",
        path=str(path),
        layers=list(layers.names),
        contents=removed.contents,
        annotations=removed.annotations,
        kept_too_large=removed.kept_too_large,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return removed


class _Rewriter:
    def __init__(self, pdf: pikepdf.Pdf, layers: HiddenLayers) -> None:
        self.pdf, self.layers = pdf, layers
        self.contents = self.annotations = self.too_large = 0
        self._budget = MAX_PARSED_BYTES
        self._forms_done: set[tuple[int, int]] = set()
        # pages that share their content (a page tree naming one page many times) share its
        # rewriting: (their streams, the hidden names of their resources) -> the new stream
        self._pages_done: dict[tuple[object, ...], pikepdf.Stream | None] = {}

    def page(self, page: pikepdf.Dictionary) -> None:
        resources = _inherited(page, Name.Resources)
        contents = page.get(Name.Contents)
        names = self._hidden_names(resources)
        streams = _objgens(contents)
        key = (streams, names.properties, names.xobjects)
        if (0, 0) in streams or key not in self._pages_done:
            rewritten = self._content(page, contents, names)
            self._pages_done[key] = self.pdf.make_stream(rewritten) if rewritten is not None else None
        if (done := self._pages_done[key]) is not None:
            page.Contents = done
        self._forms(resources)
        annotations = page.get(Name.Annots)
        if isinstance(annotations, pikepdf.Array):
            kept = [item for item in annotations if not self._hidden_annotation(item)]
            if len(kept) < len(annotations):
                self.annotations += len(annotations) - len(kept)
                page.Annots = pikepdf.Array(kept)

    def _hidden_annotation(self, annotation: object) -> bool:
        return isinstance(annotation, pikepdf.Dictionary) and self.layers.hides(annotation.get(Name.OC))

    def _forms(self, resources: pikepdf.Dictionary | None, depth: int = 0) -> None:
        """Rewrite, in place, the forms resources name (and the forms those name), once each."""
        if depth > _MAX_EXPRESSION_DEPTH:
            return
        for form in _xobjects(resources).values():
            if form.get(Name.Subtype) != Name.Form or not form.is_indirect:
                continue
            if form.objgen in self._forms_done:
                continue
            self._forms_done.add(form.objgen)
            own = form.get(Name.Resources)
            form_resources = own if isinstance(own, pikepdf.Dictionary) else resources
            rewritten = self._content(form, form, self._hidden_names(form_resources))
            if rewritten is not None:
                form.write(rewritten)
            self._forms(form_resources, depth + 1)

    def _content(self, owner: pikepdf.Object, contents: object, names: _HiddenNames) -> bytes | None:
        """owner's content without what is hidden, or None when nothing is (or it is too large)."""
        try:
            if contents is None:
                return None
            size = max(MIN_CHARGE, content_size(contents, MAX_CONTENT_BYTES))
            if size > min(MAX_CONTENT_BYTES, self._budget):  # not parsed: it may hide something
                self.too_large += 1
                return None
            self._budget -= size
            if not _hides_anything(pikepdf.parse_content_stream(owner, _SCAN), names):
                return None
            self._budget -= size
            instructions = pikepdf.parse_content_stream(owner)
        except pikepdf.PdfError:
            return None
        self.contents += 1
        return pikepdf.unparse_content_stream(list(_visible(instructions, names)))

    def _hidden_names(self, resources: pikepdf.Dictionary | None) -> _HiddenNames:
        properties = resources.get(Name.Properties) if resources is not None else None
        hidden_properties = frozenset(
            str(name)
            for name, item in (properties.items() if isinstance(properties, pikepdf.Dictionary) else ())
            if self.layers.hides(item)
        )
        hidden_xobjects = frozenset(
            name for name, item in _xobjects(resources).items() if self.layers.hides(item.get(Name.OC))
        )
        return _HiddenNames(hidden_properties, hidden_xobjects, self.layers)


@dataclass(frozen=True, slots=True)
class _HiddenNames:
    """A content's resource names that stand for something hidden."""

    properties: frozenset[str]  # /Properties entries (marked-content property lists)
    xobjects: frozenset[str]  # /XObject entries whose own /OC is hidden
    layers: HiddenLayers


def _hides_anything(instructions: list[Instruction], names: _HiddenNames) -> bool:
    """Whether any of these instructions (BDC, BMC, EMC and Do only) opens a hidden sequence or
    draws a hidden XObject."""
    for instruction in instructions:
        operator = str(instruction.operator)
        if operator == "BDC" and _marks_hidden(instruction.operands, names.properties, names.layers):
            return True
        if operator == "Do" and _operand_name(instruction.operands) in names.xobjects:
            return True
    return False


def _visible(instructions: list[Instruction], names: _HiddenNames) -> Iterator[Instruction]:
    """The instructions, drawing nothing inside a hidden marked-content sequence."""
    marks: list[bool] = []  # for each open marked-content sequence: whether it hides
    for instruction in instructions:
        if isinstance(instruction, pikepdf.ContentStreamInlineImage):
            if not any(marks):
                yield instruction
            continue
        operator = str(instruction.operator)
        if operator in ("BMC", "BDC"):
            marks.append(
                operator == "BDC" and _marks_hidden(instruction.operands, names.properties, names.layers)
            )
        elif operator == "EMC" and marks:
            marks.pop()
        if operator == "Do" and _operand_name(instruction.operands) in names.xobjects:
            continue
        if not any(marks):
            yield instruction
        elif operator in _SHOW:
            yield from moves_of(operator, instruction.operands)
        elif operator in _PAINT_PATH:
            yield pikepdf.ContentStreamInstruction([], pikepdf.Operator("n"))
        elif operator not in _DRAW:
            yield instruction


def _marks_hidden(operands: Any, hidden_properties: frozenset[str], layers: HiddenLayers) -> bool:
    """Whether BDC's operands (tag, properties) open a sequence of hidden optional content."""
    if len(operands) != 2 or operands[0] != Name.OC:
        return False
    properties = operands[1]
    if isinstance(properties, pikepdf.Name):
        return str(properties) in hidden_properties
    return layers.hides(properties)


def _xobjects(resources: pikepdf.Dictionary | None) -> dict[str, pikepdf.Stream]:
    xobjects = resources.get(Name.XObject) if resources is not None else None
    if not isinstance(xobjects, pikepdf.Dictionary):
        return {}
    return {str(name): item for name, item in xobjects.items() if isinstance(item, pikepdf.Stream)}


def _objgens(contents: object) -> tuple[tuple[int, int], ...]:
    """The object numbers of a page's content streams ((0, 0) for a direct one)."""
    items = list(contents) if isinstance(contents, pikepdf.Array) else [contents]
    return tuple(item.objgen if isinstance(item, pikepdf.Object) else (0, 0) for item in items)


def _operand_name(operands: Any) -> str | None:
    return str(operands[0]) if len(operands) == 1 and isinstance(operands[0], pikepdf.Name) else None


def _inherited(page: pikepdf.Dictionary, key: Name) -> pikepdf.Dictionary | None:
    """key of the page, or of the nearest page tree node above it that has one."""
    node: object = page
    for _ in range(_MAX_EXPRESSION_DEPTH):
        if not isinstance(node, pikepdf.Dictionary):
            return None
        value = node.get(key)
        if isinstance(value, pikepdf.Dictionary):
            return value
        node = node.get(Name.Parent)
    return None
