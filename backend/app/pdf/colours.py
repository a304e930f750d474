"""Colour spaces of a damaged file: what PDFium needs to draw with them, and sane defaults when it is lost.

PDFium does not draw an image whose colour space it cannot load: a lost ICC
profile blanks the image, and with it a scanned page. A lost ICC profile (or a
lost colour space object) is replaced by the device space with as many
components, read from the profile's /N or else from the image's own data; a
lost calibrated space by its device space; a lost tint transform of a
one-ink Separation by a grey ramp. A lost palette (Indexed lookup) cannot be
guessed: the page that needs it is lost.
"""

from __future__ import annotations

from typing import Any

from pypdf.generic import ArrayObject, DictionaryObject, FloatObject, NameObject, NumberObject, StreamObject

from app.pdf.damage import KEEP, CheckContext, Verdict, combine, lose, replace
from app.pdf.streams import decoded, device_space, resolve, space_components, stream_fault

_CALIBRATED = {"/CalGray": 1, "/CalRGB": 3, "/Lab": 3}


def check_colour_space(ctx: CheckContext, value: Any, subject: str, hint: int | None = None) -> Verdict:
    """Verdict on a colour space (a name, an array, or a reference to one); hint: components if known."""
    space = resolve(value)
    if space is None:
        substitute = device_space(hint)
        return replace(substitute, f"{subject}: colour space {ctx.missing(value)}, drawn as {substitute[1:]}")
    if not isinstance(space, ArrayObject) or not space:
        return KEEP  # a device space name (or a resource name PDFium looks up itself)
    return ctx.remembered((id(space), hint), space, lambda: _check_array(ctx, space, subject, hint))


def components_of(space: Any) -> int | None:
    """How many components a colour space has, as far as its intact parts tell."""
    space = resolve(space)
    if isinstance(space, NameObject):
        return space_components(str(space))
    if not isinstance(space, ArrayObject) or not space:
        return None
    family = str(resolve(space[0]))
    if family == "/ICCBased" and len(space) > 1:
        profile = resolve(space[1])
        number = profile.get("/N") if isinstance(profile, DictionaryObject) else None
        return int(number) if isinstance(number, int) else None
    if family in _CALIBRATED:
        return _CALIBRATED[family]
    if family in ("/Indexed", "/I", "/Separation"):
        return 1
    if family == "/DeviceN" and len(space) > 1:
        names = resolve(space[1])
        return len(names) if isinstance(names, ArrayObject) else None
    return space_components(family)


def _check_array(ctx: CheckContext, space: ArrayObject, subject: str, hint: int | None) -> Verdict:
    family = str(resolve(space[0]))
    if family == "/ICCBased":
        return _check_icc(ctx, space, subject, hint)
    if family in _CALIBRATED:
        if len(space) > 1 and resolve(space[1]) is None:
            substitute = device_space(_CALIBRATED[family])
            return replace(substitute, f"{subject}: {family[1:]} parameters lost, drawn as {substitute[1:]}")
        return KEEP
    if family in ("/Indexed", "/I"):
        return _check_indexed(ctx, space, subject)
    if family in ("/Separation", "/DeviceN"):
        return _check_inks(ctx, space, subject, family)
    if family == "/Pattern" and len(space) > 1:
        return _apply_in(ctx, space, 1, check_colour_space(ctx, space[1], subject, None))
    return KEEP


def _check_icc(ctx: CheckContext, space: ArrayObject, subject: str, hint: int | None) -> Verdict:
    reference = space[1] if len(space) > 1 else None
    profile = resolve(reference)
    if isinstance(profile, StreamObject):
        fault = stream_fault(profile)
        if fault is None:
            if "/Alternate" in profile and resolve(profile.raw_get("/Alternate")) is None:
                ctx.remove(profile, "/Alternate")  # used only when the profile is unusable, which it is not
            return KEEP
        number = profile.get("/N")
        components = int(number) if isinstance(number, int) else hint
        substitute = device_space(components)
        return replace(substitute, f"{subject}: ICC profile {fault}, drawn as {substitute[1:]}")
    phrase = ctx.missing(reference) if reference is not None and profile is None else "is missing"
    substitute = device_space(hint)
    return replace(substitute, f"{subject}: ICC profile {phrase}, drawn as {substitute[1:]}")


def _check_indexed(ctx: CheckContext, space: ArrayObject, subject: str) -> Verdict:
    if len(space) < 4:
        return KEEP
    lookup = resolve(space[3])
    if lookup is None:
        return lose(f"the palette of {subject} {ctx.missing(space[3])}")
    if isinstance(lookup, StreamObject) and (fault := stream_fault(lookup)) is not None:
        return lose(f"the palette of {subject} {fault}")
    palette_bytes = _length(lookup)
    try:
        entries = int(resolve(space[2])) + 1
    except (TypeError, ValueError):
        entries = 0
    base_components = palette_bytes // entries if entries > 0 else None
    if base_components not in (1, 3, 4):
        base_components = None
    return _apply_in(ctx, space, 1, check_colour_space(ctx, space[1], subject, base_components))


def _length(lookup: Any) -> int:
    """Bytes in a palette: a stream's decoded data or a string's bytes."""
    if isinstance(lookup, StreamObject):
        data = decoded(lookup, 4 * 256)
        return len(data) if data is not None else 0
    if isinstance(lookup, bytes):
        return len(lookup)
    original = getattr(lookup, "original_bytes", None)  # a text string keeps the bytes it was read from
    return len(original) if isinstance(original, bytes) else 0


def _check_inks(ctx: CheckContext, space: ArrayObject, subject: str, family: str) -> Verdict:
    """Separation [/Separation name alternate tint] or DeviceN [/DeviceN names alternate tint ...]."""
    if len(space) < 4:
        return KEEP
    alternate = _apply_in(ctx, space, 2, check_colour_space(ctx, space[2], subject, None))
    if alternate.lost:
        return alternate
    tint = resolve(space[3])
    fault = stream_fault(tint) if isinstance(tint, StreamObject) else None
    if tint is not None and fault is None:
        return alternate
    phrase = ctx.missing(space[3]) if tint is None else fault
    inks = components_of(space)
    out = components_of(space[2])
    if inks != 1 or out not in (1, 3, 4):
        return lose(f"the colour conversion of {subject} {phrase}")
    ctx.put(space, 3, _ink_ramp(out))
    return combine([alternate, Verdict(notes=(f"{subject}: tint transform {phrase}, drawn as a grey ramp",))])


def _ink_ramp(components: int) -> DictionaryObject:
    """A type 2 function from one ink's tint (0 none, 1 full) to white..black in a device space."""
    white, black = {1: ([1], [0]), 3: ([1, 1, 1], [0, 0, 0]), 4: ([0, 0, 0, 0], [0, 0, 0, 1])}[components]
    return DictionaryObject(
        {
            NameObject("/FunctionType"): NumberObject(2),
            NameObject("/Domain"): ArrayObject([FloatObject(0), FloatObject(1)]),
            NameObject("/C0"): ArrayObject([FloatObject(v) for v in white]),
            NameObject("/C1"): ArrayObject([FloatObject(v) for v in black]),
            NameObject("/N"): NumberObject(1),
        }
    )


def _apply_in(ctx: CheckContext, array: ArrayObject, index: int, verdict: Verdict) -> Verdict:
    """Apply a part's replacement inside array; the verdict, as the array's own, to return."""
    if verdict.replacement is not None:
        ctx.put(array, index, verdict.replacement)
    return Verdict(lost=verdict.lost, notes=verdict.notes)
