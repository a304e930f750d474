"""The peak-memory helper the memory tests rely on counts the command's own tree and nothing else."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.peak_rss import run_measuring_peak_rss

# A child that holds 200 MiB and is never waited for: the command reads its "ready", stays half a
# second (ten samples) and exits first, so nothing but sampling the command's tree can see it.
ORPHAN = """
import subprocess, sys, time
child = subprocess.Popen(
    [sys.executable, "-c", "import time; block = bytearray(200 * 2**20); print('ready', flush=True); time.sleep(1)"],
    stdout=subprocess.PIPE,
)
assert child.stdout.readline() == b"ready\\n"
time.sleep(0.5)
"""


def test_a_child_the_command_never_reaps_is_measured(tmp_path: Path) -> None:
    ballast = bytearray(300 * 2**20)  # this process is larger than anything in the command's tree
    measured = run_measuring_peak_rss([sys.executable, "-c", ORPHAN], env={}, cwd=tmp_path, timeout=30)
    assert measured.completed.returncode == 0, measured.completed.stderr
    assert len(measured.by_process) == 2, measured.describe()
    assert 200 <= measured.largest_mib < 260, measured.describe()  # the child, not this process
    assert len(ballast) == 300 * 2**20


def test_output_and_exit_code_are_the_commands(tmp_path: Path) -> None:
    measured = run_measuring_peak_rss(
        [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
        env={},
        cwd=tmp_path,
        timeout=30,
    )
    assert (measured.completed.returncode, measured.completed.stdout, measured.completed.stderr) == (
        3,
        "out\n",
        "err\n",
    )
    assert 0 < measured.largest_mib < 100, measured.describe()


# A child forked and never exec'd keeps its parent's command line: here it alone holds 200 MiB.
FORKED = """
import os, time
reader, writer = os.pipe()
if os.fork() == 0:
    block = bytearray(200 * 2**20)
    os.write(writer, b"r")
    time.sleep(0.5)
    os._exit(0)
os.read(reader, 1)
os.wait()
"""


def test_the_commands_own_peak_is_found_by_pid_not_by_its_command_line(tmp_path: Path) -> None:
    measured = run_measuring_peak_rss([sys.executable, "-c", FORKED], env={}, cwd=tmp_path, timeout=30)
    assert measured.completed.returncode == 0, measured.completed.stderr
    commands = [command for command, _ in measured.by_process.values()]
    assert len(commands) == 2, measured.describe()
    assert commands[0] == commands[1], measured.describe()
    assert measured.root_mib < 100, measured.describe()
    assert 200 <= measured.largest_mib < 260, measured.describe()
