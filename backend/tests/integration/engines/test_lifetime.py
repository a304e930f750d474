"""The parent-death signal on real processes: who is armed, and a parent already gone."""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from app.engines import _forkserver_init
from app.engines.pool import make_ocr_pool, stop_ocr_pool

BACKEND = Path(__file__).resolve().parents[3]
_PR_GET_PDEATHSIG = 2


def death_signal() -> int:
    """The signal this process gets when its parent dies (0: none)."""
    number = ctypes.c_int(-1)
    assert ctypes.CDLL(None).prctl(_PR_GET_PDEATHSIG, ctypes.byref(number), 0, 0, 0) == 0
    return number.value


def _python(*lines: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "\n".join(["from app.engines._lifetime import die_with_parent", *lines])],
        env={**os.environ, "PYTHONPATH": str(BACKEND)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_process_that_makes_the_pool_is_never_armed() -> None:
    pool = make_ocr_pool(1)  # names this process as the worker in the environment
    try:
        importlib.reload(_forkserver_init)  # what the forkserver runs, here in the worker itself
        assert death_signal() == 0
    finally:
        stop_ocr_pool(pool)


def test_a_process_armed_for_its_parent_lives_on_with_it() -> None:
    done = _python(
        "import os",
        "from tests.integration.engines.test_lifetime import death_signal",
        "die_with_parent(os.getppid())",
        "print(death_signal())",
    )
    assert (done.returncode, done.stdout.strip()) == (0, str(int(signal.SIGKILL))), done.stderr


def test_a_process_whose_parent_is_already_gone_dies_at_once() -> None:
    # Its real parent is this process, not the one it names: as if it had been reparented.
    done = _python("die_with_parent(1)", "print('alive')")
    assert (done.returncode, done.stdout) == (-signal.SIGKILL, ""), done.stderr
