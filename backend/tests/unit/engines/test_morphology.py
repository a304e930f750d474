"""The lightest and darkest level around each pixel (app.engines._morphology), against a
brute-force reading of every rectangle."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

import pytest
from PIL import Image

from app.engines._morphology import darkest, lightest


def _extreme_by_hand(
    image: Image.Image, across: int, down: int, pick: Callable[[Iterable[int]], int]
) -> list[int]:
    width, height = image.size
    pixels = image.load()
    assert pixels is not None
    return [
        pick(
            pixels[u, v]
            for u in range(max(0, x - across // 2), min(width, x + across // 2 + 1))
            for v in range(max(0, y - down // 2), min(height, y + down // 2 + 1))
        )
        for y in range(height)
        for x in range(width)
    ]


@pytest.mark.parametrize(("across", "down"), [(3, 3), (5, 5), (7, 7), (15, 15), (9, 1), (1, 5), (11, 3)])
@pytest.mark.parametrize("size", [(23, 17), (4, 30), (1, 1)])
def test_lightest_and_darkest_are_the_extreme_levels_in_the_rectangle_around_each_pixel(
    across: int, down: int, size: tuple[int, int]
) -> None:
    rng = random.Random(across * 1000 + down * 100 + size[0])
    image = Image.frombytes("L", size, rng.randbytes(size[0] * size[1]))

    light, dark = lightest(image, across, down), darkest(image, across, down)

    assert light.size == dark.size == image.size
    assert list(light.tobytes()) == _extreme_by_hand(image, across, down, max)
    assert list(dark.tobytes()) == _extreme_by_hand(image, across, down, min)


def test_a_square_is_the_default() -> None:
    rng = random.Random(3)
    image = Image.frombytes("L", (19, 13), rng.randbytes(19 * 13))

    assert lightest(image, 5).tobytes() == lightest(image, 5, 5).tobytes()
    assert darkest(image, 7).tobytes() == darkest(image, 7, 7).tobytes()
