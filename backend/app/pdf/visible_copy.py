"""A copy of a PDF without the optional content (layers) a viewer hides: what the planner reads and
cuts for a document that has such layers.

Viewers, poppler's pdftotext and PDFium's renderer leave a hidden layer out, but PDFium's text page
does not, and a chunk cut by PDFium loses the catalog that says what is hidden: its render draws
every layer. A hidden layer's text (a CAD drawing's construction notes, an answer key, text
hidden to be read by a machine and not a person) came out in the document's text, and its
drawing was OCR'd. In the copy (what hides is app.pdf.optional_content's to say):

- a marked-content sequence tagged /OC whose group or membership is hidden draws nothing: its
  text, paths, shadings, images and forms go; what it sets (q/Q, the matrix, fonts, line moves,
  clipping) stays, as a viewer keeps following it;
- an XObject (an image or a form) whose own /OC is hidden is not drawn;
- an annotation whose /OC is hidden is removed from its page.

The same goes inside forms, annotations' appearances and tiling patterns, rewritten in place (a
layer's state is the document's, wherever they are drawn). Text shown on the same line after a
hidden show inside one BT...ET starts where the hidden text started (its width is not known
without the font): the words stay, a little to the left. Type 3 glyphs and soft masks are not
looked into.

A hostile file must not hold a planning for long, nor take its memory: a document that lists more
than MAX_GROUPS groups is not looked into (its groups are not read); a content that decodes to more than
MAX_CONTENT_BYTES is kept as it is, and so is every content after MAX_PARSED_BYTES of the
document's; resource dictionaries are read once each, and after MAX_ENTRIES of their entries
or DEADLINE_SECONDS the copy is given up (the planner reads the file as it is, and says so).
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
from app.pdf.optional_content import MAX_GROUPS, HiddenLayers, group_count, hidden_layers
from app.pdf.prior_text import moves_of

log = get_logger(__name__)

# Content parsed into Python objects takes about 80 times its size and about 1.5 s a MiB at worst
# (one-byte operators): a page or form whose content decodes to more than MAX_CONTENT_BYTES is
# kept whole, hidden layers and all, and so is every content after MAX_PARSED_BYTES of the file's.
MAX_CONTENT_BYTES = 1 << 20
MAX_PARSED_BYTES = 16 << 20
MIN_CHARGE = 1024  # what each content looked into costs the budget at least
MAX_ENTRIES = 200_000  # resource dictionary entries read, across the document
DEADLINE_SECONDS = 20.0
_LOGGED_NAMES = 20
_MAX_DEPTH = 100  # forms within forms (PDFium reads text deeper than 32)
_SHOW = frozenset({"Tj", "TJ", "'", '"'})
_PAINT_PATH = frozenset({"S", "s", "f", "F", "f*", "B", "B*", "b", "b*"})  # each becomes n
_DRAW = frozenset({"sh", "Do", "BI", "ID", "EI", "INLINE IMAGE"})
_SCAN = "BDC BMC EMC Do"  # the operators that say whether a content has anything hidden
Instruction = pikepdf.ContentStreamInstruction | pikepdf.ContentStreamInlineImage
ObjGen = tuple[int, int]
Key = tuple[object, ...]  # what identifies a dictionary read once: its object, or its holder's


class _GaveUp(Exception):
    """Past MAX_ENTRIES or DEADLINE_SECONDS: the copy is not made."""


@dataclass(frozen=True, slots=True)
class Removed:
    """What visible_copy took out of the document, or that it gave up."""

    layers: tuple[str, ...]  # the hidden groups' names
    contents: int = 0  # page, form and appearance contents rewritten
    annotations: int = 0
    kept_too_large: int = 0  # contents over MAX_CONTENT_BYTES or past the budget, kept as they are
    gave_up: bool = False  # the file was too complex to take its layers out
    copied: bool = False  # a copy was written (nothing was, when nothing could be taken out)
    groups: int = 0  # set when the document lists more than MAX_GROUPS groups: how many (none read)

    def warning(self) -> str:
        if self.groups:
            return (
                f"the PDF lists {self.groups:,} layers, more than {MAX_GROUPS:,}: they are not looked"
                " into, and text a viewer hides may be read"
            )
        listed = ", ".join(self.layers[:5]) + (", ..." if len(self.layers) > 5 else "")
        named = f" ({listed})" if self.layers else ""
        if self.gave_up:
            return f"the PDF hides layers{named}, too many to take out: their text may be read"
        said = f"the PDF hides layers{named}: what they hold is left out of its text"
        if self.kept_too_large:
            said += (
                f"; {self.kept_too_large} page or form contents were not looked into (too large, or"
                " past what one file may take) and are read whole"
            )
        return said


def visible_copy(path: Path, target: Path) -> Removed | None:
    """Write to target a copy of the PDF at path without what a viewer hides, and say what went
    (copied); None (and nothing written) when it hides nothing, or when pikepdf cannot read the
    file (PDFium's reading of it is kept). Past the limits, or when every content that may hide
    something is too large, nothing is written and what was not done is said."""
    started = time.perf_counter()
    try:
        with pikepdf.open(path) as pdf:
            if (groups := group_count(pdf)) > MAX_GROUPS:
                log.warning("hidden_layers_kept", path=str(path), reason="too many groups", groups=groups)
                return Removed((), gave_up=True, groups=groups)
            layers = hidden_layers(pdf)
            if layers is None:
                return None
            rewriter = _Rewriter(pdf, layers, started + DEADLINE_SECONDS)
            try:
                for page in pdf.pages:
                    rewriter.page(page.obj)
            except _GaveUp as exc:
                log.warning("hidden_layers_kept", path=str(path), reason=str(exc), **_named(layers.names))
                return Removed(layers.names, gave_up=True)
            if rewriter.contents == 0 and rewriter.annotations == 0:
                return (
                    Removed(layers.names, kept_too_large=rewriter.too_large) if rewriter.too_large else None
                )
            pdf.save(target)
    except (pikepdf.PdfError, ValueError, KeyError, TypeError, RecursionError) as exc:
        log.warning("hidden_layers_kept", path=str(path), error=str(exc)[:200])
        return None
    removed = Removed(layers.names, rewriter.contents, rewriter.annotations, rewriter.too_large, copied=True)
    log.info(
        "hidden_layers_removed",
        path=str(path),
        **_named(layers.names),
        contents=removed.contents,
        annotations=removed.annotations,
        kept_too_large=removed.kept_too_large,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return removed


def _named(names: tuple[str, ...]) -> dict[str, object]:
    """A log event's layers: the first _LOGGED_NAMES names, and how many there are (one event
    naming every one of 1.5 million layers was a 17 MB line on the terminal)."""
    return {"layers": list(names[:_LOGGED_NAMES]), "layer_count": len(names)}


@dataclass(frozen=True, slots=True)
class _HiddenNames:
    """A content's resource names that stand for something hidden."""

    properties: frozenset[str]  # /Properties entries (marked-content property lists)
    xobjects: frozenset[str]  # /XObject entries whose own /OC is hidden
    layers: HiddenLayers


class _Rewriter:
    def __init__(self, pdf: pikepdf.Pdf, layers: HiddenLayers, deadline: float) -> None:
        self.pdf, self.layers, self._deadline = pdf, layers, deadline
        self.contents = self.annotations = self.too_large = 0
        self._budget = MAX_PARSED_BYTES
        self._entries = MAX_ENTRIES
        self._done: set[object] = set()  # forms, appearances, patterns and resources walked
        self._names: dict[tuple[object, object], _HiddenNames] = {}  # by (Properties, XObject)
        # pages that share their content (a page tree naming one page many times) share its
        # rewriting: (their streams, the hidden names of their resources) -> the new stream
        self._pages_done: dict[tuple[object, ...], pikepdf.Stream | None] = {}

    def page(self, page: pikepdf.Dictionary) -> None:
        self._check_time()
        resources = _inherited(page, Name.Resources)
        contents = page.get(Name.Contents)
        names = self._hidden_names(resources, _key(resources, page))
        streams = _objgens(contents)
        key = (streams, names.properties, names.xobjects)
        if (0, 0) in streams or key not in self._pages_done:
            rewritten = self._content(page, contents, names)
            self._pages_done[key] = self.pdf.make_stream(rewritten) if rewritten is not None else None
        if (done := self._pages_done[key]) is not None:
            page.Contents = done
        self._walk(resources, _key(resources, page), 0)
        annotations = page.get(Name.Annots)
        if isinstance(annotations, pikepdf.Array):
            self._spend(len(annotations))
            kept = [item for item in annotations if not self._hidden_annotation(item)]
            if len(kept) < len(annotations):
                self.annotations += len(annotations) - len(kept)
                page.Annots = pikepdf.Array(kept)
            for annotation in kept:
                self._appearances(annotation)

    def _hidden_annotation(self, annotation: object) -> bool:
        return isinstance(annotation, pikepdf.Dictionary) and self.layers.hides(annotation.get(Name.OC))

    def _appearances(self, annotation: object) -> None:
        """Rewrite the annotation's appearance streams (/AP, each state's), forms of their own."""
        appearance = annotation.get(Name.AP) if isinstance(annotation, pikepdf.Dictionary) else None
        if not isinstance(appearance, pikepdf.Dictionary):
            return
        for kind in (Name.N, Name.R, Name.D):
            stream = appearance.get(kind)
            states = stream.values() if isinstance(stream, pikepdf.Dictionary) else [stream]
            for state in states:
                if isinstance(state, pikepdf.Stream):
                    self._form(state, None, None, 0)

    def _walk(self, resources: pikepdf.Dictionary | None, key: Key | None, depth: int) -> None:
        """Rewrite, in place, the forms and tiling patterns resources name (and those they name),
        each once. A resource dictionary (key: its object, or for one written into its page or
        form, that page's or form's) is walked once."""
        if resources is None or key is None or key in self._done or depth > _MAX_DEPTH:
            return
        self._done.add(key)
        for kind in (Name.XObject, Name.Pattern):
            entries = resources.get(kind)
            if not isinstance(entries, pikepdf.Dictionary):
                continue
            if entries.is_indirect:
                if entries.objgen in self._done:
                    continue
                self._done.add(entries.objgen)
            self._spend(len(entries))
            for item in entries.values():
                if isinstance(item, pikepdf.Stream) and (
                    item.get(Name.Subtype) == Name.Form or item.get(Name.PatternType) == 1
                ):
                    self._form(item, resources, key, depth)

    def _form(
        self, form: pikepdf.Stream, outer: pikepdf.Dictionary | None, outer_key: Key | None, depth: int
    ) -> None:
        """Rewrite a form (or an appearance, or a tiling pattern) once; its resources are its own,
        else those it is drawn with."""
        if not form.is_indirect or form.objgen in self._done:
            return
        self._done.add(form.objgen)
        self._check_time()
        own = form.get(Name.Resources)
        resources, key = (own, _key(own, form)) if isinstance(own, pikepdf.Dictionary) else (outer, outer_key)
        rewritten = self._content(form, form, self._hidden_names(resources, key))
        if rewritten is not None:
            form.write(rewritten)
        self._walk(resources, key, depth + 1)

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

    def _hidden_names(self, resources: pikepdf.Dictionary | None, key: Key | None) -> _HiddenNames:
        """The names in resources (key: what identifies it, as _walk's) that stand for hidden
        content; worked out once for each resource dictionary."""
        properties = resources.get(Name.Properties) if resources is not None else None
        xobjects = resources.get(Name.XObject) if resources is not None else None
        # pages whose own resources name the same dictionaries of properties and XObjects share them
        key = (_part_key(properties, key), _part_key(xobjects, key))
        if key in self._names:
            return self._names[key]
        hidden_properties: set[str] = set()
        if isinstance(properties, pikepdf.Dictionary):
            self._spend(len(properties))
            hidden_properties = {str(name) for name, item in properties.items() if self.layers.hides(item)}
        hidden_xobjects: set[str] = set()
        if isinstance(xobjects, pikepdf.Dictionary):
            self._spend(len(xobjects))
            hidden_xobjects = {
                str(name)
                for name, item in xobjects.items()
                if isinstance(item, pikepdf.Stream) and self.layers.hides(item.get(Name.OC))
            }
        names = _HiddenNames(frozenset(hidden_properties), frozenset(hidden_xobjects), self.layers)
        if None not in key:
            self._names[key] = names
        return names

    def _spend(self, entries: int) -> None:
        self._entries -= entries
        if self._entries < 0:
            raise _GaveUp(f"more than {MAX_ENTRIES:,} resource entries")
        self._check_time()

    def _check_time(self) -> None:
        if time.perf_counter() > self._deadline:
            raise _GaveUp(f"more than {DEADLINE_SECONDS:g} s")


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
    hiding = 0  # how many of them hide
    for instruction in instructions:
        if isinstance(instruction, pikepdf.ContentStreamInlineImage):
            if not hiding:
                yield instruction
            continue
        operator = str(instruction.operator)
        if operator in ("BMC", "BDC"):
            hides = operator == "BDC" and _marks_hidden(instruction.operands, names.properties, names.layers)
            marks.append(hides)
            hiding += hides
        elif operator == "EMC" and marks:
            hiding -= marks.pop()
        if operator == "Do" and _operand_name(instruction.operands) in names.xobjects:
            continue
        if not hiding:
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


def _key(resources: pikepdf.Dictionary | None, holder: pikepdf.Object) -> Key | None:
    """What identifies resources: its object, or when it is written into holder (a page or a
    form), the holder's; None when neither is an object of its own."""
    if resources is None:
        return None
    if resources.is_indirect:
        return ("resources", *resources.objgen)
    return ("resources of", *holder.objgen) if holder.is_indirect else None


def _part_key(part: object, resources_key: Key | None) -> object:
    """What identifies part of a resource dictionary: its own object, else the dictionary's."""
    if part is None:
        return "none"
    if isinstance(part, pikepdf.Object) and part.is_indirect:
        return part.objgen
    return resources_key


def _objgen(item: object) -> ObjGen:
    return item.objgen if isinstance(item, pikepdf.Object) and item.is_indirect else (0, 0)


def _objgens(contents: object) -> tuple[ObjGen, ...]:
    """The object numbers of a page's content streams ((0, 0) for a direct one)."""
    items = list(contents) if isinstance(contents, pikepdf.Array) else [contents]
    return tuple(_objgen(item) for item in items)


def _operand_name(operands: Any) -> str | None:
    return str(operands[0]) if len(operands) == 1 and isinstance(operands[0], pikepdf.Name) else None


def _inherited(page: pikepdf.Dictionary, key: Name) -> pikepdf.Dictionary | None:
    """key of the page, or of the nearest page tree node above it that has one."""
    node: object = page
    for _ in range(_MAX_DEPTH):
        if not isinstance(node, pikepdf.Dictionary):
            return None
        value = node.get(key)
        if isinstance(value, pikepdf.Dictionary):
            return value
        node = node.get(Name.Parent)
    return None
