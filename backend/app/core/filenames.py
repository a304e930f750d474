"""File names as people gave them, made safe to store and show.

An uploaded file's name is only ever a label: it is shown in lists and used as
the stem of a downloaded result, never joined to a filesystem path. Before it
is stored it loses any directory part (of either separator), control and
format characters (which include the bidirectional overrides that make
`fdp.exe` read as `exe.pdf`), and surrounding whitespace.

A name a PDF gives something it holds (an attached file, a layer) is shown in a
warning the same way, on one line and cut short (shown_name): a layer named with
terminal escapes had cleared a screen and forged lines of `chunk-ocr run`'s output. The
command line's own lines (which name the files it was given) are printed through
terminal_line, which escapes what shown_name drops.
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


SHOWN_NAME_LENGTH = 80


def shown_name(name: str, limit: int = SHOWN_NAME_LENGTH) -> str:
    """A name a document gives something it holds, to show in a warning: its control and format
    characters (escapes, line breaks, bidirectional overrides) left out, its whitespace one
    space, at most `limit` characters ("..." ending one cut short)."""
    text = "".join(
        " " if ch.isspace() else ch
        for ch in unicodedata.normalize("NFC", name)
        if ch.isspace() or unicodedata.category(ch) not in ("Cc", "Cf")
    )
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def terminal_line(text: str) -> str:
    """text to print as one line of a terminal: each control or format character (escape
    sequences, line breaks, bidirectional overrides) and line or paragraph separator written as
    its Python escape (`\\n`, `\\x1b`, `\\u202e`), so a file named with them is still told
    apart from another, but cannot clear a screen, set a title or forge a line."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii")
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")
        else ch
        for ch in text
    )
