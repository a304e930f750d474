"""Which of a document's optional content (layers) a viewer hides, read as PDFium's renderer reads
it for viewing (what OCR sees); app.pdf.visible_copy takes it out of the copy that is planned.

A group (OCG) listed in /OCProperties /OCGs is hidden by its /Usage /View /ViewState when it has
one, else by the default configuration /D (/BaseState, then /ON, then /OFF, which wins); a group
whose /Intent leaves out View, or one the document does not list, is shown. A membership
dictionary (OCMD) is hidden as its visibility expression /VE, or else its policy /P over its
groups, says.

A hostile file may make an expression share or contain its own parts, so that evaluating it
naively takes 2^32 steps (1 KB of PDF held a planning thread for good): expressions and
memberships that are objects of their own are evaluated once and remembered, one met again
inside itself is hidden (as PDFium's past its depth limit), and the whole document gets
MAX_STEPS steps, after which anything left counts as hidden.
"""

from __future__ import annotations

from collections.abc import Callable

import pikepdf
from pikepdf import Name

from app.core.filenames import shown_name

MAX_STEPS = 100_000  # expression and membership evaluations one document may take
# Groups a document may list (in /OCGs, or its default configuration's /ON or /OFF) for its layers
# to be looked into: a CAD drawing or a map has tens to a few thousand. 1.5 million empty groups
# (a 137 MB file) took the planning process to 2.2 GB, and three uploads of 500,000 the API to 2.3.
MAX_GROUPS = 10_000
_MAX_DEPTH = 32  # as PDFium: a visibility expression nested deeper hides
ObjGen = tuple[int, int]


class HiddenLayers:
    """The document's hidden groups, and what hides for memberships and expressions over them."""

    def __init__(self, hidden: frozenset[ObjGen], names: tuple[str, ...]) -> None:
        self.hidden = hidden  # the hidden groups' object and generation numbers
        self.names = names  # their /Name, for the warning
        self._shown: dict[ObjGen, bool] = {}  # memberships and expressions evaluated
        self._open: set[ObjGen] = set()  # being evaluated: met again, it is a loop
        self._steps = MAX_STEPS

    def hides(self, item: object) -> bool:
        """Whether item (an OCG or an OCMD, as /OC or a marked-content property names it) is off."""
        if not isinstance(item, pikepdf.Dictionary):
            return False
        if item.get(Name.Type, Name.OCG) == Name.OCG:
            return self._group_hidden(item)
        return not self._remembered(item, lambda: self._membership_shows(item))

    def _group_hidden(self, group: pikepdf.Dictionary) -> bool:
        return group.is_indirect and group.objgen in self.hidden

    def _remembered(self, item: pikepdf.Object, evaluate: Callable[[], bool]) -> bool:
        """evaluate() for item, once for an indirect item; False for a loop or past MAX_STEPS."""
        self._steps -= 1
        if self._steps < 0:
            return False
        key = item.objgen if item.is_indirect else None
        if key is not None:
            if key in self._shown:
                return self._shown[key]
            if key in self._open:
                return False
            self._open.add(key)
        try:
            shown = evaluate()
        finally:
            if key is not None:
                self._open.discard(key)
        if key is not None:
            self._shown[key] = shown
        return shown

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
        """[/Not x], [/And x ...] or [/Or x ...], each x a group or an expression; malformed, or
        deeper than _MAX_DEPTH, it hides (as PDFium's)."""
        if depth > _MAX_DEPTH or len(expression) < 2:
            return False
        return self._remembered(expression, lambda: self._evaluate(expression, depth))

    def _evaluate(self, expression: pikepdf.Array, depth: int) -> bool:
        operator = expression[0]
        values = []
        for index in range(1, len(expression)):
            operand = expression[index]
            if isinstance(operand, pikepdf.Dictionary):
                values.append(not self._group_hidden(operand))
            elif isinstance(operand, pikepdf.Array):
                values.append(self._expression_shows(operand, depth + 1))
            elif operator == Name.Not:
                return False
            if operator == Name.Not:
                break
        if operator == Name.Not:
            return bool(values) and not values[0]
        if operator == Name.And:
            return bool(values) and all(values)
        if operator == Name.Or:
            return any(values)
        return False


def group_count(pdf: pikepdf.Pdf) -> int:
    """The most groups the document's /OCGs, /ON or /OFF lists (entries, not read one by one)."""
    properties = pdf.Root.get(Name.OCProperties)
    if not isinstance(properties, pikepdf.Dictionary):
        return 0
    config = properties.get(Name.D)
    lists = [properties.get(Name.OCGs)]
    if isinstance(config, pikepdf.Dictionary):
        lists += [config.get(Name.ON), config.get(Name.OFF)]
    return max(len(listed) if isinstance(listed, pikepdf.Array) else 0 for listed in lists)


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
    names = tuple(sorted({shown_name(str(group.get(Name.Name, ""))) for group in hidden} - {""}))
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
