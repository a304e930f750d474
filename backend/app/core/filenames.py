"""File names as people gave them, made safe to store and show.

An uploaded file's name is only ever a label: it is shown in lists and used as
the stem of a downloaded result, never joined to a filesystem path. Before it
is stored it loses any directory part (of either separator), control and
format characters (which include the bidirectional overrides that make
`fdp.exe` read as `exe.pdf`), and surrounding whitespace.
"""

from __future__ import annotations

import unicodedata

MAX_LENGTH = 255


def display_filename(name: str | None, default: str = "upload.pdf") -> str:
    text = unicodedata.normalize("NFC", name or "")
    text = text.replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch) not in ("Cc", "Cf")
    )
    text = " ".join(text.split())[:MAX_LENGTH].strip()
    return text if text.strip(".") else default
