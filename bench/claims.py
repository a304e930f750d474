"""Claim throughput: OCRChunkService.claim_for_holder with 16 concurrent clients
over N pending chunks, beside a bare single-row UPDATE round trip (by primary
key, same table, same pool, same 16 clients) measured in the same run.

claim_for_holder (ocr_claim_for_holder: what the claim's holder already holds, else
ocr_claim_next_chunk, the fair claim) is the claim every chunk job makes
(ChunkProcessor.process), called as it calls it: a holder id of its own for each
claim, no document, no run. The chunks are created as the planner creates them, by
starting each document (ocr_start_document).

    uv run python -m bench.claims [--chunks 10000] [--clients 16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import time
import uuid

import asyncpg

from app.core.config import load_settings
from app.db.postgres import PostgresChunkRepository
from app.models.ocr_chunk import ChunkRange
from app.services.ocr_chunk_service import OCRChunkService
from bench._db import scratch_database
from bench._env import HEADER, row


async def _seed(pool: asyncpg.Pool, service: OCRChunkService, chunks: int) -> list[uuid.UUID]:
    await pool.execute("truncate public.document_ocr_chunks, public.documents, public.matters cascade")
    matter = await pool.fetchval("insert into matters (name) values ('bench') returning id")
    per_doc = 1000
    ids: list[uuid.UUID] = []
    for start in range(0, chunks, per_doc):
        n = min(per_doc, chunks - start)
        doc = await pool.fetchval(
            "insert into documents (matter_id, filename, page_count, file_sha256)"
            " values ($1, 'b.pdf', $2, $3) returning id",
            matter,
            n,
            hashlib.sha256(uuid.uuid4().bytes).hexdigest(),
        )
        created = await service.start_document(
            doc, [ChunkRange(chunk_index=i, page_start=i + 1, page_end=i + 1) for i in range(n)]
        )
        ids += [c.id for c in created]
    await pool.execute("vacuum analyze public.document_ocr_chunks")
    return ids


async def _claims(service: OCRChunkService, clients: int) -> tuple[int, float]:
    async def client(n: int) -> int:
        count = 0
        while await service.claim_for_holder(f"bench-{n}/{count}") is not None:
            count += 1
        return count

    started = time.perf_counter()
    counts = await asyncio.gather(*(client(n) for n in range(clients)))
    return sum(counts), time.perf_counter() - started


async def _updates(pool: asyncpg.Pool, ids: list[uuid.UUID], clients: int) -> tuple[int, float]:
    per_client = len(ids) // clients

    async def client(n: int) -> int:
        mine = ids[n * per_client : (n + 1) * per_client]
        for chunk_id in mine:
            await pool.execute(
                "update public.document_ocr_chunks set heartbeat_at = now() where id = $1", chunk_id
            )
        return len(mine)

    started = time.perf_counter()
    counts = await asyncio.gather(*(client(n) for n in range(clients)))
    return sum(counts), time.perf_counter() - started


async def main(chunks: int, clients: int, repeat: int) -> dict[str, float]:
    async with scratch_database() as dsn:
        settings = load_settings(database_url=dsn, database_pool_max_size=clients)
        repo = await PostgresChunkRepository.connect(dsn, min_size=clients, max_size=clients)
        service = OCRChunkService(repo, settings)
        claim_rates, update_rates = [], []
        try:
            for _ in range(repeat):
                ids = await _seed(repo.pool, service, chunks)
                n, seconds = await _updates(repo.pool, ids, clients)
                update_rates.append(n / seconds)
                n, seconds = await _claims(service, clients)
                assert n == chunks, f"claimed {n} of {chunks}"
                claim_rates.append(n / seconds)
        finally:
            await repo.close()
    claims, updates = statistics.median(claim_rates), statistics.median(update_rates)
    return {"claims_per_s": claims, "updates_per_s": updates, "ratio": claims / updates}


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    result = asyncio.run(main(args.chunks, args.clients, args.repeat))
    print(HEADER)
    print(
        row(
            f"claims/s, {args.clients} clients vs bare UPDATE",
            result["claims_per_s"],
            result["updates_per_s"],
            "/s",
            ">= 0.50",
        )
    )


if __name__ == "__main__":
    run()
