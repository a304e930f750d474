"""The scanned benchmark on the dense, clean file (bench.scanned --kind dense): 20 pages of
10-point prose filling each page, where tesseract's own time is almost all there is.

    uv run python -m bench.dense [--pages 20] [--repeat 3] [--warmup 1]
"""

from __future__ import annotations

import sys

from bench.scanned import run

if __name__ == "__main__":
    sys.argv[1:1] = ["--kind", "dense"]
    run()
