"""A PostgreSQL that stops answering without refusing (every process of its cluster stopped:
connections stay open, nothing answers), as after a failover that leaves connections open to
nothing, or a dropped network. A call waited on such a connection until TCP gave up (about 15
minutes on a dead one); now it is an outage after DATABASE_TIMEOUT_SECONDS. The same fault under
running workers: tests/e2e/test_outages.py."""

from __future__ import annotations

import time

import httpx
import pytest

from app.core.config import Settings
from app.core.errors import RepositoryUnavailableError
from app.db.postgres import PostgresChunkRepository
from app.main import create_app
from tests import servers
from tests.servers import PrivatePostgres

private_postgres = servers.private_postgres

pytestmark = pytest.mark.timeout(120)


async def test_a_call_the_database_does_not_answer_is_an_outage_after_the_timeout(
    private_postgres: PrivatePostgres,
) -> None:
    repository = await PostgresChunkRepository.connect(private_postgres.dsn, call_timeout=1)
    try:
        await repository.ping()
        private_postgres.freeze()
        try:
            for _ in range(2):  # the call on the open connection, then one that has to connect
                started = time.monotonic()
                with pytest.raises(RepositoryUnavailableError):
                    await repository.ping()
                assert time.monotonic() - started < 5  # 1 s, and asyncpg's cancel of the call
        finally:
            private_postgres.thaw()
        await repository.ping()  # the same pool, once it answers
    finally:
        await repository.close()


async def test_healthz_answers_in_seconds_while_the_database_does_not(
    settings: Settings, private_postgres: PrivatePostgres
) -> None:
    """The default DATABASE_TIMEOUT_SECONDS (30) is longer than a load balancer waits for a
    health check: /healthz gives each dependency 5 s."""
    application = create_app(settings.model_copy(update={"database_url": private_postgres.dsn}))
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
            assert (await client.get("/healthz")).status_code == 200
            private_postgres.freeze()
            try:
                started = time.monotonic()
                down = await client.get("/healthz")
                elapsed = time.monotonic() - started
            finally:
                private_postgres.thaw()
            assert down.status_code == 503, down.text
            assert down.json() == {"status": "unavailable", "database": "database_unavailable", "redis": "ok"}
            assert elapsed < 10
            assert (await client.get("/healthz")).status_code == 200
