"""Where a `chunk-ocr run` of a scan spends its time, by process and, in the OCR processes, by step.

py-spy samples every Python process of one run (the command, which runs the worker, the OCR
processes' forkserver, the OCR processes), idle or not, main threads only. tesseract is
not Python: an OCR process in it (libtesseract, or the command for an orientation guess) is
counted as tesseract's time.

    uv run python -m bench.where [--kind degraded|dense] [--pages 20] [--rate 50]

Needs py-spy (a dev dependency) and leave to read other processes' memory (root, or
kernel.yama.ptrace_scope 0). Not part of `make bench`: it explains the scanned rows, it is not one.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bench._env import services
from bench.scanned import KINDS, ours_command

# What a process is, by a frame only that kind of process has (first match wins).
ROLES = (
    ("OCR process", "_serve_one (multiprocessing/forkserver.py"),
    ("forkserver", "main (multiprocessing/forkserver.py"),
    ("resource tracker", "main (multiprocessing/resource_tracker.py"),
    ("command", "_run (app/cli.py"),  # its worker runs on its event loop
)

# What an OCR process is doing, by a frame on the sampled stack (first match wins).
STEPS = (
    ("tesseract running", ("TesseractReader.read", "detect_orientation")),
    ("page image: decode and size, or render", ("page_image", "scan_image", "PdfPage.render", "render_gray")),
    ("straighten, measure lines", ("_orientation.py",)),
    ("write page images (orientation guess)", ("Image.save",)),
    ("open the chunk", ("open_pdf", "ScanPages")),
    ("read tesseract's output", ("tsv_words", "_page_result")),
    ("start: imports, engine checks", ("_find_and_load", "warm_up", "_start_ocr_process")),
    ("wait for a chunk", ("Queue.get (multiprocessing/queues.py",)),
)
OTHER = "other"


@dataclass
class Profile:
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))  # by role
    processes: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # by role
    ocr_steps: dict[str, float] = field(default_factory=lambda: defaultdict(float))


def summarize(raw: str, rate: float) -> Profile:
    """py-spy's raw output (`-f raw --subprocesses`): each line a stack of `;`-separated frames,
    the innermost process frame naming the process, then a sample count."""
    stacks: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for line in raw.splitlines():
        stack, _, samples = line.rstrip().rpartition(" ")
        frames = stack.split(";")
        owners = [i for i, frame in enumerate(frames) if frame.startswith("process ")]
        if not owners or not samples.isdigit():
            continue
        pid = re.match(r"process (\d+)", frames[owners[-1]])
        rest = frames[owners[-1] + 1 :]
        if pid is None or (rest and rest[0].startswith("Thread._bootstrap")):
            continue  # a helper thread: the main thread's samples are the process's time
        stacks[pid.group(1)].append((";".join(rest), int(samples)))
    profile = Profile()
    for entries in stacks.values():
        text = "\n".join(stack for stack, _ in entries)
        role = next((name for name, frame in ROLES if frame in text), OTHER)
        profile.processes[role] += 1
        for stack, count in entries:
            profile.seconds[role] += count / rate
            if role == "OCR process":
                step = next((name for name, keys in STEPS if any(k in stack for k in keys)), OTHER)
                profile.ocr_steps[step] += count / rate
    return profile


def report(profile: Profile) -> list[str]:
    lines = ["process            count  seconds (summed over its processes)"]
    for role, seconds in sorted(profile.seconds.items(), key=lambda item: -item[1]):
        lines.append(f"{role:<18} {profile.processes[role]:>5}  {seconds:8.1f}")
    total = profile.seconds.get("OCR process", 0.0)
    if total:
        lines.append("OCR processes, by step                   seconds   share")
        for step in [*(name for name, _ in STEPS), OTHER]:
            if seconds := profile.ocr_steps.get(step, 0.0):
                lines.append(f"  {step:<38} {seconds:8.1f}  {seconds / total * 100:5.1f} %")
    return lines


async def main(kind: str, pages: int, rate: int) -> list[str]:
    py_spy = shutil.which("py-spy")
    if py_spy is None:
        raise SystemExit("bench.where: py-spy is not installed (uv sync installs the dev dependencies)")
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-where-"))
    pdf = work / "scan.pdf"
    KINDS[kind](pdf, pages, seed=2026)
    raw = work / "profile.txt"
    command = ours_command(pdf, work / "out")
    async with services() as env:
        done = subprocess.run(
            [
                py_spy,
                "record",
                "--subprocesses",
                "--idle",
                "-r",
                str(rate),
                "-f",
                "raw",
                "-o",
                str(raw),
                "--",
                *command,
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0 or not raw.is_file():
        raise SystemExit(f"bench.where: py-spy failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return [
        f"{kind}, {pages} pages, {rate:g} samples/s; raw profile: {raw}",
        *report(summarize(raw.read_text(), rate)),
    ]


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kind", choices=sorted(KINDS), default="degraded")
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--rate", type=int, default=50)
    args = parser.parse_args()
    print("\n".join(asyncio.run(main(args.kind, args.pages, args.rate))))


if __name__ == "__main__":
    run()
