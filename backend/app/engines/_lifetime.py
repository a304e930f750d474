"""The processes under a worker die with their parent, however the parent ends.

A worker's tree: the worker starts the forkserver, the forkserver forks the
OCR processes, and each OCR process runs tesseract. When the worker was
killed with SIGKILL (the OOM killer, an orchestrator, kill -9), nothing told
the rest: the OCR processes ignore SIGTERM on purpose and wait on their task
queue forever, and they keep the forkserver's "alive" pipe and the resource
tracker's pipe open, so those waited too, all of them under PID 1.

So every process of the tree asks Linux for SIGKILL when its parent dies
(prctl PR_SET_PDEATHSIG): the forkserver (parent: the worker), each OCR
process (parent: the forkserver) and each tesseract (parent: an OCR
process; armed by `setpriv --pdeathsig`, see _tesseract_exec). The resource
tracker, a child of the worker, then reads EOF on its pipe and exits by itself.

Caveats:

- The signal comes when the parent *thread* that created the process ends,
  not the parent process. That is the same thing here: make_ocr_pool starts
  the forkserver from the thread that makes the pool, the worker's event-loop
  thread, which lives as long as the worker; the forkserver forks every OCR
  process from its only thread; an OCR process runs its tasks, and so starts
  tesseract, on its main thread.
- A parent that died before the call is missed: the call only arms the signal
  for a later death. So each caller names the parent it expects, and a process
  whose parent has already changed kills itself at once.
- The setting survives exec (tesseract keeps it) but not fork: each process
  arms its own.
- Linux only. Elsewhere these calls do nothing, and a killed worker can leave
  its OCR processes behind, as before.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

# make_ocr_pool puts the worker's pid here before it starts the forkserver, which inherits the
# environment: so the forkserver knows the parent it must die with, even one already dead.
WORKER_PID_ENV = "CHUNK_OCR_WORKER_PID"

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _load_prctl() -> Callable[[int, int, int, int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)  # the C library the interpreter is linked with
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_prctl = _load_prctl()

# The forkserver's pid, recorded in the forkserver; the OCR processes it forks inherit the value.
_forkserver_pid: int | None = None


def die_with_parent(parent: int) -> None:
    """SIGKILL for this process when its parent dies; dies now if `parent` is already gone.

    For our own processes. tesseract, a program we exec, gets the same from
    util-linux's setpriv instead (_tesseract_exec explains why not preexec_fn).
    """
    if _prctl is None:
        return
    if _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_PDEATHSIG): {os.strerror(errno)}")
    if os.getppid() != parent:  # reparented before the call armed anything
        os.kill(os.getpid(), signal.SIGKILL)


def arm_forkserver() -> None:
    """In the forkserver: die with the worker that started it (see _forkserver_init)."""
    global _forkserver_pid
    worker = os.environ.get(WORKER_PID_ENV)
    if worker is None or int(worker) == os.getpid():
        return  # the worker itself, or a process make_ocr_pool did not start: nothing to arm
    die_with_parent(int(worker))
    _forkserver_pid = os.getpid()


def arm_ocr_process() -> None:
    """In an OCR process, forked by the forkserver: die with the forkserver."""
    # A forkserver that did not arm itself (not started by make_ocr_pool) recorded no pid: arm
    # for the present parent, without the check.
    die_with_parent(_forkserver_pid if _forkserver_pid is not None else os.getppid())
