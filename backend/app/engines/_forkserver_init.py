"""Imported for its effect, first, by the forkserver at its start: it dies with its worker.

make_ocr_pool lists this module first in the forkserver's preload, and nothing
else imports it. multiprocessing gives no hook that runs in the forkserver, and
its preload is the one place our code runs there, before it forks anything.
Even so, arm_forkserver only arms a process whose parent, named by the worker in
the environment, is another process: never the worker itself.
"""

from __future__ import annotations

import atexit
import gc

from app.engines._lifetime import arm_forkserver

arm_forkserver()
gc.disable()  # until the preload is imported: app.engines._forkserver_loaded, the last module of it
# The server exits when its worker closes the "alive" pipe, and the worker waits for it. Freezing
# the heap first skips the interpreter's last collection over everything the preload imported
# (about 0.25 s). The OCR processes it forks inherit this but leave by os._exit, never by atexit.
atexit.register(gc.freeze)
