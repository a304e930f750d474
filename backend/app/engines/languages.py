"""The languages tesseract can read on this machine, and the refusal of one it cannot.

Asked once per process (`tesseract --list-langs`): a worker's probe asks at start-up and the
worker advertises the answer beside its engines, so the API can refuse a language no worker
has; the command line asks before it starts anything; an OCR process asks when it builds a
tesseract for a language, so a chunk in a language this machine lacks fails at once, for
good (`engine_unavailable`), and is never read in another one. A process that has loaded a
model already (an OCR process's warm-up) has the answer from the library
(learned_installed) and runs no command.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from app.core.languages import DEFAULT_LANGUAGE, NOT_FOR_READING, check_language, language_codes
from app.engines._tesseract_exec import tesseract_process
from app.engines.errors import EngineUnavailableError


class LanguageNotInstalledError(EngineUnavailableError):
    """tesseract has no trained data here for a language asked for: a deployment problem."""


_from_library: tuple[str, ...] | None = None


def learned_installed(languages: tuple[str, ...]) -> None:
    """What libtesseract listed when it loaded a model in this process: installed_languages()
    answers with it from then on."""
    global _from_library
    _from_library = languages


def installed_languages() -> tuple[str, ...]:
    """Every code `tesseract --list-langs` lists (osd included), sorted."""
    return _from_library if _from_library is not None else _listed_by_command()


@cache
def _listed_by_command() -> tuple[str, ...]:
    done = tesseract_process("--list-langs", timeout=60)
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise EngineUnavailableError(
            f"tesseract --list-langs exited with {done.returncode}: {reason[-1] if reason else 'no message'}"
        )
    listed = done.stdout.decode("utf-8", "replace").splitlines()[1:]  # the first line is a heading
    return tuple(sorted({line.strip() for line in listed if line.strip()}))


def has_orientation_data() -> bool:
    """Whether tesseract can guess orientation (--psm 0): the `osd` language data is installed."""
    return "osd" in installed_languages()


def readable(installed: Iterable[str]) -> list[str]:
    """The installed codes a document may name: not osd, which reads no text, nor the script
    models in their own directory (script/Latin)."""
    return sorted(code for code in set(installed) if code not in NOT_FOR_READING and "/" not in code)


def require_languages(language: str) -> str:
    """The language, if it is well formed and tesseract has every code of it here."""
    check_language(language)
    installed = installed_languages()
    missing = [code for code in language_codes(language) if code not in installed]
    if missing:
        raise LanguageNotInstalledError(not_installed(missing, installed), language=language)
    return language


def not_installed(missing: list[str], installed: Iterable[str], where: str = "") -> str:
    """One line: what is missing (where), what is there, and how to install what is missing."""
    names = ", ".join(repr(code) for code in dict.fromkeys(missing))
    subject = f"language {names} is" if len(set(missing)) == 1 else f"languages {names} are"
    there = ", ".join(readable(installed)) or "none"
    wanted = " ".join(dict.fromkeys([DEFAULT_LANGUAGE, *missing]))
    return (
        f"{subject} not installed for tesseract{where} (installed: {there}); "
        f"apt-get install {' '.join(debian_package(code) for code in dict.fromkeys(missing))} "
        f'or make install TESSERACT_LANGS="{wanted}"'
    )


def debian_package(code: str) -> str:
    """Debian's package of a code's trained data: tesseract-ocr-chi-sim for chi_sim."""
    return "tesseract-ocr-" + code.lower().replace("_", "-")
