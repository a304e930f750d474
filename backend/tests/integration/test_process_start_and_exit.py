"""What a command or a worker spends before its first page and after its last one.

The costs themselves are measured by `make bench` (bench.scanned); these tests hold the
behaviour that removed them: no program run at import, the forkserver started before the
command's own imports, and the heap frozen before the interpreter exits. (`run`'s worker
inside the command: tests/integration/test_inline_worker.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

BACKEND = Path(__file__).resolve().parents[2]


# Python that records, in `started`, every program the process starts from then on.
WATCH_PROGRAMS = """started = []
sys.addaudithook(
    lambda event, args: started.append((event, str(args)[:120]))
    if event in ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.system")
    else None
)"""


def _python(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(BACKEND)}
    source = textwrap.dedent(code).replace("{WATCH_PROGRAMS}", WATCH_PROGRAMS)
    return subprocess.run(
        [sys.executable, "-c", source, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_importing_the_commands_the_worker_and_the_engines_starts_no_program() -> None:
    """ctypes.util.find_library runs `ldconfig -p`; it did, in every process importing the PDF code."""
    done = _python(
        """
        import sys

        {WATCH_PROGRAMS}
        import app.cli, app.worker, app.engines.auto, app.engines.tesseract, app.engines.pool
        import app.pdf._pdfium, app.local.run
        print(started)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_malloc_trim_is_found_without_asking_ldconfig() -> None:
    from app.pdf import _pdfium

    assert _pdfium._MALLOC_TRIM is not None  # glibc here: the trim is there to call
    _pdfium.release_freed_memory()


def test_the_command_freezes_its_heap_before_the_interpreter_exits(tmp_path: Path) -> None:
    """The last collection over every imported object cost about 0.2 s at each exit; freezing
    the heap skips it."""
    done = _python(
        """
        import gc, sys
        from app.cli import entry

        sys.argv = ["chunk-ocr", "sample", "page.pdf", "--pages", "1"]
        code = entry()
        print(code, gc.get_freeze_count() > 0)
        """,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["0", "True"]
    assert (tmp_path / "page.pdf").is_file()


def test_run_starts_the_forkserver_before_importing_its_settings_and_the_planner(tmp_path: Path) -> None:
    """The forkserver imports the engines while the command imports the rest (its settings,
    logging, the planner) and connects: two cores at once, not one after the other. Seen from an
    import hook: when `run` first imports app.core.config, and again app.local.run, its
    forkserver is already running; importing app.cli itself imports neither. (The database here
    refuses connections, so the command stops with its one-line error right after.)"""
    from app.pdf.samples import make_scanned_pdf

    make_scanned_pdf(tmp_path / "scan.pdf", 1, seed=1)
    done = _python(
        """
        import importlib.abc, os, sys
        import psutil

        seen = {}

        class Watch(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name in ("app.core.config", "app.local.run") and name not in seen:
                    seen[name] = sum(
                        "multiprocessing.forkserver" in " ".join(p.cmdline())
                        for p in psutil.Process().children()
                    )
                return None

        sys.meta_path.insert(0, Watch())
        from app.cli import main

        print("after importing app.cli", sorted(seen))
        os.environ |= {"DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none", "REDIS_URL": "redis://127.0.0.1:9/0"}
        code = main(["run", "scan.pdf", "--engine", "tesseract"])
        print("exit", code, "forkservers when each was first imported", seen)
        """,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "after importing app.cli []" in done.stdout, done.stdout
    assert "{'app.core.config': 1, 'app.local.run': 1}" in done.stdout, done.stdout + done.stderr
    assert "chunk-ocr: error: " in done.stderr


def test_an_ocr_process_warms_up_without_running_a_program() -> None:
    """Its warm-up loads tesseract's model and takes the languages and the version from the
    library: no `tesseract --list-langs`, `--version` or setpriv check (each was a fork and
    exec of the OCR process on the way to its first page). What it learns is what those
    commands say."""
    done = _python(
        """
        import json, sys
        from app.engines.pool import warm_up

        {WATCH_PROGRAMS}
        version = warm_up("tesseract", "eng")
        from app.engines.languages import installed_languages
        print(json.dumps({"started": started, "version": version, "languages": installed_languages()}))
        """
    )
    assert done.returncode == 0, done.stderr
    warmed = json.loads(done.stdout.strip().splitlines()[-1])
    assert warmed["started"] == []
    listed = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, check=True)
    assert warmed["languages"] == sorted(
        {line.strip() for line in listed.stdout.splitlines()[1:] if line.strip()}
    )
    said = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=True)
    assert warmed["version"] == (said.stdout or said.stderr).splitlines()[0].strip()
