"""Engines declare their batching once (app.engines.specs): planning cuts chunks in
multiples of it, the command line offers the registry's engines, and neither imports an engine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import ENGINES
from app.engines.registry import available_engines
from app.engines.specs import ENGINE_SPECS, engine_spec
from app.pdf.plan import MAX_CHUNK_PAGES, plan_chunks

BACKEND = Path(__file__).resolve().parents[3]


def test_the_engines_are_the_specs_and_the_command_line_offers_them() -> None:
    assert available_engines() == tuple(ENGINE_SPECS)
    assert available_engines() == ENGINES
    assert set(ENGINES) == {"auto", "tesseract", "text-layer", "google-vision", "null"}


def test_only_vision_batches_pages() -> None:
    assert {name: spec.pages_per_request for name, spec in ENGINE_SPECS.items()} == {
        "auto": 1,
        "tesseract": 1,
        "text-layer": 1,
        "google-vision": 5,
        "null": 1,
    }


@pytest.mark.parametrize("name", list(ENGINE_SPECS))
@pytest.mark.parametrize(
    ("pages", "chunk_pages", "workers"),
    [(23, 7, 2), (20, None, 2), (2000, None, 2), (7, None, 64), (131, 12, 3), (1, None, 1), (49, 50, 2)],
)
def test_chunks_are_multiples_of_the_engines_batch(
    name: str, pages: int, chunk_pages: int | None, workers: int
) -> None:
    batch = ENGINE_SPECS[name].pages_per_request
    ranges = plan_chunks(pages, chunk_pages, workers, batch)
    assert [r.page_start for r in ranges] == [1, *(r.page_end + 1 for r in ranges[:-1])]
    assert ranges[-1].page_end == pages
    assert all(r.page_count % batch == 0 for r in ranges[:-1])  # only the last may be short
    if chunk_pages is not None:
        expected = -(-chunk_pages // batch) * batch  # chunk_pages rounded up to the batch
        assert all(r.page_count == expected for r in ranges[:-1])
    assert max(r.page_count for r in ranges) <= max(MAX_CHUNK_PAGES, chunk_pages or 0) + batch - 1


def test_vision_chunks_come_in_fives() -> None:
    vision, tesseract = engine_spec("google-vision"), engine_spec("tesseract")
    assert [r.page_count for r in plan_chunks(23, 7, 2, vision.pages_per_request)] == [10, 10, 3]
    assert [r.page_count for r in plan_chunks(23, 7, 2, tesseract.pages_per_request)] == [7, 7, 7, 2]


def test_an_engine_without_a_spec_takes_one_page_a_request() -> None:
    """The planner does not judge engine names (the services refuse unknown ones first)."""
    unknown = engine_spec("hieroglyph-9000")
    assert unknown.pages_per_request == 1
    assert [r.page_count for r in plan_chunks(10, 3, 2, unknown.pages_per_request)] == [3, 3, 3, 1]


def test_planning_and_the_engine_list_import_no_engine() -> None:
    code = (
        "import json, sys\n"
        "import app.services.planner, app.engines.registry, app.cli\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=BACKEND, capture_output=True, text=True, check=True, timeout=60
    )
    imported = set(json.loads(result.stdout))
    assert "app.services.planner" in imported
    assert "grpc" not in imported
    assert "app.engines.google_vision" not in imported
    assert not any(name.startswith("google.cloud") for name in imported)
