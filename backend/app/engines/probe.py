"""`python -m app.engines.probe`: the engines this machine can run, as one JSON object on stdout.

A worker runs it once at start-up to learn which engines to advertise. It is a
process of its own at the lowest CPU priority, because building every engine
(google-cloud-vision and gRPC alone take about half a second of CPU) in an OCR
process delayed the first chunks of a run: it only gets the CPU the OCR leaves.
"""

from __future__ import annotations

import json
import os
import sys

from app.engines._lifetime import die_with_parent


def main() -> None:
    die_with_parent(os.getppid())  # the worker that asked; nobody else wants the answer
    os.nice(19)
    from app.engines.registry import probe_engines  # after nice: the imports are the cost

    versions, reasons = probe_engines()
    json.dump({"versions": versions, "reasons": reasons}, sys.stdout)


if __name__ == "__main__":
    main()
