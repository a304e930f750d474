"""Peak memory of one command and the processes it starts, and of nothing else.

While the command runs, its process tree is sampled every SAMPLE_SECONDS. On Linux each sample
reads VmHWM, the kernel's high-water mark of that process's RSS since it last exec'd, so a spike
between two samples still counts; only growth in a process's last moments before it exits can
be missed. Elsewhere a sample is the process's current RSS.

Not getrusage or wait4: ru_maxrss carries over exec from the image before it, so a child that a
large process (pytest) spawns starts from that process's size, and RUSAGE_CHILDREN adds every
process the caller ever reaped. Processes outside the command's tree (earlier tests' children,
servers the test started) are never counted here.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

SAMPLE_SECONDS = 0.05


@dataclass
class PeakRss:
    """The command's result and the peak RSS of each process of its tree, in KiB."""

    completed: subprocess.CompletedProcess[str]
    root: int  # the command's own pid
    by_process: dict[int, tuple[str, int]] = field(default_factory=dict)  # pid: (command line, KiB)

    @property
    def root_mib(self) -> float:
        """The peak of the command's own process. Found by pid, not by command line: a child
        sampled between its fork and its exec still shows its parent's command line."""
        return self.by_process[self.root][1] / 1024

    @property
    def largest_mib(self) -> float:
        """The peak of the largest single process of the tree."""
        return max(kib for _, kib in self.by_process.values()) / 1024

    def describe(self) -> str:
        ranked = sorted(self.by_process.items(), key=lambda item: -item[1][1])
        return "; ".join(f"{kib / 1024:.0f} MiB pid {pid} {name}" for pid, (name, kib) in ranked)


def _high_water_kib(process: psutil.Process) -> int:
    try:
        status = Path(f"/proc/{process.pid}/status").read_text()
    except ProcessLookupError:  # it exited between the open and the read (ESRCH)
        raise psutil.NoSuchProcess(process.pid) from None
    except FileNotFoundError:
        if Path("/proc/self/status").exists():
            raise psutil.NoSuchProcess(process.pid) from None  # it exited
        return int(process.memory_info().rss // 1024)  # no /proc: the current RSS
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])  # kB
    return 0  # a zombie: its memory is already gone


def _sample(root: psutil.Process, peaks: dict[int, tuple[str, int]]) -> None:
    try:
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for process in tree:
        try:
            name = " ".join(process.cmdline())[:60] or process.name()
            kib = _high_water_kib(process)
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            continue
        if kib > peaks.get(process.pid, ("", 0))[1]:
            peaks[process.pid] = (name, kib)


def run_measuring_peak_rss(command: list[str], *, env: dict[str, str], cwd: Path, timeout: float) -> PeakRss:
    """Run command to its end (stdout and stderr captured as text) and measure its tree."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=err)
        root = psutil.Process(process.pid)
        peaks: dict[int, tuple[str, int]] = {}
        deadline = time.monotonic() + timeout
        try:
            while process.poll() is None:
                _sample(root, peaks)
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(command, timeout)
                time.sleep(SAMPLE_SECONDS)
        except BaseException:
            process.kill()
            process.wait()
            raise
        out.seek(0)
        err.seek(0)
        completed = subprocess.CompletedProcess(
            command, process.returncode, out.read().decode(), err.read().decode()
        )
    return PeakRss(completed, process.pid, peaks)
