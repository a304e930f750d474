"""The page meter's scan of a content stream read a piece at a time (as it inflates): the draws
and the marked-content depth it finds are those of the whole stream, however it is cut, and
pieces with no operator in them (a bomb of zeros) are skipped without being searched."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from app.engines._page_meter import _ContentScan

STREAM = (
    b"q /Im0 Do Q "
    + bytes(1000)
    + b" /Im1 D"  # cut by a run of zeros from nothing: only its `o` is to come
    + b"o /P <<>> BDC "
    + bytes(300)
    + b"/Span BMC (text) Tj EMC EMC /Im1 Do /Im#30 Do"
    + b" " * 500
)


def _scan(pieces: list[bytes]) -> _ContentScan:
    scan = _ContentScan()
    for piece in pieces:
        scan.read(piece)
    return scan


def _result(scan: _ContentScan) -> tuple[Counter[str], int, int]:
    return scan.counts(), scan.deepest, scan.depth


def test_the_whole_stream_read_at_once() -> None:
    counts, deepest, depth = _result(_scan([STREAM]))
    assert counts == Counter({"/Im0": 2, "/Im1": 2})  # /Im#30 is /Im0 spelled with an escape
    assert (deepest, depth) == (2, 0)


def test_an_operator_cut_across_pieces_that_hold_none_is_still_counted() -> None:
    pieces = [b"q /Im0 Do Q ", bytes(1000), b" /Im1", b" D", b"o /P <<>> BDC ", bytes(300)]
    pieces += [b"/Span BMC (text) Tj EMC EMC /Im1 Do /Im#30 Do", b" " * 500]
    assert b"".join(pieces) == STREAM
    assert _result(_scan(pieces)) == _result(_scan([STREAM]))


@pytest.mark.parametrize("seed", range(20))
def test_any_cut_gives_what_the_whole_stream_gives(seed: int) -> None:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(STREAM)), rng.randint(1, 40)))
    pieces = [STREAM[start:end] for start, end in zip([0, *cuts], [*cuts, len(STREAM)], strict=True)]
    assert _result(_scan(pieces)) == _result(_scan([STREAM]))
