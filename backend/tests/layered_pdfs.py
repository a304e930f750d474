"""PDFs with optional content (layers), built object by object with pikepdf."""

from __future__ import annotations

import zlib
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name, String


def line(y: int, text: str, size: int = 18) -> bytes:
    """A text object showing text in Helvetica (F1) at (72, y)."""
    return b"BT /F1 %d Tf 72 %d Td (%s) Tj ET\n" % (size, y, text.encode())


def hidden(tag: str, content: bytes) -> bytes:
    """content as a marked-content sequence of the optional content named tag in /Properties."""
    return b"/OC /%s BDC\n%s EMC\n" % (tag.encode(), content)


class LayeredPdf:
    """A document whose default configuration shows or hides each group made with group()."""

    def __init__(self, *, base_off: bool = False) -> None:
        self.pdf = pikepdf.new()
        self.font = self.pdf.make_indirect(
            Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
        )
        self._groups = Array()
        self._on = Array()
        self._off = Array()
        config = Dictionary(ON=self._on, OFF=self._off, Order=self._groups)
        if base_off:
            config.BaseState = Name.OFF
        self.pdf.Root.OCProperties = Dictionary(OCGs=self._groups, D=config)
        # pikepdf copies containers when they are assigned: keep the assigned ones
        self._groups = self.pdf.Root.OCProperties.OCGs
        self._on = self.pdf.Root.OCProperties.D.ON
        self._off = self.pdf.Root.OCProperties.D.OFF

    def group(
        self, name: str, *, on: bool | None, listed: bool = True, **entries: object
    ) -> pikepdf.Dictionary:
        """A group in /OCGs (unless not listed), listed ON (on=True), OFF (on=False) or in neither
        list (None); entries: more of its own (/Intent, /Usage)."""
        group = self.pdf.make_indirect(Dictionary(Type=Name.OCG, Name=String(name), **entries))
        if listed:
            self._groups.append(group)
        if on is True:
            self._on.append(group)
        elif on is False:
            self._off.append(group)
        return group

    def membership(self, groups: list[pikepdf.Dictionary], policy: str | None = None) -> pikepdf.Dictionary:
        membership = Dictionary(Type=Name.OCMD, OCGs=Array(groups))
        if policy is not None:
            membership.P = Name("/" + policy)
        return self.pdf.make_indirect(membership)

    def expression(self, expression: pikepdf.Array) -> pikepdf.Dictionary:
        return self.pdf.make_indirect(Dictionary(Type=Name.OCMD, VE=expression))

    def form(
        self, content: bytes, *, oc: pikepdf.Object | None = None, **properties: pikepdf.Object
    ) -> pikepdf.Stream:
        form = self.pdf.make_stream(
            content,
            Type=Name.XObject,
            Subtype=Name.Form,
            BBox=Array([0, 0, 612, 792]),
            Resources=Dictionary(Font=Dictionary(F1=self.font), Properties=_named(properties)),
        )
        if oc is not None:
            form.OC = oc
        return form

    def image(self, *, oc: pikepdf.Object | None = None, gray: int = 0) -> pikepdf.Stream:
        """A 16 x 16 gray image of one shade."""
        image = self.pdf.make_stream(
            zlib.compress(bytes([gray]) * 256),
            Type=Name.XObject,
            Subtype=Name.Image,
            Width=16,
            Height=16,
            ColorSpace=Name.DeviceGray,
            BitsPerComponent=8,
            Filter=Name.FlateDecode,
        )
        if oc is not None:
            image.OC = oc
        return image

    def page(
        self,
        content: bytes,
        *,
        properties: dict[str, pikepdf.Object] | None = None,
        xobjects: dict[str, pikepdf.Stream] | None = None,
        annotations: list[pikepdf.Dictionary] | None = None,
    ) -> pikepdf.Dictionary:
        page = self.pdf.add_blank_page(page_size=(612, 792))
        page.obj.Resources = Dictionary(
            Font=Dictionary(F1=self.font),
            Properties=_named(properties or {}),
            XObject=_named(xobjects or {}),
        )
        page.obj.Contents = self.pdf.make_stream(content)
        if annotations:
            page.obj.Annots = Array([self.pdf.make_indirect(item) for item in annotations])
        return page.obj

    def save(self, path: Path) -> Path:
        self.pdf.save(path)
        return path


def free_text_note(text: str, y: int, *, oc: pikepdf.Object | None = None) -> pikepdf.Dictionary:
    note = Dictionary(
        Type=Name.Annot,
        Subtype=Name.FreeText,
        Rect=Array([72, y, 400, y + 30]),
        Contents=String(text),
        DA=String("/Helv 14 Tf 0 g"),
    )
    if oc is not None:
        note.OC = oc
    return note


def _named(items: dict[str, pikepdf.Object]) -> pikepdf.Dictionary:
    return Dictionary({"/" + name: item for name, item in items.items()})
