"""The dotted leaders taken off a page (_leaders) put back in tesseract's words of it.

Without its leaders, tesseract reads a table of contents well, but as two columns: the titles,
then the page numbers in a column of their own. Each leader joins its line again: the words
level with it that end just before it (its title) are followed by the leader, as a word of its
own, and by the words level with it that start just after it (its number), which are taken from
wherever tesseract read them and given the title's line. A leader with no word beside it (a
dotted rule) is left out of the text, as tesseract leaves out a drawn one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PIL import Image

from app.engines._leaders import INK_LEVELS as _INK_LEVELS
from app.engines._leaders import Leader
from app.engines._tesseract_exec import TsvWord

BESIDE_INCHES = 0.5  # a word this near a leader's end, level with it, is beside it
RUN_INCHES = 0.3  # the words after a leader's number go with it across gaps no wider than this
AFTER_INCHES = 1.5  # what follows a leader on its line, read again where tesseract dropped it
LINE_INCHES = 0.15  # a line's height above a leader's feet, when it has no title to measure
DESCENT = 0.3  # of a line's height, below its feet
MARGIN = 0.1  # of a line's height, above and below it


def leader_words(words: Sequence[TsvWord], leaders: Sequence[Leader], dpi: int) -> list[TsvWord]:
    """tesseract's words of a page with each leader in its line, read at dpi; the words as they
    came when there are no leaders."""
    out = list(words)
    for leader in sorted(leaders, key=lambda leader: (leader.top, leader.left)):
        out = _joined(out, leader, dpi)
    return out


def unread(words: Sequence[TsvWord], leaders: Sequence[Leader], image: Image.Image, dpi: int) -> list[Leader]:
    """The leaders with ink just after them (within BESIDE_INCHES, level with them) where no
    word was read: tesseract drops a column of page numbers standing alone at the right margin."""
    missing = []
    for leader in leaders:
        if _beside(words, leader, dpi)[1] is not None:
            continue
        top, bottom = _rows(words, leader, dpi)
        right = min(image.width, leader.right + round(BESIDE_INCHES * dpi))
        if (
            right > leader.right
            and image.crop((leader.right, top, right, bottom)).point(_INK_LEVELS).getbbox()
        ):
            missing.append(leader)
    return missing


def after_strips(
    words: Sequence[TsvWord], leaders: Sequence[Leader], image: Image.Image, dpi: int
) -> tuple[Image.Image, tuple[int, int]]:
    """What follows each leader on its line (AFTER_INCHES of it) on blank paper, cut to the
    strips' bounds, and where that image's corner is on the page: to be read on its own."""
    strips = []
    for leader in leaders:
        top, bottom = _rows(words, leader, dpi)
        middle = (leader.top + leader.bottom) / 2
        read = [word.left for word in words if word.left > leader.right and _level(word, middle, leader)]
        right = min([image.width, leader.right + round(AFTER_INCHES * dpi), *read])  # not what was read
        strips.append((leader.right, top, right, bottom))
    left, top = min(strip[0] for strip in strips), min(strip[1] for strip in strips)
    right, bottom = max(strip[2] for strip in strips), max(strip[3] for strip in strips)
    paper = Image.new("L", (right - left, bottom - top), 255)
    for strip in strips:
        paper.paste(image.crop(strip), (strip[0] - left, strip[1] - top))
    return paper, (left, top)


def placed(
    words: Sequence[TsvWord], corner: tuple[int, int], block: int, leaders: Sequence[Leader], dpi: int
) -> list[TsvWord]:
    """Words read on an image whose corner is at corner on the page, moved there, their blocks
    numbered from block (after the page's own): only those that follow one of leaders (as
    _beside finds them; what else a strip holds, a speck read as a letter, is not kept)."""
    moved = [
        replace(word, block=block + word.block, left=word.left + corner[0], top=word.top + corner[1])
        for word in words
    ]
    kept: set[int] = set()
    for leader in leaders:
        after = _beside(moved, leader, dpi)[1]
        if after is not None:
            kept.update(_run(moved, after, dpi))
    return [word for i, word in enumerate(moved) if i in kept]


def _rows(words: Sequence[TsvWord], leader: Leader, dpi: int) -> tuple[int, int]:
    """The rows of a leader's line, a little more: its title's line's (the last word alone may
    be short, a number is as tall as a capital), or LINE_INCHES above its dots' feet when it has
    no title; and as far below them as the line's descenders go."""
    before = _beside(words, leader, dpi)[0]
    if before is None:
        height = round(LINE_INCHES * dpi)
        top, bottom = leader.bottom - height, leader.bottom
    else:
        key = _key(words[before])
        line = [word for word in words if _key(word) == key]
        top, bottom = min(word.top for word in line), max(word.top + word.height for word in line)
        height = bottom - top
    margin = round(MARGIN * height)
    return max(0, top - margin), max(bottom, leader.bottom + round(DESCENT * height)) + margin


def _key(word: TsvWord) -> tuple[int, int, int]:
    return word.block, word.paragraph, word.line


def _beside(words: Sequence[TsvWord], leader: Leader, dpi: int) -> tuple[int | None, int | None]:
    """The word that ends just before the leader, level with it (its title), and the one that
    starts just after it (its number), by their indexes in words."""
    middle = (leader.top + leader.bottom) / 2
    level = [i for i, word in enumerate(words) if _level(word, middle, leader)]
    reach = BESIDE_INCHES * dpi
    before = max(
        (i for i in level if leader.left - reach <= _right(words[i]) <= leader.left + 1),
        key=lambda i: _right(words[i]),
        default=None,
    )
    after = min(
        (i for i in level if leader.right - 1 <= words[i].left <= leader.right + reach),
        key=lambda i: words[i].left,
        default=None,
    )
    return before, after


def _joined(words: list[TsvWord], leader: Leader, dpi: int) -> list[TsvWord]:
    before, after = _beside(words, leader, dpi)
    if before is None and after is None:
        return words
    number = _run(words, after, dpi) if after is not None else []
    anchor = words[before] if before is not None else words[number[0]]
    line = (anchor.block, anchor.paragraph, anchor.line)
    confidences = [words[i].confidence for i in ([before] if before is not None else []) + number]
    dots = TsvWord(
        *line,
        leader.text,
        sum(confidences) / len(confidences),
        leader.left,
        leader.top,
        leader.right - leader.left,
        leader.bottom - leader.top,
    )
    moved = [dots] + [replace(words[i], block=line[0], paragraph=line[1], line=line[2]) for i in number]
    taken = set(number)
    rest = [word for i, word in enumerate(words) if i not in taken]
    if before is not None:  # after its title
        at = sum(1 for i in range(before + 1) if i not in taken)
    else:  # no title: the leader starts its number's line, where the number was read
        at = sum(1 for i in range(number[0]) if i not in taken)
    return rest[:at] + moved + rest[at:]


def _level(word: TsvWord, middle: float, leader: Leader) -> bool:
    """Whether the leader's middle is within the word's height, give or take the leader's."""
    slack = leader.bottom - leader.top
    return word.top - slack <= middle <= word.top + word.height + slack


def _right(word: TsvWord) -> int:
    return word.left + word.width


def _run(words: list[TsvWord], first: int, dpi: int) -> list[int]:
    """first, and the words after it on its line with gaps of RUN_INCHES at most."""
    run = [first]
    key = (words[first].block, words[first].paragraph, words[first].line)
    for i in range(first + 1, len(words)):
        word, last = words[i], words[run[-1]]
        if (word.block, word.paragraph, word.line) != key or not 0 <= word.left - _right(
            last
        ) <= RUN_INCHES * dpi:
            break
        run.append(i)
    return run
