"""The command line's exit codes, in one place (scripts branch on them)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1  # a document failed, or a service could not be reached: trying again may help
    BAD_INPUT = 2  # bad input or configuration: the same command fails the same way
    PAGES_MISSING = 3  # `run` finished, but some pages could not be read: their text is missing
    INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT
