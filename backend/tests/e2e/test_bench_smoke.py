"""Every benchmark runs on tiny inputs through `python -m bench` and ends in the one table
(speed is never asserted here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from tests.e2e.conftest import REPO_ROOT

# name: table rows it prints
BENCHMARKS = {
    "scanned": 3,  # bench.dense is bench.scanned on another file (test_the_dense_file_is_dense)
    "searchable": 3,  # pages/s, pdftotext CER, size
    "quality": 3,  # two orientation pages (upright, turned) and the seconds
    "born_digital": 2,
    "claims": 1,
    "split": 1,
    "recovery": 2,
    "redis_outage": 1,
    "memory": 2,
    "progress": 2,
    "fleet": 2,  # chunks/s of one worker, and its CPU per chunk
    "tesseract_options": 2,  # an option's CPU against the defaults, and its CER where it moved most
}


def _bench(*args: str, env: dict[str, str], module: str = "bench") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("name", "rows"), BENCHMARKS.items(), ids=list(BENCHMARKS))
def test_benchmark_runs_and_prints_its_rows_in_the_table(
    name: str, rows: int, postgres_server_dsn: str, redis_url: str, arq_redis: object
) -> None:
    env = {**os.environ, "DATABASE_URL": postgres_server_dsn, "REDIS_URL": redis_url}
    done = _bench("--smoke", name, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    table = done.stdout.split("\n\n")[-1].splitlines()
    assert table[0].split()[:4] == ["benchmark", "ours", "baseline", "unit"]
    body = [line for line in table[1:] if line.strip()]
    assert len(body) == rows, done.stdout
    assert all("FAILED" not in line for line in body)
    for line in body:  # past the 48-character name: ours, baseline and the ratio (or a count) are numbers
        numbers = [part for part in line[48:].split() if part.replace(".", "", 1).lstrip("+-").isdigit()]
        assert len(numbers) >= 2, line


def test_the_dense_file_is_dense(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dense benchmark's file: clean prose filling the page, two to three times the degraded
    scan's text (its run is the scanned benchmark's, proved above)."""
    monkeypatch.syspath_prepend(str(REPO_ROOT))  # where `python -m bench` runs
    from bench._samples import make_dense_scan_pdf

    texts = make_dense_scan_pdf(tmp_path / "dense.pdf", 1, seed=2026)
    assert len(texts) == 1
    assert len(texts[0]) > 4000
    with pdfium.PdfDocument(tmp_path / "dense.pdf") as document:
        assert len(document) == 1
        assert document[0].get_textpage().count_chars() == 0  # an image only: tesseract's to read
    done = _bench("--help", env=dict(os.environ), module="bench.dense")
    assert done.returncode == 0
    assert "--pages" in done.stdout


def test_unknown_benchmark_is_refused_in_one_line() -> None:
    done = _bench("nosuch", env=dict(os.environ))
    assert done.returncode == 2
    assert "no benchmark named nosuch" in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_scanned_profile_names_each_process_and_the_ocr_steps(
    postgres_server_dsn: str, redis_url: str, arq_redis: object
) -> None:
    """bench.where samples a real one-page run with py-spy: each kind of process is found, and
    the OCR processes' steps, tesseract's among them."""
    env = {**os.environ, "DATABASE_URL": postgres_server_dsn, "REDIS_URL": redis_url}
    done = _bench("--pages", "1", "--rate", "100", env=env, module="bench.where")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    counts = {
        line[:18].strip(): int(line[18:25])
        for line in lines
        if not line.startswith(" ") and line[:18].strip() in ("command", "forkserver", "OCR process", "other")
    }
    # the worker runs inside the command; a worker or probe process would show here as "other"
    assert counts == {"command": 1, "forkserver": 1, "OCR process": 2}, done.stdout
    steps = {line[2:40].strip(): float(line[40:49]) for line in lines if line.startswith("  ")}
    assert steps.get("tesseract running", 0.0) > 0.0, done.stdout
