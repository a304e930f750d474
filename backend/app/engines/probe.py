"""`python -m app.engines.probe`: the engines this machine can run and the languages tesseract
reads here, as one JSON object on stdout.

A worker runs it once at start-up to learn which engines to advertise. It is a
process of its own at the lowest CPU priority, because building every engine
(google-cloud-vision and gRPC alone take about half a second of CPU) in an OCR
process delayed the first chunks of a run: it only gets the CPU the OCR leaves.

With `--settings-on-stdin` it builds the engines with the worker's Settings,
pickled on its stdin (an engine's options are settings: Vision's endpoint, for
one), as the worker's OCR processes do; without, with the environment's.
"""

from __future__ import annotations

import json
import os
import pickle
import sys

from app.engines._lifetime import die_with_parent

SETTINGS_ON_STDIN = "--settings-on-stdin"


def main() -> None:
    die_with_parent(os.getppid())  # the worker that asked; nobody else wants the answer
    os.nice(19)
    # after nice: the imports are the cost
    from app.core.config import Settings
    from app.core.errors import ConfigurationError
    from app.engines.registry import probe_engines, use_settings

    if SETTINGS_ON_STDIN in sys.argv[1:]:
        settings = pickle.load(sys.stdin.buffer)
        if not isinstance(settings, Settings):
            raise ConfigurationError(f"the probe expected Settings on stdin, got {type(settings).__name__}")
        use_settings(settings)
    versions, reasons, languages = probe_engines()
    json.dump({"versions": versions, "reasons": reasons, "languages": languages}, sys.stdout)


if __name__ == "__main__":
    main()
