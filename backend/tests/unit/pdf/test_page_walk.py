"""PageWalk: the pages of a file in order, a few at a time, whatever the shape of its page tree."""

from __future__ import annotations

from pathlib import Path

import pikepdf
import pytest
from pikepdf import Name

from app.pdf._page_walk import PageWalk, UnsoundPageTree, reopen_pages


def nested(path: Path, pages: int) -> Path:
    """A file whose pages hang from a tree three levels deep, each page marked with its number."""
    with pikepdf.new() as pdf:
        for number in range(pages):
            pdf.add_blank_page()
            pdf.pages[number].obj.Number = number
        kids = [page.obj for page in pdf.pages]
        root = pdf.Root.Pages

        def node(children: list[pikepdf.Dictionary], parent: pikepdf.Dictionary) -> pikepdf.Dictionary:
            made = pdf.make_indirect(
                pikepdf.Dictionary(Type=Name.Pages, Kids=children, Count=0, Parent=parent)
            )
            for child in children:
                child.Parent = made
            return made

        top = [node(kids[start : start + 5], root) for start in range(0, pages, 5)]
        middle = [node(top[start : start + 2], root) for start in range(0, len(top), 2)]
        for item in middle:
            item.Count = sum(int(child.Count) for child in item.Kids) or len(item.Kids)
        root.Kids = middle
        pdf.save(path, fix_metadata_version=False)
    return path


def numbers(path: Path, reopen_every: int) -> list[int]:
    with PageWalk(path, reopen_every) as walk:
        return [int(page.Number) for page in walk.pages()]


def test_pages_come_in_order_however_often_the_file_is_reopened(tmp_path: Path) -> None:
    path = nested(tmp_path / "nested.pdf", 23)
    assert numbers(path, 64) == list(range(23))
    assert numbers(path, 2) == list(range(23))


def test_a_page_tree_that_loops_is_unsound(tmp_path: Path) -> None:
    with pikepdf.new() as pdf:
        pdf.add_blank_page()
        node = pdf.make_indirect(pikepdf.Dictionary(Type=Name.Pages, Count=1, Parent=pdf.Root.Pages))
        node.Kids = [node]
        pdf.Root.Pages.Kids.append(node)
        pdf.save(tmp_path / "loop.pdf")
    with pytest.raises(UnsoundPageTree), PageWalk(tmp_path / "loop.pdf") as walk:
        list(walk.pages())


def test_reopening_is_bounded_for_long_files() -> None:
    assert reopen_pages(10) == 64
    assert reopen_pages(32_000) == 1000
