"""tesseract's words of a page as its lines: each line's key (block, paragraph, line), its box
and how many words it has; and boxes on a page that meet, made one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.engines._tesseract_exec import TsvWord

Key = tuple[int, int, int]  # a word's block, paragraph and line
Box = tuple[int, int, int, int]  # left, top, right, bottom


@dataclass(frozen=True, slots=True)
class Line:
    key: Key
    left: int
    top: int
    right: int
    bottom: int
    words: int

    @property
    def height(self) -> int:
        return max(1, self.bottom - self.top)

    @property
    def width(self) -> int:
        return self.right - self.left

    def joined(self, other: Line) -> Line:
        """This line with other put at its end (its words its own)."""
        return Line(
            self.key,
            min(self.left, other.left),
            min(self.top, other.top),
            max(self.right, other.right),
            max(self.bottom, other.bottom),
            self.words,
        )


def key_of(word: TsvWord) -> Key:
    return word.block, word.paragraph, word.line


def text_lines(words: Sequence[TsvWord]) -> dict[Key, Line]:
    """Each line's box, by its key, in the order of its first word."""
    lines: dict[Key, list[TsvWord]] = {}
    for word in words:
        lines.setdefault(key_of(word), []).append(word)
    return {
        key: Line(
            key,
            min(word.left for word in line),
            min(word.top for word in line),
            max(word.left + word.width for word in line),
            max(word.top + word.height for word in line),
            len(line),
        )
        for key, line in lines.items()
    }


def merged(boxes: Sequence[Box], gap: int = 0) -> list[Box]:
    """The boxes with those that overlap, or come within gap of each other, made one (and again,
    until none do)."""
    out: list[Box] = []
    for box in sorted(boxes, key=lambda box: (box[1], box[0])):
        for index, other in enumerate(out):
            if (
                box[0] <= other[2] + gap
                and other[0] <= box[2] + gap
                and box[1] <= other[3] + gap
                and other[1] <= box[3] + gap
            ):
                out[index] = (
                    min(box[0], other[0]),
                    min(box[1], other[1]),
                    max(box[2], other[2]),
                    max(box[3], other[3]),
                )
                break
        else:
            out.append(box)
    return out if len(out) == len(boxes) else merged(out, gap)
