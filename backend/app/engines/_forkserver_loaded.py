"""Imported for its effect, last, by the forkserver at its start (see _forkserver_init, the first).

The preload runs without the cyclic garbage collector (importing makes many objects and almost
no garbage, as app.cli.importing says), and what it imported is frozen before it is enabled
again: the OCR processes forked from the server never scan the modules in a collection, and
never write to their pages for one, so those pages stay shared with the server.
"""

from __future__ import annotations

import gc

gc.freeze()
gc.enable()
