"""A Redis that answers pings and refuses every write until its state passes: at its maxmemory
under noeviction (OOM, until memory is freed), or unable to save its snapshot (MISCONF, until a
save succeeds: a full disk on its host). Found from outside: a worker took the refusal for a bug
and exited (a supervisor's workers crash-looped), an upload answered 500 for a document it had
already created (a client retrying made a second one), and /healthz said Redis was fine. Each
is waited out or said as for a Redis that is down."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from app.core.config import Settings
from app.main import create_app
from app.models.ocr_chunk import ChunkStatus
from app.pdf.samples import make_born_digital_pdf
from app.worker_loop import REDIS
from tests import servers
from tests.e2e.conftest import wait_for
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import JWT_SECRET, bearer
from tests.integration.test_worker_outage_while_busy import started_worker
from tests.servers import PrivateRedis

private_redis = servers.private_redis


@asynccontextmanager
async def full(server: PrivateRedis) -> AsyncIterator[None]:
    """Redis at its memory limit, refusing writes, until the block ends."""
    client = Redis.from_url(server.url)
    try:
        await client.set("ballast", b"x" * 200_000)
        used = int((await client.info("memory"))["used_memory"])
        await client.config_set("maxmemory-policy", "noeviction")
        await client.config_set("maxmemory", str(used // 2))  # well under: freeing a buffer is no room
        with pytest.raises(Exception, match="maxmemory"):
            await client.set("probe", b"1")
        yield
    finally:
        await client.config_set("maxmemory", "0")
        await client.aclose()


async def _last_save(client: Redis) -> str:
    """The last snapshot's status (ok, err), once the one in progress is done."""

    async def saved() -> bool:
        return not (await client.info("persistence"))["rdb_bgsave_in_progress"]

    await wait_for(saved, 10, "Redis to end its snapshot")
    return str((await client.info("persistence"))["rdb_last_bgsave_status"])


@asynccontextmanager
async def unsaved(server: PrivateRedis) -> AsyncIterator[None]:
    """Redis set to save snapshots, whose last one failed (a directory where its file goes, as a
    full disk would), refusing writes (MISCONF) until one succeeds, when the block ends."""
    client = Redis.from_url(server.url)
    blocker = server.data_dir / "dump.rdb"
    try:
        await client.config_set("save", "3600 1")
        blocker.mkdir()
        await client.bgsave()
        assert await _last_save(client) == "err"
        with pytest.raises(ResponseError, match="snapshots"):
            await client.set("probe", b"1")
        yield
    finally:
        blocker.rmdir()
        await client.bgsave()
        assert await _last_save(client) == "ok"
        await client.config_set("save", "")
        await client.aclose()


@asynccontextmanager
async def frozen(server: PrivateRedis) -> AsyncIterator[None]:
    """Redis stopped (SIGSTOP) until the block ends: nothing refuses, nothing answers."""
    server.freeze()
    try:
        yield
    finally:
        server.thaw()


def refusing(fault: str, server: PrivateRedis) -> AbstractAsyncContextManager[None]:
    return {"full": full, "unsaved": unsaved, "frozen": frozen}[fault](server)


REFUSALS = pytest.mark.parametrize(
    ("fault", "error"),
    [("full", "OutOfMemoryError"), ("unsaved", "RedisRefusingError"), ("frozen", "TimeoutError")],
)
REPLY_TIMEOUT = 0.5
_OLD = 1  # REDIS_TIMEOUT_SECONDS here: a frozen Redis's command fails in about 8 s


@pytest.mark.timeout(120)
@REFUSALS
async def test_a_worker_waits_out_a_redis_that_refuses_writes(
    settings: Settings, private_redis: PrivateRedis, tmp_path: Path, fault: str, error: str
) -> None:
    own = settings.model_copy(update={"redis_timeout_seconds": REPLY_TIMEOUT})
    async with started_worker(own, private_redis, tmp_path) as (worker, main):
        async with refusing(fault, private_redis):

            async def noticed() -> bool:
                assert not main.done(), main.exception() if main.done() else None
                return not worker.health.is_up(REDIS)

            await wait_for(noticed, 30, "the worker to see Redis refuse its health record")
            for _ in range(10):  # several health records into it: alive, and down all along
                await asyncio.sleep(0.1)
                assert not main.done(), main.exception() if main.done() else None

        async def restored() -> bool:
            assert not main.done(), main.exception() if main.done() else None
            return worker.health.is_up(REDIS)

        await wait_for(restored, 30, "the worker to see Redis take writes again")


@pytest.mark.timeout(120)
@REFUSALS
async def test_the_api_says_so_and_an_upload_is_left_to_the_sweep(
    pipeline_settings: Settings,
    pool: asyncpg.Pool,
    private_redis: PrivateRedis,
    tmp_path: Path,
    fault: str,
    error: str,
) -> None:
    from pydantic import SecretStr

    own = pipeline_settings.model_copy(
        update={
            "redis_url": private_redis.url,
            "supabase_jwt_secret": SecretStr(JWT_SECRET),
            "redis_timeout_seconds": REPLY_TIMEOUT,
        }
    )
    matter = await make_matter(pool, f"{fault} redis")
    user: UUID = await make_user(pool, matter)
    make_born_digital_pdf(tmp_path / "letter.pdf", pages=3, seed=5)
    application = create_app(own)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
            assert (await client.get("/healthz")).json()["redis"] == "ok"
            async with refusing(fault, private_redis):
                health = await client.get("/healthz")
                assert health.status_code == 503
                assert health.json()["redis"] == error
                with (tmp_path / "letter.pdf").open("rb") as handle:
                    response = await client.post(
                        f"/matters/{matter}/documents",
                        headers=bearer(user),
                        files={"file": ("letter.pdf", handle, "application/pdf")},
                    )
                assert response.status_code == 201, response.text  # it was 500, the document made
                document = response.json()["document"]["id"]
                statuses = await pool.fetch(
                    "select status from public.document_ocr_chunks where document_id = $1", UUID(document)
                )
                assert {row["status"] for row in statuses} == {ChunkStatus.PENDING.value}
            assert (await client.get("/healthz")).status_code == 200
            private_redis.stop()
            down = await client.get("/healthz")
            assert down.status_code == 503, down.text  # it was a 500: redis-py's ConnectionError
            assert down.json()["status"] == "unavailable"


@pytest.mark.timeout(120)
async def test_the_api_starts_without_redis_and_finds_it_when_it_comes(
    pipeline_settings: Settings, private_redis: PrivateRedis
) -> None:
    """The API waited for Redis (30 connection retries) before it listened at all, not even for
    /healthz; what it does without Redis (uploads left to the sweep) needs no Redis at start."""
    private_redis.stop()
    application = create_app(pipeline_settings.model_copy(update={"redis_url": private_redis.url}))
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
            down = await client.get("/healthz")
            assert down.status_code == 503
            assert down.json()["database"] == "ok"
            private_redis.start()
            up = await client.get("/healthz")
            assert up.status_code == 200, up.text
