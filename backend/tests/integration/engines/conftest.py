"""Sample PDFs the engine tests share, made once per session (a 300 DPI scan takes a moment),
the loopback Vision server, and the benchmark's own sample pages."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from app.pdf.samples import make_scanned_pdf
from tests.integration.engines.test_denoise import _page_image
from tests.vision_fake import VisionServer, serve_vision

REPO_ROOT = Path(__file__).resolve().parents[4]


@dataclass(frozen=True)
class Sample:
    path: Path
    texts: list[str]

    @property
    def data(self) -> bytes:
        return self.path.read_bytes()


@pytest.fixture(scope="session")
def scan_2p(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    path = tmp_path_factory.mktemp("scan") / "scan.pdf"
    return Sample(path, make_scanned_pdf(path, pages=2, seed=5))


@pytest.fixture
def vision() -> Iterator[VisionServer]:
    with serve_vision() as server:
        yield server


@pytest.fixture
def bench_samples(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The benchmark's pages: its economy scan, and its dense one."""
    monkeypatch.syspath_prepend(str(REPO_ROOT))  # where `python -m bench` runs
    import bench._samples

    return bench._samples


@pytest.fixture
def plain_pages(tmp_path: Path, bench_samples: ModuleType) -> dict[str, Image.Image]:
    """Pages no clean-up step should touch, as the tesseract engine gets them: the app's sample
    scan, and a page each of the benchmark's economy and dense scans."""
    make_scanned_pdf(tmp_path / "sample.pdf", 1)
    bench_samples.make_degraded_scan_pdf(tmp_path / "degraded.pdf", 1)
    bench_samples.make_dense_scan_pdf(tmp_path / "dense.pdf", 1)
    return {name: _page_image(tmp_path / f"{name}.pdf") for name in ("sample", "degraded", "dense")}
