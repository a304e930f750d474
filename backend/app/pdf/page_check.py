"""Can a page of a damaged file still be drawn? Follow everything it draws and decide.

The check follows a page's content streams and resources (inherited from the
page tree too): images with their soft masks and masks, forms with their own
resources, colour spaces, fonts, patterns, shadings, graphics states and
marked-content properties, and its annotations' appearance streams; once per
object, so resources shared by every page are checked once and a loop in the
file ends. Each lost reference gets a verdict (damage.py): a sane default is
put in its place where one exists (colours.py, fonts.py), things that only
decorate are dropped (a graphics state, a pattern, a shading, an annotation
whose appearance is lost), and only what the page's drawing cannot do without
(a content stream, an image's data, a form, a palette, a font whose text
cannot be guessed) makes the page lost. Substitutions are applied to the
reader's objects, so the page written afterwards draws with them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pypdf.generic import (
    ArrayObject,
    ContentStream,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    StreamObject,
)

from app.pdf.colours import check_colour_space
from app.pdf.damage import KEEP, CheckContext, Verdict, combine, drop, lose
from app.pdf.fonts import FontUse, check_font, classify_strings
from app.pdf.streams import decoded, image_components, resolve, stream_damage, stream_fault

_MAX_DEPTH = 32  # forms inside forms: real files nest a few levels; deeper is a loop or a bomb
_CONTENT_PARSE_LIMIT = 8 * 2**20  # decoded content parsed to tell how a lost font is used
_TEXT_OPERATORS = (b"Tj", b"'", b'"', b"TJ")


@dataclass(frozen=True, slots=True)
class PageVerdict:
    lost: str | None  # why the page cannot be drawn, or None
    notes: tuple[str, ...]  # what was substituted or dropped so that it can be drawn


class _Owner:
    """The content a resources dictionary serves (a page, a form, a pattern), read when a font is lost."""

    def __init__(self, streams: list[StreamObject]) -> None:
        self._streams = streams
        self._strings: dict[str, list[bytes]] | None = None
        self._unreadable = False

    def use(self, font_name: str) -> FontUse:
        if self._strings is None and not self._unreadable:
            self._strings = _strings_by_font(self._streams)
            self._unreadable = self._strings is None
        if self._strings is None:
            return FontUse.UNKNOWN
        return classify_strings(self._strings.get(font_name, []))


class DrawingCheck:
    """Checks the pages of one damaged file; missing says how a lost reference is described."""

    def __init__(self, missing: Callable[[Any], str]) -> None:
        self._ctx = CheckContext(missing)

    def page(self, page: DictionaryObject) -> PageVerdict:
        ctx = self._ctx
        parts: list[Verdict] = []
        streams: list[StreamObject] = []
        if "/Contents" in page:
            contents_value = page.raw_get("/Contents")
            contents = resolve(contents_value)
            if contents is None:
                return PageVerdict(f"the page's content stream {ctx.missing(contents_value)}", ())
            items = contents if isinstance(contents, ArrayObject) else [contents_value]
            for item in items:
                stream = resolve(item)
                if not isinstance(stream, StreamObject):
                    phrase = ctx.missing(item) if stream is None else "is not a stream"
                    return PageVerdict(f"the page's content stream {phrase}", ())
                damage = stream_damage(stream)
                if damage is not None and not damage.partial:
                    return PageVerdict(f"the page's content stream {damage.fault}", ())
                if damage is not None:
                    parts.append(_as_far_as_it_goes(f"the page's content stream {damage.fault}"))
                streams.append(stream)
        if "/Resources" in page:
            parts.append(self._resources(page.raw_get("/Resources"), "the page", _Owner(streams), 0))
        if "/Group" in page:
            parts.append(self._group(page, "the page"))
        verdict = combine(parts)
        if verdict.lost is not None:
            return PageVerdict(verdict.lost, ())
        annotations = self._annotations(page)
        return PageVerdict(None, tuple(dict.fromkeys((*verdict.notes, *annotations.notes))))

    def apply_substitutes(self) -> None:
        """Put the substitutes the checks decided into the file's objects (once every page is checked)."""
        self._ctx.apply_edits()

    def resources(self, value: Any, subject: str) -> Verdict:
        """Check a resources dictionary on its own (a Type 3 font's): no content tells how fonts are used."""
        return self._resources(value, subject, _Owner([]), 0)

    # -- resources -------------------------------------------------------------------------------

    def _resources(self, value: Any, subject: str, owner: _Owner, depth: int) -> Verdict:
        resources = resolve(value)
        if resources is None:
            return lose(f"{_possessive(subject)} resource dictionary {self._ctx.missing(value)}")
        if not isinstance(resources, DictionaryObject):
            return KEEP
        # per owner: whether a lost font can be drawn with Helvetica depends on the text that uses it
        return self._ctx.remembered(
            ("resources", id(resources), id(owner)),
            resources,
            lambda: self._resource_kinds(resources, subject, owner, depth),
        )

    def _resource_kinds(
        self, resources: DictionaryObject, subject: str, owner: _Owner, depth: int
    ) -> Verdict:
        ctx = self._ctx
        checks: dict[str, Callable[[Any, str], Verdict]] = {
            "/XObject": lambda v, n: self._xobject(v, n, depth),
            "/Font": lambda v, n: check_font(ctx, v, n, owner.use, self.resources),
            "/ColorSpace": lambda v, n: check_colour_space(ctx, v, f"colour space {n}"),
            "/Pattern": lambda v, n: self._pattern(v, n, depth),
            "/Shading": lambda v, n: self._shading(v, n),
            "/ExtGState": lambda v, n: self._graphics_state(v, n, owner, depth),
            "/Properties": lambda v, n: (
                drop(f"properties {n} {ctx.missing(v)}, ignored") if resolve(v) is None else KEEP
            ),
        }
        parts = []
        for kind, check in checks.items():
            if kind not in resources:
                continue
            entries_value = resources.raw_get(kind)
            entries = resolve(entries_value)
            if entries is None:
                what = f"{_possessive(subject)} {kind[1:]} dictionary {ctx.missing(entries_value)}"
                if kind in ("/XObject", "/Font"):
                    return lose(what)
                ctx.remove(resources, kind)
                parts.append(Verdict(notes=(f"{what}, ignored",)))
                continue
            if isinstance(entries, DictionaryObject):
                parts.append(_apply_each(ctx, entries, check))
        return combine(parts)

    # -- drawn objects ----------------------------------------------------------------------------

    def _xobject(self, value: Any, name: str, depth: int) -> Verdict:
        xobject = resolve(value)
        if xobject is None:
            return lose(f"image or form {name} {self._ctx.missing(value)}")
        if not isinstance(xobject, StreamObject):
            return drop(f"image or form {name} is not a stream, ignored")
        subtype = xobject.get("/Subtype")
        if subtype == "/Image":
            return self._ctx.remembered(("image", id(xobject)), xobject, lambda: self._image(xobject, name))
        if subtype == "/Form":
            return self._ctx.remembered(
                ("form", id(xobject)), xobject, lambda: self._form(xobject, f"form {name}", depth + 1)
            )
        return KEEP

    def _image(self, image: StreamObject, name: str) -> Verdict:
        subject = f"image {name}"
        parts = []
        if (damage := stream_damage(image, image=True)) is not None:
            if not damage.partial:
                return lose(f"the data of {subject} {damage.fault}")
            parts.append(_as_far_as_it_goes(f"the data of {subject} {damage.fault}"))
        if "/ColorSpace" in image and not image.get("/ImageMask"):
            hint = image_components(image)
            parts.append(
                _apply(
                    self._ctx,
                    image,
                    "/ColorSpace",
                    check_colour_space(self._ctx, image.raw_get("/ColorSpace"), subject, hint),
                )
            )
        for key, what in (("/SMask", "soft mask"), ("/Mask", "mask")):
            if key not in image:
                continue
            mask_value = image.raw_get(key)
            mask = resolve(mask_value)
            fault: str | None
            if mask is None:
                fault = self._ctx.missing(mask_value)
            elif isinstance(mask, StreamObject):
                fault = stream_fault(mask, image=True)
            else:
                continue  # a colour-key mask is an array of numbers
            if fault is not None:
                self._ctx.remove(image, key)
                parts.append(Verdict(notes=(f"{subject}: {what} {fault}, drawn without it",)))
        return combine(parts)

    def _form(self, form: StreamObject, subject: str, depth: int) -> Verdict:
        if depth > _MAX_DEPTH:
            return KEEP
        parts = []
        if (damage := stream_damage(form)) is not None:
            if not damage.partial:
                return lose(f"the content of {subject} {damage.fault}")
            parts.append(_as_far_as_it_goes(f"the content of {subject} {damage.fault}"))
        if "/Resources" in form:
            parts.append(self._resources(form.raw_get("/Resources"), subject, _Owner([form]), depth))
        if "/Group" in form:
            parts.append(self._group(form, subject))
        return combine(parts)

    def _group(self, owner: DictionaryObject, subject: str) -> Verdict:
        group = resolve(owner.raw_get("/Group"))
        if group is None:
            self._ctx.remove(owner, "/Group")
            return Verdict(notes=(f"{subject}: transparency group lost, drawn without it",))
        if isinstance(group, DictionaryObject) and "/CS" in group:
            return _apply(
                self._ctx,
                group,
                "/CS",
                check_colour_space(self._ctx, group.raw_get("/CS"), f"{subject}'s group"),
            )
        return KEEP

    def _pattern(self, value: Any, name: str, depth: int) -> Verdict:
        pattern = resolve(value)
        subject = f"pattern {name}"
        if pattern is None:
            return drop(f"{subject} {self._ctx.missing(value)}, not drawn")
        if isinstance(pattern, StreamObject):  # a tiling pattern: a small page of its own
            inner = self._ctx.remembered(
                ("form", id(pattern)), pattern, lambda: self._form(pattern, subject, depth + 1)
            )
        elif isinstance(pattern, DictionaryObject) and "/Shading" in pattern:
            shading = self._shading(pattern.raw_get("/Shading"), f"{subject}'s shading")
            if shading.drop:  # a shading pattern is nothing but its shading
                return drop(shading.notes[0])
            inner = _apply(self._ctx, pattern, "/Shading", shading)
        else:
            return KEEP
        return drop(f"{inner.lost}, not drawn") if inner.lost is not None else inner

    def _shading(self, value: Any, name: str) -> Verdict:
        shading = resolve(value)
        subject = name if name.startswith("pattern") else f"shading {name}"
        if shading is None:
            return drop(f"{subject} {self._ctx.missing(value)}, not drawn")
        if not isinstance(shading, DictionaryObject):
            return KEEP
        if isinstance(shading, StreamObject) and (fault := stream_fault(shading)) is not None:
            return drop(f"{subject}'s data {fault}, not drawn")
        function_value = shading.raw_get("/Function") if "/Function" in shading else None
        functions = resolve(function_value)
        items = functions if isinstance(functions, ArrayObject) else [function_value]
        if function_value is not None and (functions is None or any(resolve(f) is None for f in items)):
            return drop(f"{subject}'s colour function is lost, not drawn")
        if "/ColorSpace" in shading:
            return _apply(
                self._ctx,
                shading,
                "/ColorSpace",
                check_colour_space(self._ctx, shading.raw_get("/ColorSpace"), subject),
            )
        return KEEP

    def _graphics_state(self, value: Any, name: str, owner: _Owner, depth: int) -> Verdict:
        state = resolve(value)
        subject = f"graphics state {name}"
        if state is None:
            return drop(f"{subject} {self._ctx.missing(value)}, ignored")
        if not isinstance(state, DictionaryObject):
            return KEEP
        parts = []
        soft_mask = resolve(state.raw_get("/SMask")) if "/SMask" in state else None
        mask_lost = "/SMask" in state and soft_mask is None
        if isinstance(soft_mask, DictionaryObject):  # a luminosity or alpha mask drawn by a form
            group = self._xobject(soft_mask.raw_get("/G"), f"{subject}'s soft mask", depth)
            mask_lost = group.lost is not None
        if mask_lost:
            self._ctx.put(state, "/SMask", NameObject("/None"))
            parts.append(Verdict(notes=(f"{subject}: soft mask lost, drawn without it",)))
        if "/Font" in state:
            font_entry = resolve(state.raw_get("/Font"))
            if isinstance(font_entry, ArrayObject) and font_entry:
                verdict = check_font(self._ctx, font_entry[0], f"{subject}'s font", owner.use, self.resources)
                if verdict.replacement is not None:
                    self._ctx.put(font_entry, 0, verdict.replacement)
                parts.append(verdict)
        for key in ("/TR", "/TR2", "/BG", "/BG2", "/UCR", "/UCR2", "/HT"):
            if key in state and resolve(state.raw_get(key)) is None:
                self._ctx.remove(state, key)
                parts.append(Verdict(notes=(f"{subject}: {key[1:]} lost, ignored",)))
        return combine(parts)

    # -- annotations -----------------------------------------------------------------------------

    def _annotations(self, page: DictionaryObject) -> Verdict:
        """Drop each annotation that is lost or whose appearance cannot be drawn; never lose the page."""
        if "/Annots" not in page:
            return KEEP
        annotations = resolve(page.raw_get("/Annots"))
        if not isinstance(annotations, ArrayObject):
            self._ctx.remove(page, "/Annots")
            return Verdict(notes=("annotations lost, dropped",))
        notes: list[str] = []
        kept = ArrayObject()
        for item in annotations:
            annotation = resolve(item)
            problem = (
                "is lost" if not isinstance(annotation, DictionaryObject) else self._appearance(annotation)
            )
            if problem is None:
                kept.append(item)
            else:
                kind = annotation.get("/Subtype", "") if isinstance(annotation, DictionaryObject) else ""
                notes.append(f"annotation {kind}: {problem}, dropped".replace("annotation :", "annotation:"))
        if len(kept) != len(annotations):
            self._ctx.put(page, "/Annots", kept)
        return Verdict(notes=tuple(dict.fromkeys(notes)))

    def _appearance(self, annotation: DictionaryObject) -> str | None:
        appearances = resolve(annotation.raw_get("/AP")) if "/AP" in annotation else None
        if "/AP" in annotation and not isinstance(appearances, DictionaryObject):
            return "its appearance is lost"
        if appearances is None or "/N" not in appearances:
            return None
        normal = resolve(appearances.raw_get("/N"))
        states = [normal] if isinstance(normal, StreamObject) else None
        if isinstance(normal, DictionaryObject) and not isinstance(normal, StreamObject):
            states = [resolve(normal.raw_get(state)) for state in normal]
        if states is None or any(not isinstance(state, StreamObject) for state in states):
            return "its appearance is lost"
        for state in states:
            verdict = self._appearance_stream(state)
            if verdict.lost is not None:
                return verdict.lost
        return None

    def _appearance_stream(self, stream: StreamObject) -> Verdict:
        return self._ctx.remembered(
            ("form", id(stream)), stream, lambda: self._form(stream, "its appearance", 1)
        )


def _possessive(subject: str) -> str:
    """'the page' -> "the page's"; 'form /Fm0' -> "form /Fm0's"."""
    return f"{subject}'" if subject.endswith("s") else f"{subject}'s"


def _as_far_as_it_goes(what: str) -> Verdict:
    """A stream that stops part way is drawn up to there (PDFium's check then sees whether it shows)."""
    return Verdict(notes=(f"{what}, drawn as far as it goes",))


def _apply(ctx: CheckContext, container: DictionaryObject, key: str, verdict: Verdict) -> Verdict:
    """Carry out a part's verdict on container[key]; the verdict, as seen from the container."""
    if verdict.replacement is not None:
        ctx.put(container, key, verdict.replacement)
    elif verdict.drop:
        ctx.remove(container, key)
    return Verdict(lost=verdict.lost, notes=verdict.notes)


def _apply_each(
    ctx: CheckContext, entries: DictionaryObject, check: Callable[[Any, str], Verdict]
) -> Verdict:
    return combine(_apply(ctx, entries, name, check(entries.raw_get(name), name)) for name in list(entries))


def _strings_by_font(streams: list[StreamObject]) -> dict[str, list[bytes]] | None:
    """The strings each font name shows in streams' content, or None when the content cannot be read."""
    data = b""
    for stream in streams:
        chunk = decoded(stream, _CONTENT_PARSE_LIMIT)
        if chunk is None:
            return None
        data += chunk + b"\n"
        if len(data) > _CONTENT_PARSE_LIMIT:
            return None
    content = DecodedStreamObject()
    content.set_data(data)
    shown: dict[str, list[bytes]] = {}
    font = ""
    try:
        operations = ContentStream(content, None).operations
    except Exception:  # pypdf's content parser raises on malformed operators: cannot tell
        return None
    for operands, operator in operations:
        if operator == b"Tf" and operands:
            font = str(operands[0])
        elif operator in _TEXT_OPERATORS and operands:
            pieces = operands[-1] if operator == b"TJ" else [operands[-1]]
            shown.setdefault(font, []).extend(
                _bytes_of(piece) for piece in pieces if not isinstance(piece, (int, float))
            )
    return shown


def _bytes_of(text: Any) -> bytes:
    if isinstance(text, bytes):
        return text
    original = getattr(text, "original_bytes", None)  # a text string keeps the bytes it was read from
    return original if isinstance(original, bytes) else str(text).encode("latin-1", "replace")
