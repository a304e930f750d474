"""What a command or a worker spends before its first page and after its last one.

The costs themselves are measured by `make bench` (bench.scanned); these tests hold the
behaviour that removed them: no program run at import, the worker told to stop while `run`
writes its outputs (one SIGTERM, not two), and the heap frozen before the interpreter exits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from app.local.workers import WorkerProcesses

BACKEND = Path(__file__).resolve().parents[2]


def _python(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(BACKEND)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
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

        started = []
        sys.addaudithook(
            lambda event, args: started.append((event, str(args)[:120]))
            if event in ("subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork", "os.system")
            else None
        )
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


def test_a_worker_asked_to_stop_early_gets_one_sigterm(tmp_path: Path) -> None:
    """A second SIGTERM makes arq cancel the jobs it is finishing; stop() after request_stop()
    must not send one."""
    counted = tmp_path / "sigterms"
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import signal, sys, time
                got = []
                def on_term(signum, frame):
                    got.append(signum)
                    with open({str(counted)!r}, "w") as f:
                        f.write(str(len(got)))
                signal.signal(signal.SIGTERM, on_term)
                print("ready", flush=True)
                deadline = time.monotonic() + 1.0
                while not got:
                    time.sleep(0.01)
                while time.monotonic() < deadline:  # long enough for a second signal to arrive
                    time.sleep(0.01)
                """
            ),
        ],
        stdout=subprocess.PIPE,
    )
    assert child.stdout is not None
    with child.stdout:
        assert child.stdout.readline() == b"ready\n"
        workers = WorkerProcesses([child])
        workers.request_stop()
        workers.request_stop()
        workers.stop(grace_seconds=30)
    assert child.returncode == 0
    assert counted.read_text() == "1"


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


def test_run_on_a_file_with_text_starts_the_text_pass_forkserver_before_importing_the_planner(
    tmp_path: Path,
) -> None:
    """The forkserver imports the engines while the command imports the planner and connects:
    two cores at once, not one after the other (about a fifth of a born-digital run)."""
    from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf

    make_born_digital_pdf(tmp_path / "born.pdf", 3, seed=1)
    make_scanned_pdf(tmp_path / "scan.pdf", 1, seed=1)
    done = _python(
        """
        import sys
        import psutil
        from app.cli import _early_workers, _parser
        from app.core.config import load_settings
        from app.engines.forkserver import preload

        def servers():
            return [
                p for p in psutil.Process().children()
                if "multiprocessing.forkserver" in " ".join(p.cmdline())
            ]

        settings = load_settings(database_url=None, redis_url=None)  # embedded: no early worker
        scan = _parser().parse_args(["run", "scan.pdf"])
        scan.language = "eng"
        print("scan", _early_workers(settings, scan), len(servers()))
        born = _parser().parse_args(["run", "born.pdf", "--engine", "auto"])
        born.language = "eng"
        print("born", _early_workers(settings, born), len(servers()))
        print("imported", [m for m in ("app.engines.pool", "app.local.run") if m in sys.modules])
        print("preload", "app.engines.pool" in preload())
        """,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["scan None 0", "born None 1", "imported []", "preload True"]
