"""Vision's words as boxes in pixels of the page turned upright (app.engines._vision_words)."""

from __future__ import annotations

import pytest
from google.cloud import vision_v1
from hypothesis import given
from hypothesis import strategies as st

from app.engines._vision_words import page_words, upright_turn

Point = tuple[float, float]
LETTER = (612.0, 792.0)


def annotation(*words: vision_v1.Word, width: int = 0, height: int = 0) -> vision_v1.TextAnnotation:
    paragraph = vision_v1.Paragraph(words=list(words))
    page = vision_v1.Page(width=width, height=height, blocks=[vision_v1.Block(paragraphs=[paragraph])])
    return vision_v1.TextAnnotation(pages=[page])


def word(text: str, corners: list[Point], confidence: float = 0.9) -> vision_v1.Word:
    """A word whose normalized vertices are corners, in the order given (top-left as read first)."""
    return vision_v1.Word(
        confidence=confidence,
        symbols=[vision_v1.Symbol(text=t) for t in text],
        bounding_box=vision_v1.BoundingPoly(
            normalized_vertices=[vision_v1.NormalizedVertex(x=x, y=y) for x, y in corners]
        ),
    )


def reading(direction: int) -> list[Point]:
    """A box's corners, top-left as read first, for text reading right (0), down (90), left (180)
    or up (270) on the displayed page."""
    left, top, right, bottom = 0.2, 0.2, 0.4, 0.3
    corners = {
        0: [(left, top), (right, top), (right, bottom), (left, bottom)],
        90: [(right, top), (right, bottom), (left, bottom), (left, top)],
        180: [(right, bottom), (left, bottom), (left, top), (right, top)],
        270: [(left, bottom), (left, top), (right, top), (right, bottom)],
    }
    return corners[direction]


@pytest.mark.parametrize(
    ("directions", "turn"),
    [
        ([0, 0, 0], 0),
        ([270, 270, 270, 0], 90),  # reading upward: a quarter turn clockwise sets it upright
        ([90, 90, 0], 270),
        ([180, 180, 180], 180),
        ([270, 270, 0, 0], 0),  # no clear majority: as it came
        ([270, 90, 0], 0),
        ([], 0),
    ],
)
def test_the_page_turns_the_way_most_of_its_words_read(directions: list[int], turn: int) -> None:
    assert upright_turn([reading(d) for d in directions]) == turn
    found = page_words(annotation(*(word("Word", reading(d)) for d in directions)), LETTER, 300)
    assert found.rotation == turn


def test_a_tilted_word_votes_for_the_nearest_quarter_turn() -> None:
    tilted_up = [(0.2, 0.5), (0.22, 0.3), (0.25, 0.31), (0.23, 0.51)]  # reading up, 6 degrees off
    assert upright_turn([tilted_up] * 3) == 90


@given(
    size=st.tuples(st.floats(36, 2000), st.floats(36, 2000)),
    rotation=st.sampled_from([0, 90, 180, 270]),
    fractions=st.tuples(st.floats(0, 0.8), st.floats(0, 0.8), st.floats(0.05, 0.2), st.floats(0.02, 0.2)),
)
def test_a_box_in_the_upright_frame_comes_back(
    size: Point, rotation: int, fractions: tuple[float, float, float, float]
) -> None:
    """Place a word in the page turned upright, see it as Vision would on the displayed page (its
    corners turned back, top-left as read first): the engine finds the turn and the box."""
    width, height = size  # displayed, points
    upright_width, upright_height = (height, width) if rotation in (90, 270) else (width, height)
    fx, fy, fw, fh = fractions
    x0, y0 = fx * upright_width, fy * upright_height
    x1, y1 = x0 + fw * upright_width, y0 + fh * upright_height

    def displayed(x: float, y: float) -> Point:  # undo a clockwise turn of `rotation`
        if rotation == 90:
            return y, height - x
        if rotation == 180:
            return width - x, height - y
        if rotation == 270:
            return width - y, x
        return x, y

    corners = [displayed(x, y) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
    normalized = [(x / width, y / height) for x, y in corners]
    found = page_words(annotation(word("Word", normalized)), size, 300)
    assert found.rotation == rotation
    ((text, box),) = [(w.text, w.bbox) for w in found.words]
    scale = 300 / 72
    assert text == "Word"
    for got, want in zip(box, (x0 * scale, y0 * scale, x1 * scale, y1 * scale), strict=True):
        assert abs(got - want) <= 1.01  # whole pixels, rounded outward


def test_words_keep_their_order_text_and_confidence() -> None:
    found = page_words(
        annotation(
            word("First", reading(0), 0.91),
            word("second", reading(0), 0.5),
            word("", reading(0)),  # no symbols: nothing to place
            vision_v1.Word(symbols=[vision_v1.Symbol(text="x")]),  # no polygon: its text stays in the page's
        ),
        LETTER,
        300,
    )
    assert [(w.text, w.confidence) for w in found.words] == [("First", 0.91), ("second", 0.5)]
    assert found.words[0].bbox == (510, 660, 1020, 990)  # 0.2..0.4 x 0.2..0.3 of 2550 x 3300 pixels


def test_absolute_vertices_are_read_in_the_pages_units() -> None:
    """Were Vision to answer vertices (in page.width/height units, points for a PDF) instead of
    normalized ones, they say the same thing."""
    absolute = vision_v1.Word(
        confidence=0.8,
        symbols=[vision_v1.Symbol(text="Hi")],
        bounding_box=vision_v1.BoundingPoly(
            vertices=[vision_v1.Vertex(x=x, y=y) for x, y in ((61, 79), (122, 79), (122, 158), (61, 158))]
        ),
    )
    found = page_words(annotation(absolute, width=612, height=792), LETTER, 72)
    assert [w.bbox for w in found.words] == [(61, 79, 122, 158)]


def test_boxes_stay_inside_the_image() -> None:
    """Normalized vertices may fall outside 0..1 (Vision's own note); a box never does."""
    found = page_words(
        annotation(word("Edge", [(-0.05, 0.9), (1.1, 0.9), (1.1, 1.02), (-0.05, 1.02)])), LETTER, 72
    )
    assert [w.bbox for w in found.words] == [(0, 712, 612, 792)]  # y from 712.8, rounded outward


def test_a_page_without_area_has_no_boxes() -> None:
    found = page_words(annotation(word("Word", reading(0))), (0.0, 0.0), 300)
    assert (found.words, found.rotation) == ((), 0)
