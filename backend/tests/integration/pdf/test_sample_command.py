"""`chunk-ocr sample` works in a plain install: without the dev dependency group.

The command runs in a child interpreter in which importing any distribution of the dev group
(reportlab, rapidfuzz, pytest, ocrmypdf through the bench group it includes, ...) fails, as does importing the tests package (a wheel
ships only `app`). Distributions the app's own dependencies pull in (psutil is one) stay
importable, since a plain install has them too.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from app.engines.text_layer import TextLayerEngine

REPO_ROOT = Path(__file__).resolve().parents[4]

# `python -m MODULE ARGS...` in an interpreter where the modules named in BLOCKED cannot be
# imported: python -c WITHOUT_DEV_DEPENDENCIES BLOCKED MODULE ARGS...
WITHOUT_DEV_DEPENDENCIES = """
import importlib.abc, runpy, sys

BLOCKED = frozenset(sys.argv[1].split(","))


class DevOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (not installed)", name=name)
        return None


already = sorted(name for name in sys.modules if name.partition(".")[0] in BLOCKED)
assert not already, f"imported before the block: {already}"
sys.meta_path.insert(0, DevOnly())
sys.argv = sys.argv[2:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def _runtime_distributions() -> set[str]:
    """The app's dependencies and everything they require in turn (extras followed)."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    pending = [Requirement(spec) for spec in project["dependencies"]]
    seen: set[tuple[str, str]] = set()
    names: set[str] = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        for extra in ("", *requirement.extras):
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            names.add(name)
            try:
                requires = importlib.metadata.requires(name) or []
            except importlib.metadata.PackageNotFoundError:
                continue
            for spec in requires:
                dependency = Requirement(spec)
                if dependency.marker is None or dependency.marker.evaluate({"extra": extra}):
                    pending.append(dependency)
    return names


def _group(groups: dict[str, list[str | dict[str, str]]], name: str) -> set[str]:
    """Distributions a dependency group names, the groups it includes followed."""
    names: set[str] = set()
    for entry in groups[name]:
        if isinstance(entry, dict):
            names |= _group(groups, entry["include-group"])
        else:
            names.add(canonicalize_name(Requirement(entry).name))
    return names


def dev_only_modules() -> set[str]:
    """Top-level modules of the dev group's distributions that a plain install does not have."""
    groups = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["dependency-groups"]
    dev_only = _group(groups, "dev") - _runtime_distributions()
    return {
        module
        for module, distributions in importlib.metadata.packages_distributions().items()
        if any(canonicalize_name(d) in dev_only for d in distributions)
    }


def test_the_blocked_modules_are_the_dev_group() -> None:
    blocked = dev_only_modules()
    assert {"reportlab", "rapidfuzz", "pytest", "hypothesis", "ocrmypdf"} <= blocked
    assert "pypdfium2" not in blocked
    assert "PIL" not in blocked


def run_without_dev_dependencies(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m module args` with the dev group and the tests package unimportable."""
    blocked = ",".join(sorted(dev_only_modules() | {"tests"}))
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_DEV_DEPENDENCIES, blocked, module, *args],
        cwd=cwd,  # not the repository: nothing importable from the working directory
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("module", ["reportlab", "rapidfuzz", "tests.pdf_factories"])
def test_the_child_cannot_import_them(tmp_path: Path, module: str) -> None:
    done = run_without_dev_dependencies(module, cwd=tmp_path)
    assert done.returncode == 1
    assert f"No module named '{module.partition('.')[0]}' (not installed)" in done.stderr


@pytest.mark.parametrize("kind", ["born-digital", "scanned"])
def test_sample_needs_no_dev_dependency(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "samples" / "sample.pdf"
    done = run_without_dev_dependencies(
        "app.cli", "sample", str(out), "--kind", kind, "--pages", "3", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    expected = out.with_suffix(".expected.txt").read_text(encoding="utf-8").split("\f")
    assert len(expected) == 3
    assert all(len(text.split()) > 50 for text in expected)
    document = pdfium.PdfDocument(out)
    try:
        assert len(document) == 3
    finally:
        document.close()
    pages = TextLayerEngine().recognize(out.read_bytes(), 1)
    if kind == "born-digital":  # the text layer is the expected text, line for line
        assert [page.text.split() for page in pages] == [text.split() for text in expected]
        assert [[line for line in page.text.splitlines() if line.strip()] for page in pages] == [
            [line for line in text.splitlines() if line.strip()] for text in expected
        ]
    else:  # a scan is images only: the expected text is for scoring OCR
        assert [page.text.strip() for page in pages] == ["", "", ""]
