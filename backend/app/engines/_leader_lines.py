"""The dotted leaders taken off a page (_leaders) put back in tesseract's words of it.

Without its leaders, tesseract reads a table of contents well, but as two columns: the titles,
then the page numbers in a column of their own, or not at all (a column of short numbers alone
at the right margin is often dropped). Each leader joins its line again: the word level with it
that ends just before it (its title's last) is followed by the leader, as a word of its own,
and by the words level with it that start just after it (its number), which are taken from
wherever tesseract read them and given the title's line. Where nothing was read after a leader
but there is ink there, what follows the leaders on their lines is read again on its own, as
one block of lines (unread, after_strips, placed). A leader with no word beside it (a dotted
rule) is left out of the text, as tesseract leaves out a drawn one.

"Level with" follows the leader's own tilt (a page tilted by less than the engine straightens
still drifts by a line's height across a table of contents).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PIL import Image

from app.engines._leaders import INK_LEVELS, Leader
from app.engines._tesseract_exec import TsvWord
from app.engines._text_lines import key_of

BESIDE_INCHES = 0.5  # a word this near a leader's end, level with it, is beside it
RUN_INCHES = 0.3  # the words after a leader's number go with it across gaps no wider than this
ROW_INCHES = 1.5  # and the rest of its row goes with it, across gaps no wider than this
AFTER_INCHES = 1.5  # what follows a leader on its line, read again where tesseract dropped it
LINE_INCHES = 0.15  # a line's height above a leader's feet, when it has no title to measure
DESCENT = 0.3  # of a line's height, below its feet
MARGIN = 0.1  # of a line's height, above and below it


def leader_words(words: Sequence[TsvWord], leaders: Sequence[Leader], dpi: int) -> list[TsvWord]:
    """tesseract's words of a page read at dpi with each leader in its line."""
    out = list(words)
    for leader in sorted(leaders, key=lambda leader: (leader.top, leader.left)):
        out = _joined(out, leader, leaders, dpi)
    return out


def unread(words: Sequence[TsvWord], leaders: Sequence[Leader], image: Image.Image, dpi: int) -> list[Leader]:
    """The leaders with ink just after them on their line (within BESIDE_INCHES) where no word
    was read."""
    missing = []
    for leader in leaders:
        if _beside(words, leader, dpi)[1] is not None:
            continue
        right = min(image.width, leader.right + round(BESIDE_INCHES * dpi))
        top, bottom = _rows(words, leader, right, dpi)
        if (
            right > leader.right
            and image.crop((leader.right, top, right, bottom)).point(INK_LEVELS).getbbox()
        ):
            missing.append(leader)
    return missing


def after_strips(
    words: Sequence[TsvWord], leaders: Sequence[Leader], image: Image.Image, dpi: int
) -> tuple[Image.Image, tuple[int, int]]:
    """What follows each leader on its line (up to AFTER_INCHES, and up to the first word read
    there) on blank paper, cut to the strips' bounds; and where that image's corner is on the
    page. To be read on its own, as one block of lines."""
    strips = []
    for leader in leaders:
        read = [word.left for word in words if word.left > leader.right and _level(word, leader)]
        right = min([image.width, leader.right + round(AFTER_INCHES * dpi), *read])
        top, bottom = _rows(words, leader, right, dpi)
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
    numbered from block (after the page's own): only those that follow one of leaders (what
    else a strip holds, a speck read as a letter, is not kept)."""
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


def _joined(words: list[TsvWord], leader: Leader, leaders: Sequence[Leader], dpi: int) -> list[TsvWord]:
    """words with the leader put after its title, and its number after it, on the title's line
    (with the rest of its row: a statement's second column of figures)."""
    before, after = _beside(words, leader, dpi)
    if before is None and after is None:
        return words
    number = _rest_of_row(words, _run(words, after, dpi), leader, leaders, dpi) if after is not None else []
    anchor = words[before] if before is not None else words[number[0]]
    block, paragraph, line = key_of(anchor)
    confidences = [words[i].confidence for i in ([before] if before is not None else []) + number]
    dots = TsvWord(
        block,
        paragraph,
        line,
        leader.text,
        sum(confidences) / len(confidences),
        leader.left,
        leader.top,
        leader.right - leader.left,
        leader.bottom - leader.top,
    )
    moved = [dots] + [replace(words[i], block=block, paragraph=paragraph, line=line) for i in number]
    taken = set(number)
    rest = [word for i, word in enumerate(words) if i not in taken]
    # After its title; with none, it starts its number's line, where the number was read.
    last = before if before is not None else number[0] - 1
    at = sum(1 for i in range(last + 1) if i not in taken)
    return rest[:at] + moved + rest[at:]


def _rest_of_row(
    words: Sequence[TsvWord], number: list[int], leader: Leader, leaders: Sequence[Leader], dpi: int
) -> list[int]:
    """number, and the words level with the leader after it, wherever tesseract read them, each
    within ROW_INCHES of the one before: up to one that another leader on the row follows (the
    next entry of a table of contents set in two columns)."""
    row = list(number)
    taken = set(number)
    after = sorted(
        (
            i
            for i, word in enumerate(words)
            if i not in taken and word.left > _right(words[row[-1]]) and _level(word, leader)
        ),
        key=lambda i: words[i].left,
    )
    for i in after:
        word = words[i]
        if word.left - _right(words[row[-1]]) > ROW_INCHES * dpi:
            break
        if any(other.left > word.left and _level(word, other) for other in leaders if other is not leader):
            break
        row.append(i)
    return row


def _beside(words: Sequence[TsvWord], leader: Leader, dpi: int) -> tuple[int | None, int | None]:
    """The word that ends just before the leader, level with it (its title's last), and the one
    that starts just after it (its number's first), by their indexes in words."""
    level = [i for i, word in enumerate(words) if _level(word, leader)]
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


def _level(word: TsvWord, leader: Leader) -> bool:
    """Whether the leader's line, where the word is, passes within the word's height (give or
    take the height of a dot)."""
    middle = leader.middle_at(word.left + word.width / 2)
    slack = leader.dot_height
    return word.top - slack <= middle <= word.top + word.height + slack


def _rows(words: Sequence[TsvWord], leader: Leader, right: int, dpi: int) -> tuple[int, int]:
    """The rows of a leader's line from its end to right, a little more: as tall as its title's
    line (its last word alone may be short; a number is as tall as a capital), or LINE_INCHES
    above its dots' feet when it has no title; and as far below them as descenders go."""
    before = _beside(words, leader, dpi)[0]
    if before is None:
        height = round(LINE_INCHES * dpi)
        top, bottom, x = (
            round(leader.middle_at(leader.right)) - height,
            round(leader.middle_at(leader.right)),
            leader.right,
        )
    else:
        key = key_of(words[before])
        line = [word for word in words if key_of(word) == key]
        top, bottom = min(word.top for word in line), max(word.top + word.height for word in line)
        height, x = bottom - top, _right(words[before])
    # Where the leader's tilt takes the line between its end and right.
    drops = [leader.middle_at(at) - leader.middle_at(x) for at in (leader.right, right)]
    feet = leader.middle_at(x) + max(drops) + leader.dot_height / 2 + DESCENT * height
    margin = round(MARGIN * height)
    return max(0, round(top + min(drops)) - margin), round(max(bottom + max(drops), feet)) + margin


def _right(word: TsvWord) -> int:
    return word.left + word.width


def _run(words: Sequence[TsvWord], first: int, dpi: int) -> list[int]:
    """first, and the words after it on its line with gaps of RUN_INCHES at most."""
    run = [first]
    for i in range(first + 1, len(words)):
        if (
            key_of(words[i]) != key_of(words[first])
            or not 0 <= words[i].left - _right(words[run[-1]]) <= RUN_INCHES * dpi
        ):
            break
        run.append(i)
    return run
