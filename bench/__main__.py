"""Every benchmark, one table: `make bench` (about 26 minutes on 2 cores).

Each benchmark runs in its own process (so one's memory or event loop cannot colour the
next) and prints its rows; the rows of all of them are printed again at the end as one
table of ratios against the baseline each ran beside it.

    uv run python -m bench [--smoke] [NAME ...]

--smoke runs tiny inputs (what the test suite does: it proves each benchmark runs, never
how fast). A benchmark that fails is reported in the table and the exit code is 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from bench._env import HEADER, NAME_WIDTH

# name: (arguments of a real run, arguments of a smoke run)
BENCHMARKS: dict[str, tuple[list[str], list[str]]] = {
    "scanned": ([], ["--pages", "1", "--repeat", "1", "--warmup", "0"]),
    "dense": ([], ["--pages", "1", "--repeat", "1", "--warmup", "0"]),
    "searchable": ([], ["--pages", "1", "--repeat", "1", "--warmup", "0"]),
    "quality": ([], ["--pages", "2", "--cases", "eng"]),
    "born_digital": ([], ["--pages", "40", "--repeat", "1", "--warmup", "0"]),
    "claims": ([], ["--chunks", "300", "--clients", "4", "--repeat", "1"]),
    "recovery": ([], ["--pages", "2", "--threshold", "4", "--sweep", "1"]),
    "redis_outage": ([], ["--pages", "2", "--outage", "2", "--repeat", "1"]),
    "memory": ([], ["--chunks", "4", "--pages", "40"]),
    "progress": ([], ["--pollers", "4", "--seconds", "1"]),
    "split": ([], ["--pages", "40", "--repeat", "1"]),
    "fleet": ([], ["--workers", "1", "--chunks-per-worker", "8", "--latency", "0.2"]),
    "tesseract_options": (
        ["--pages", "2"],
        ["--pages", "1", "--repeat", "1", "--options", "no_invert", "--corpora", "degraded"],
    ),
}


def _rows(stdout: str) -> list[str]:
    """The table rows a benchmark printed (its header line left out)."""
    return [line for line in stdout.splitlines() if line.strip() and not line.startswith("benchmark")]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="tiny inputs: proves they run, not speed")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"any of {', '.join(BENCHMARKS)}")
    args = parser.parse_args()
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"no benchmark named {', '.join(unknown)} (choose from {', '.join(BENCHMARKS)})")
    names = args.names or list(BENCHMARKS)
    env = {**os.environ, "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING")}
    table: list[str] = []
    failed = False
    for name in names:
        full, smoke = BENCHMARKS[name]
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", f"bench.{name}", *(smoke if args.smoke else full)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        rows = _rows(done.stdout)
        if done.returncode != 0 or not rows:
            failed = True
            rows = [f"{name:<{NAME_WIDTH}}FAILED (exit {done.returncode})"]
        print(f"# {name} ({time.perf_counter() - started:.0f} s)", *rows, sep="\n", flush=True)
        table += rows
    print()
    print(HEADER)
    print("\n".join(table))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
