"""Fonts of a damaged file: drop what a viewer can do without, substitute what it can guess.

A lost embedded font program, font descriptor, width table, encoding
dictionary or text map (/ToUnicode) is dropped: viewers draw the text with a
substitute font, which OCR reads as well. A font that is lost as a whole (its
dictionary, a composite font's descendant or CMap, a Type 3 font's glyph
table) can be replaced only when the text drawn with it is plain one-byte
ASCII, as in most Latin documents: then Helvetica shows the same letters.
Anything else (two-byte codes, another encoding) would come out as the wrong
characters, so the page that shows it is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from pypdf.generic import ArrayObject, DictionaryObject, NameObject, StreamObject

from app.pdf.damage import KEEP, CheckContext, Verdict, combine, lose, replace
from app.pdf.streams import resolve, stream_fault

_FONT_PROGRAMS = ("/FontFile", "/FontFile2", "/FontFile3")
_PRINTABLE = frozenset(range(0x20, 0x7F)) | frozenset(b"\t\r\n")


class FontUse(Enum):
    UNUSED = "unused"  # the content draws no text with the font
    ASCII = "ascii"  # every string drawn with it is printable one-byte ASCII
    OTHER = "other"  # some string is not: Helvetica would show the wrong characters
    UNKNOWN = "unknown"  # the content could not be read to tell


def check_font(
    ctx: CheckContext,
    value: Any,
    name: str,
    use: Callable[[str], FontUse],
    resources: Callable[[Any, str], Verdict],
) -> Verdict:
    """Verdict on the font resource `name`; use tells how the content draws with it, resources checks a
    Type 3 font's own resources."""
    font = resolve(value)
    if not isinstance(font, DictionaryObject):
        phrase = ctx.missing(value) if font is None else "is not a font"
        return _unusable(f"font {name} {phrase}", name, use)
    verdict = ctx.remembered(("font", id(font)), font, lambda: _check_dictionary(ctx, font, name, resources))
    if verdict.lost is not None:
        return _unusable(verdict.lost, name, use).with_notes(verdict.notes)
    return verdict


def helvetica() -> DictionaryObject:
    return DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )


def classify_strings(strings: list[bytes] | None) -> FontUse:
    if strings is None:
        return FontUse.UNKNOWN
    if not strings:
        return FontUse.UNUSED
    return FontUse.ASCII if all(set(text) <= _PRINTABLE for text in strings) else FontUse.OTHER


def _unusable(reason: str, name: str, use: Callable[[str], FontUse]) -> Verdict:
    """Helvetica stands in either way (harmless where the page that needs the font is lost)."""
    found = use(name)
    if found is FontUse.UNUSED:  # nothing on this page is drawn with it: nothing to report here
        return Verdict(replacement=helvetica())
    if found is FontUse.ASCII:
        return replace(helvetica(), f"{reason}, drawn with Helvetica")
    return Verdict(lost=reason, replacement=helvetica())


def _check_dictionary(
    ctx: CheckContext, font: DictionaryObject, name: str, resources: Callable[[Any, str], Verdict]
) -> Verdict:
    """lost here means the font is unusable as it is (the caller decides whether Helvetica may stand in)."""
    subject = f"font {name}"
    parts = [_drop_if_lost(ctx, font, "/ToUnicode", f"{subject}: text map", stream=True)]
    subtype = font.get("/Subtype")
    if subtype == "/Type0":
        parts.append(_check_composite(ctx, font, subject))
    elif subtype == "/Type3":
        parts.append(_check_type3(ctx, font, subject, resources))
    else:
        parts.append(_check_descriptor(ctx, font, subject))
        for key, what in (("/Encoding", "encoding"), ("/Widths", "width table")):
            parts.append(_drop_if_lost(ctx, font, key, f"{subject}: {what}", stream=False))
    return combine(parts)


def _check_composite(ctx: CheckContext, font: DictionaryObject, subject: str) -> Verdict:
    encoding = font.raw_get("/Encoding") if "/Encoding" in font else None
    cmap = resolve(encoding)
    if encoding is not None and cmap is None:
        return lose(f"{subject}'s encoding {ctx.missing(encoding)}")
    if isinstance(cmap, StreamObject) and (fault := stream_fault(cmap)) is not None:
        return lose(f"{subject}'s encoding {fault}")
    descendants_value = font.raw_get("/DescendantFonts") if "/DescendantFonts" in font else None
    descendants = resolve(descendants_value)
    if not isinstance(descendants, ArrayObject) or not descendants:
        return lose(f"{subject}'s descendant font {ctx.missing(descendants_value)}")
    descendant = resolve(descendants[0])
    if not isinstance(descendant, DictionaryObject):
        return lose(f"{subject}'s descendant font {ctx.missing(descendants[0])}")
    parts = [
        _check_descriptor(ctx, descendant, subject),
        _drop_if_lost(ctx, descendant, "/W", f"{subject}: width table", stream=False),
    ]
    gid_map = descendant.raw_get("/CIDToGIDMap") if "/CIDToGIDMap" in descendant else None
    mapping = resolve(gid_map)
    if gid_map is not None and (
        mapping is None or (isinstance(mapping, StreamObject) and stream_fault(mapping) is not None)
    ):
        ctx.put(descendant, "/CIDToGIDMap", NameObject("/Identity"))
        parts.append(Verdict(notes=(f"{subject}: glyph map lost, drawn with the identity map",)))
    return combine(parts)


def _check_type3(
    ctx: CheckContext, font: DictionaryObject, subject: str, resources: Callable[[Any, str], Verdict]
) -> Verdict:
    procs_value = font.raw_get("/CharProcs") if "/CharProcs" in font else None
    procs = resolve(procs_value)
    if not isinstance(procs, DictionaryObject):
        return lose(f"{subject}'s glyphs {ctx.missing(procs_value)}")
    encoding_value = font.raw_get("/Encoding") if "/Encoding" in font else None
    if encoding_value is not None and resolve(encoding_value) is None:
        return lose(f"{subject}'s encoding {ctx.missing(encoding_value)}")
    lost_glyphs = []
    for glyph in list(procs):
        proc = resolve(procs.raw_get(glyph))
        if not isinstance(proc, StreamObject) or stream_fault(proc) is not None:
            ctx.remove(procs, glyph)
            lost_glyphs.append(glyph)
    parts = []
    if lost_glyphs:
        parts.append(Verdict(notes=(f"{subject}: {len(lost_glyphs)} glyphs lost, not drawn",)))
    if "/Resources" in font:
        inner = resources(font.raw_get("/Resources"), f"{subject}'s glyphs")
        parts.append(Verdict(notes=inner.notes) if inner.lost is None else lose(inner.lost))
    return combine(parts)


def _check_descriptor(ctx: CheckContext, font: DictionaryObject, subject: str) -> Verdict:
    if "/FontDescriptor" not in font:
        return KEEP
    value = font.raw_get("/FontDescriptor")
    descriptor = resolve(value)
    if not isinstance(descriptor, DictionaryObject):
        ctx.remove(font, "/FontDescriptor")
        return Verdict(
            notes=(f"{subject}: font descriptor {ctx.missing(value)}, drawn with a substitute font",)
        )
    notes = []
    for key in _FONT_PROGRAMS:
        if key not in descriptor:
            continue
        program_value = descriptor.raw_get(key)
        program = resolve(program_value)
        fault = (
            ctx.missing(program_value)
            if program is None
            else stream_fault(program)
            if isinstance(program, StreamObject)
            else "is not a stream"
        )
        if fault is not None:
            ctx.remove(descriptor, key)
            notes.append(f"{subject}: embedded font {fault}, drawn with a substitute font")
    return Verdict(notes=tuple(notes))


def _drop_if_lost(
    ctx: CheckContext, owner: DictionaryObject, key: str, what: str, *, stream: bool
) -> Verdict:
    """Remove owner[key] when it refers to a lost object (or, for a stream, unreadable data)."""
    if key not in owner:
        return KEEP
    value = owner.raw_get(key)
    target = resolve(value)
    if target is None:
        fault: str | None = ctx.missing(value)
    elif stream and isinstance(target, StreamObject):
        fault = stream_fault(target)
    else:
        fault = None
    if fault is None:
        return KEEP
    ctx.remove(owner, key)
    return Verdict(notes=(f"{what} {fault}, dropped",))
