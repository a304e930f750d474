"""A large PDF's pages in order, without holding the pages already passed.

QPDF keeps every object it has read until the file is closed (about 2 KB a page), and pikepdf's
page list reads every page dictionary at once. PageWalk walks the page tree itself, a page at a
time, and reopens the file every so many pages, keeping only where it is in the tree (object
numbers and positions in /Kids) across the reopening. Each opening reads the file's
cross-reference index again (about 0.3 us and 0.2 KB an object), so reopen_pages(count) opens
a long file at most OPENINGS times and a short one every MIN_PAGES pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pikepdf
from pikepdf import Name

from app.pdf._pdfium import release_freed_memory

MIN_PAGES = 64
OPENINGS = 32


def reopen_pages(count: int) -> int:
    """How many pages to read between two openings of a file of count pages."""
    return max(MIN_PAGES, count // OPENINGS)


_MAX_DEPTH = 64  # page tree levels; deeper is a loop or a hostile file


class UnsoundPageTree(Exception):
    """The page tree is not one PageWalk can follow (a direct or looping node, no /Kids)."""


class PageWalk:
    """The pages of the file at path, one after another; use as a context manager."""

    def __init__(self, path: Path, reopen_every: int = MIN_PAGES) -> None:
        self._path = path
        self._reopen_every = reopen_every
        self._pdf: pikepdf.Pdf | None = None
        self._stack: list[tuple[tuple[int, int], int]] = []  # (node's object, next kid) from the root
        self._since_open = 0
        self.warnings: list[str] = []  # what QPDF said while reading (a damaged file)

    def __enter__(self) -> PageWalk:
        pdf = self._open()
        root = pdf.Root.get(Name.Pages)
        if not isinstance(root, pikepdf.Dictionary) or not root.is_indirect:
            raise UnsoundPageTree("the page tree's root is not an indirect dictionary")
        self._stack = [(root.objgen, 0)]
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    @property
    def pdf(self) -> pikepdf.Pdf:
        """The open file the last page came from (reopened every reopen_every pages)."""
        assert self._pdf is not None, "PageWalk is used outside its with block"
        return self._pdf

    def pages(self) -> Iterator[pikepdf.Dictionary]:
        """Each page dictionary in order. A page is only good until the next one is asked for,
        and should be let go by then: a page held keeps its file in memory after a reopening."""
        while (page := self._next()) is not None:
            yield page
            del page

    def _next(self) -> pikepdf.Dictionary | None:
        if self._since_open >= self._reopen_every:
            self._close()
            self._open()
        while self._stack:
            node_id, index = self._stack[-1]
            kids = self.pdf.get_object(node_id).get(Name.Kids)
            if not isinstance(kids, pikepdf.Array):
                raise UnsoundPageTree(f"page tree node {node_id[0]} has no /Kids")
            if index >= len(kids):
                self._stack.pop()
                continue
            self._stack[-1] = (node_id, index + 1)
            kid = kids[index]
            if not isinstance(kid, pikepdf.Dictionary) or not kid.is_indirect:
                raise UnsoundPageTree(
                    f"kid {index} of page tree node {node_id[0]} is not an indirect dictionary"
                )
            if kid.get(Name.Type) == Name.Pages or (Name.Kids in kid and kid.get(Name.Type) != Name.Page):
                if len(self._stack) >= _MAX_DEPTH or any(kid.objgen == node for node, _ in self._stack):
                    raise UnsoundPageTree(
                        f"the page tree loops or is deeper than {_MAX_DEPTH} at {kid.objgen[0]}"
                    )
                self._stack.append((kid.objgen, 0))
                continue
            self._since_open += 1
            return kid
        return None

    def _open(self) -> pikepdf.Pdf:
        self._pdf = pikepdf.open(self._path, inherit_page_attributes=False)
        self._since_open = 0
        return self._pdf

    def _close(self) -> None:
        if self._pdf is not None:
            self.warnings += self._pdf.get_warnings()
            self._pdf.close()
            self._pdf = None
            release_freed_memory()
