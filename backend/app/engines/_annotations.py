"""The visible text of a page's annotations and form fields, which joins the page's text.

PDFium's text page holds what the page's content draws. A FreeText note or a filled form
field is drawn by an annotation instead, so without this its text is missing: a page of
FreeText notes read as nothing, a filled form as its labels without the answers. What is read:

- FreeText annotations: /Contents, the text the note displays (its rich text, /RC, stripped
  of markup when /Contents is empty).
- Form fields (widget annotations): a text field's value (never a password field's); a combo
  or list box's selected options (by their labels where the form can say); a check box or
  radio button that is on: its export value ("Yes" for a plain box, the chosen option's name
  in a radio group), the answer the form records where the tick on the page has no text; off,
  it adds nothing. Push buttons and signatures add nothing.
- Nothing else. Comments, highlights and sticky notes keep their /Contents in a pop-up, off
  the page. Stamps and other annotations whose only text is in their appearance stream are
  not read: PDFium extracts text from a page's content only, and flattening the annotation
  into it would need the page reloaded.

Values are read, not appearance streams: a field without an appearance stream (a form saved
with NeedAppearances, as many form fillers do) has its value all the same, and no value can be
counted twice (once from the stream, once from /V). A field shown twice on a page is read
once. A value the page's own text already holds inside the annotation's rectangle (a form
flattened by its producer with its fields left on) is not added again. Hidden annotations are
skipped.

Where the document has its form (PdfDocument.init_forms, which _pages.open_pdf calls so that
rendered pages draw the fields), PDFium answers for each field, values inherited from parent
fields included. A chunk cut from a document loses the document's /AcroForm (PDFium copies
pages, not the catalog), so there the widget's own dictionary is read: /V, /FT and /Ff where
the field and its widget are one dictionary (nearly every field), /AS for check boxes and
radio buttons; a value only a parent field holds (a field with several widgets) is missed,
and a multiple choice's list of values too. Such a chunk's rendered pages show no fields, so
undrawn_field_text gives what OCR cannot see.

The text comes after the page's own text, one line per annotation, top to bottom and left to
right. A page without annotations costs one call.
"""

from __future__ import annotations

import ctypes
import html
import re
from collections.abc import Callable
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.engines._page_chars import bounded_text

_HIDDEN = pdfium_c.FPDF_ANNOT_FLAG_HIDDEN | pdfium_c.FPDF_ANNOT_FLAG_NOVIEW
_CHOICES = (pdfium_c.FPDF_FORMFIELD_COMBOBOX, pdfium_c.FPDF_FORMFIELD_LISTBOX)
_TOGGLES = (pdfium_c.FPDF_FORMFIELD_CHECKBOX, pdfium_c.FPDF_FORMFIELD_RADIOBUTTON)
_PASSWORD = pdfium_c.FPDF_FORMFLAG_TEXT_PASSWORD  # field flag bit 14
_PUSH_BUTTON = 1 << 16  # field flag bit 17
_MARKUP_BREAK = re.compile(r"<br\s*/?>|</p\s*>", re.IGNORECASE)
_MARKUP_TAG = re.compile(r"<[^>]*>")


def with_annotation_text(text: str, page: pdfium.PdfPage, textpage: pdfium.PdfTextPage | None = None) -> str:
    """text (the page's own) followed by its annotations' visible text, if any."""
    return joined_text(text, annotation_text(page, textpage))


def undrawn_field_text(page: pdfium.PdfPage) -> str:
    """The form fields' text a render of the page leaves out: all of it when the document has
    no form environment (PDFium draws fields only through one), else nothing."""
    return "" if page.formenv else annotation_text(page, notes=False)


def annotation_text(
    page: pdfium.PdfPage, textpage: pdfium.PdfTextPage | None = None, *, notes: bool = True
) -> str:
    """The visible text of the page's annotations (FreeText notes too, unless notes=False) and
    form fields, one line each ("" if none). textpage, the page's own, is opened here when not
    given and needed."""
    count = pdfium_c.FPDFPage_GetAnnotCount(page)
    if count <= 0:
        return ""
    own_textpage = None
    found: list[tuple[float, float, str]] = []
    fields_read: set[str] = set()
    try:
        for index in range(count):
            annotation = pdfium_c.FPDFPage_GetAnnot(page, index)
            if not annotation:
                continue
            try:
                value = _visible_text(annotation, page.formenv, fields_read, notes)
                if not value:
                    continue
                left, top, right, bottom = _rect(annotation)
                if textpage is None:
                    textpage = own_textpage = page.get_textpage()
                if _already_there(value, bounded_text(textpage, (left, bottom, right, top))):
                    continue
                found.append((-round(top), left, value))
            finally:
                pdfium_c.FPDFPage_CloseAnnot(annotation)
    finally:
        if own_textpage is not None:
            own_textpage.close()
    found.sort(key=lambda item: item[:2])
    return "\n".join(value for _, _, value in found)


def joined_text(text: str, extra: str) -> str:
    """A page's text with more text after it, on a line of its own."""
    if not extra:
        return text
    return f"{text.rstrip()}\n{extra}" if text.strip() else extra


def _visible_text(annotation: Any, form: Any, fields_read: set[str], notes: bool) -> str:
    if pdfium_c.FPDFAnnot_GetFlags(annotation) & _HIDDEN:
        return ""
    subtype = pdfium_c.FPDFAnnot_GetSubtype(annotation)
    if subtype == pdfium_c.FPDF_ANNOT_FREETEXT:
        return _note_text(annotation) if notes else ""
    if subtype == pdfium_c.FPDF_ANNOT_WIDGET:
        if form:
            return _field_text(form, annotation, fields_read)
        return _widget_text(annotation, fields_read)
    return ""


def _note_text(annotation: Any) -> str:
    contents = _string(annotation, b"Contents")
    if not contents.strip():
        rich = _string(annotation, b"RC")
        contents = html.unescape(_MARKUP_TAG.sub("", _MARKUP_BREAK.sub("\n", rich)))
    return _lines(contents)


def _field_text(form: Any, annotation: Any, fields_read: set[str]) -> str:
    """A field's text as the document's form environment gives it."""
    kind = pdfium_c.FPDFAnnot_GetFormFieldType(form, annotation)
    if kind in _TOGGLES:
        # PDFium tells the state from the appearance stream's on-state name; without the
        # stream (NeedAppearances) the appearance state /AS still says it
        state = _string(annotation, b"AS")
        if pdfium_c.FPDFAnnot_IsChecked(form, annotation):
            return _lines(_wide(pdfium_c.FPDFAnnot_GetFormFieldExportValue, form, annotation) or state)
        return "" if state in ("", "Off") else _lines(state)
    if kind == pdfium_c.FPDF_FORMFIELD_TEXTFIELD:
        if pdfium_c.FPDFAnnot_GetFormFieldFlags(form, annotation) & _PASSWORD:
            return ""
    elif kind not in _CHOICES:
        return ""  # push buttons, signatures, XFA fields
    if not _first_time(_wide(pdfium_c.FPDFAnnot_GetFormFieldName, form, annotation), fields_read):
        return ""
    if kind in _CHOICES:
        selected = [
            _wide(pdfium_c.FPDFAnnot_GetOptionLabel, form, annotation, option)
            for option in range(max(0, pdfium_c.FPDFAnnot_GetOptionCount(form, annotation)))
            if pdfium_c.FPDFAnnot_IsOptionSelected(form, annotation, option)
        ]
        if selected:
            return _lines("\n".join(selected))
    return _lines(_wide(pdfium_c.FPDFAnnot_GetFormFieldValue, form, annotation))


def _widget_text(annotation: Any, fields_read: set[str]) -> str:
    """A field's text from its widget's own dictionary (no form environment)."""
    kind = _string(annotation, b"FT")
    flags = _number(annotation, b"Ff")
    state = _string(annotation, b"AS")  # only buttons have appearance states
    if state or kind == "Btn":
        if flags & _PUSH_BUTTON:
            return ""
        if not state and not _first_time(_string(annotation, b"T"), fields_read):
            return ""
        value = state or _string(annotation, b"V")
        return "" if value in ("", "Off") else _lines(value)
    if kind not in ("Tx", "Ch") or (kind == "Tx" and flags & _PASSWORD):
        return ""
    if not _first_time(_string(annotation, b"T"), fields_read):
        return ""
    return _lines(_string(annotation, b"V"))


def _first_time(name: str, fields_read: set[str]) -> bool:
    """Whether this field (by name) is read for the first time on the page."""
    if name in fields_read:
        return False
    if name:
        fields_read.add(name)
    return True


def _rect(annotation: Any) -> tuple[float, float, float, float]:
    rect = pdfium_c.FS_RECTF()
    if not pdfium_c.FPDFAnnot_GetRect(annotation, rect):
        return 0.0, 0.0, 0.0, 0.0
    return rect.left, rect.top, rect.right, rect.bottom


def _already_there(value: str, page_text_inside: str) -> bool:
    """The value is among the page's own text inside the annotation's rectangle."""
    inside = " ".join(page_text_inside.split()).casefold()
    return bool(inside) and " ".join(value.split()).casefold() in inside


def _lines(text: str) -> str:
    """Line breaks of any kind made newlines; blank lines and outer spaces gone."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _string(annotation: Any, key: bytes) -> str:
    """A string or name in the annotation's own dictionary ("" when absent)."""
    return _wide(pdfium_c.FPDFAnnot_GetStringValue, annotation, key)


def _number(annotation: Any, key: bytes) -> int:
    value = ctypes.c_float()
    if not pdfium_c.FPDFAnnot_GetNumberValue(annotation, key, ctypes.byref(value)):
        return 0
    return int(value.value)


def _wide(function: Callable[..., int], *args: Any) -> str:
    """A UTF-16 string from one of PDFium's two-call getters (size first, then the text)."""
    size = function(*args, None, 0)
    if size <= 2:
        return ""
    buffer = ctypes.create_string_buffer(size)
    function(*args, ctypes.cast(buffer, ctypes.POINTER(pdfium_c.FPDF_WCHAR)), size)
    return buffer.raw[: size - 2].decode("utf-16-le", errors="replace")
