"""Vision engine processes for the fleet quota's tests: each a real OS process (spawned) that
builds the google-vision engine from Settings, as an OCR process does, and reads chunks through
the loopback Vision server, or holds a permit of the quota until it is killed.

Results come back on a queue as plain tuples: (pid, [(page number, text, error code) per page]
per chunk), or (pid, the error's code and message) when a chunk failed.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.context import SpawnProcess
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event

from app.core.config import Settings
from app.core.errors import OCRError
from app.engines.google_vision import GoogleVisionEngine
from app.engines.vision_quota import VisionQuota

PageRecord = tuple[int, str, str | None]
ChunkRecord = list[PageRecord] | tuple[str, str]


def recognize_chunks(
    settings: Settings, chunks: Sequence[tuple[bytes, int]], go: Event, results: Queue[object]
) -> None:
    """Build the engine, wait for the signal, then read each chunk (its PDF, its first page)."""
    engine = GoogleVisionEngine.from_settings(settings)
    go.wait()
    out: list[ChunkRecord] = []
    for pdf, first in chunks:
        try:
            pages = engine.recognize(pdf, first)
        except OCRError as exc:
            out.append((exc.code, exc.message))
            continue
        out.append([(p.page_number, p.text, p.error.code if p.error else None) for p in pages])
    results.put((os.getpid(), out))


def hold_pages(settings: Settings, pages: int, held: Event) -> None:
    """Take a permit for `pages` pages of the quota, say so, and keep it until killed."""
    quota = VisionQuota.from_settings(settings)

    async def hold() -> None:
        async with quota.session() as session:
            await session.acquire(pages, session.deadline())
            held.set()
            await asyncio.sleep(3600)

    asyncio.run(hold())


@dataclass
class Fleet:
    """Engine processes started together, each reading its own chunks."""

    processes: list[SpawnProcess]
    go: Event
    results: Queue[object]

    @classmethod
    def start(cls, settings: Settings, work: Sequence[Sequence[tuple[bytes, int]]]) -> Fleet:
        context = multiprocessing.get_context("spawn")
        go, results = context.Event(), context.Queue()
        processes = [
            context.Process(target=recognize_chunks, args=(settings, chunks, go, results), daemon=True)
            for chunks in work
        ]
        for process in processes:
            process.start()
        return cls(processes, go, results)

    def run(self, timeout: float = 60) -> dict[int, list[ChunkRecord]]:
        """Let every process go at once; what each read, by pid."""
        self.go.set()
        done: dict[int, list[ChunkRecord]] = {}
        try:
            for _ in self.processes:
                pid, chunks = self.results.get(timeout=timeout)  # type: ignore[misc]
                done[pid] = chunks
        finally:
            self.stop()
        return done

    def stop(self) -> None:
        for process in self.processes:
            if process.is_alive():
                process.kill()
            process.join(10)
