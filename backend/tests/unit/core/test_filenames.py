"""Uploaded file names: what is stored and shown."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.filenames import MAX_LENGTH, display_filename


@pytest.mark.parametrize(
    ("given_name", "stored"),
    [
        ("..\\..\\win.ini", "win.ini"),
        ("/etc/passwd", "passwd"),
        ("scans/2024/march.pdf", "march.pdf"),
        ("invoice\u202efdp.exe", "invoicefdp.exe"),  # the right-to-left override is gone
        ("tab\tand\nnewline.pdf", "tab and newline.pdf"),
        ("zero\u200bwidth.pdf", "zerowidth.pdf"),
        ("résumé.pdf", "résumé.pdf"),
        ("  spaced  out .pdf  ", "spaced out .pdf"),
        ("..", "upload.pdf"),
        ("", "upload.pdf"),
        (None, "upload.pdf"),
    ],
)
def test_examples(given_name: str | None, stored: str) -> None:
    assert display_filename(given_name) == stored


@given(st.text(max_size=600))
def test_never_a_path_never_invisible_characters(name: str) -> None:
    stored = display_filename(name)
    assert stored
    assert len(stored) <= MAX_LENGTH
    assert "/" not in stored
    assert "\\" not in stored
    assert stored.strip(".")
    assert all(unicodedata.category(ch) not in ("Cc", "Cf") for ch in stored)
    assert stored == display_filename(stored)  # stable: storing it again changes nothing
