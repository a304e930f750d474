"""What a repair found, page by page, and the verdicts its page check passes around.

A Verdict is what checking one object (a font, an image, a colour space)
concluded: the object can be drawn as it is, or with a substitute put in its
place (replacement), or without it (drop), or not at all (lost: the page that
needs it cannot be drawn). Notes say what was substituted, for the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

_REMOVE = object()


@dataclass(frozen=True, slots=True)
class PageDamage:
    """One page of a repaired file that is not as it was."""

    page: int  # 1-based, as in the original
    lost: bool  # True: a blank placeholder page stands in its place
    reasons: tuple[str, ...]  # lost: why; kept: what was substituted so that it can be drawn


@dataclass(frozen=True, slots=True)
class Verdict:
    lost: str | None = None  # why the object cannot be drawn at all
    notes: tuple[str, ...] = ()  # substitutions made inside it (already applied)
    replacement: Any = None  # put this in the container in its place
    drop: bool = False  # remove it from its container

    def with_notes(self, notes: Iterable[str]) -> Verdict:
        return Verdict(self.lost, (*self.notes, *notes), self.replacement, self.drop)


KEEP = Verdict()


def lose(reason: str) -> Verdict:
    return Verdict(lost=reason)


def replace(replacement: Any, note: str) -> Verdict:
    return Verdict(notes=(note,), replacement=replacement)


def drop(note: str) -> Verdict:
    return Verdict(notes=(note,), drop=True)


def combine(verdicts: Iterable[Verdict]) -> Verdict:
    """The verdict of an object made of these parts: lost with the first lost part, all notes kept."""
    lost: str | None = None
    notes: list[str] = []
    for verdict in verdicts:
        lost = lost or verdict.lost
        notes += verdict.notes
    return Verdict(lost=lost, notes=tuple(notes))


@dataclass(slots=True)
class CheckContext:
    """Shared by the checks of one file: how to say an object is missing, and what was checked already."""

    missing: Callable[[Any], str]  # a reference that resolves to nothing -> "is cut off", ...
    memo: dict[Any, tuple[Any, Verdict]] = field(default_factory=dict)
    busy: set[int] = field(default_factory=set)  # ids of objects being checked (a cycle returns KEEP)
    # Substitutions wait until every page is checked: a page checked later must see what it draws
    # as the file has it (a font one page does not use may be one the next page needs).
    edits: list[tuple[Any, Any, Any]] = field(default_factory=list)  # (container, key, value | _REMOVE)

    def put(self, container: Any, key: str | int, value: Any) -> None:
        """Set container[key] = value once the check is over."""
        self.edits.append((container, key, value))

    def remove(self, container: Any, key: str) -> None:
        """Delete container[key] once the check is over."""
        self.edits.append((container, key, _REMOVE))

    def apply_edits(self) -> None:
        for container, key, value in self.edits:
            if value is _REMOVE:
                if key in container:
                    del container[key]
            elif isinstance(key, int):
                container[key] = value
            else:
                from pypdf.generic import NameObject  # pypdf is slow to import: only a repair needs it

                container[NameObject(key)] = value
        self.edits.clear()

    def remembered(self, key: Any, obj: Any, check: Callable[[], Verdict]) -> Verdict:
        """check()'s verdict on obj, computed once per key; KEEP when obj is already being checked."""
        if key in self.memo:
            return self.memo[key][1]
        if id(obj) in self.busy:
            return KEEP
        self.busy.add(id(obj))
        try:
            verdict = check()
        finally:
            self.busy.discard(id(obj))
        self.memo[key] = (obj, verdict)  # obj is kept alive so that its id is not reused
        return verdict
