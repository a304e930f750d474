"""The services `chunk-ocr` needs on a laptop: PostgreSQL, Redis, storage, the queue.

DATABASE_URL / REDIS_URL are used when set. Otherwise the embedded servers
from pip packages start under the data directory and the migrations are
applied to the embedded database (with the plain-PostgreSQL stand-ins). Every
command (`run`, `submit`, `worker`, `serve`, ...) resolves them the same way,
so they all reach the same servers; with ENVIRONMENT=production nothing is
embedded and a missing URL is a one-line configuration error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from app.core.config import Environment, Settings
from app.core.errors import ConfigurationError
from app.core.health import DATABASE, REDIS
from app.core.logging import get_logger
from app.db.admin import require_schema
from app.db.migrations import migrate
from app.embedded import revive_postgres, revive_redis, start_postgres, start_redis
from app.services.composition import QueuedCore, open_queued_core

log = get_logger(__name__)

CLI_MATTER_NAME = "chunk-ocr"


@dataclass
class LocalStack(QueuedCore):
    """The composition root's parts (app.services.composition) on the resolved servers."""

    keep: list[Any] = field(default_factory=list)  # embedded servers live as long as the stack
    # what starts an embedded server again if it goes away, by dependency (Services.revivers)
    revivers: dict[str, Callable[[], None]] = field(default_factory=dict)


@dataclass
class Services:
    """Settings with database_url and redis_url filled in, and the embedded servers behind them
    (kept referenced: an embedded server stops when the last process holding it exits)."""

    settings: Settings
    embedded: list[str]  # which of "PostgreSQL", "Redis" are embedded
    keep: list[Any]

    def revivers(self) -> dict[str, Callable[[], None]]:
        """What starts each embedded server again, by the worker's name for it (app.core.health):
        a long-running command's worker runs it in an outage. A server of a URL has none."""
        found: dict[str, Callable[[], None]] = {}
        if "Redis" in self.embedded:
            found[REDIS] = self.revive_redis
        if "PostgreSQL" in self.embedded:
            found[DATABASE] = self.revive_postgres
        return found

    def revive_postgres(self) -> None:
        """Start the embedded PostgreSQL again if its server is gone: on the same socket, so the
        clients on its URL reconnect to it."""
        revived = revive_postgres(self.settings.data_dir)
        if revived is not None:
            log.info("embedded_postgres_started_again", dsn=revived.dsn)

    def revive_redis(self) -> None:
        """Start the embedded Redis again if it no longer answers (a long-running command calls
        this in an outage): on the same socket, so the clients on its URL reconnect to it."""
        assert self.settings.redis_url is not None
        revived = revive_redis(self.settings.data_dir, self.settings.redis_url)
        if revived is not None:
            log.info("embedded_redis_started_again", url=revived.url)
            self.keep.append(revived.server)


async def resolve_services(settings: Settings) -> Services:
    """DATABASE_URL and REDIS_URL as set, or the embedded servers under the data directory."""
    keep: list[Any] = []
    embedded: list[str] = []
    updates: dict[str, Any] = {}
    if settings.database_url is None and not settings.supabase_configured:
        _refuse_in_production(settings, "DATABASE_URL (or SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY)")
        postgres = start_postgres(settings.data_dir)
        keep.append(postgres.server)
        await migrate(postgres.dsn, plain_postgres=True)
        updates["database_url"] = postgres.dsn
        embedded.append("PostgreSQL")
    elif settings.database_url is not None:
        await require_schema(settings.database_url)
    if settings.redis_url is None:
        _refuse_in_production(settings, "REDIS_URL")
        redis_server = start_redis(settings.data_dir)
        keep.append(redis_server.server)
        updates["redis_url"] = redis_server.url
        embedded.append("Redis")
    return Services(settings.model_copy(update=updates), embedded, keep)


def _refuse_in_production(settings: Settings, what: str) -> None:
    if settings.environment is Environment.PRODUCTION:
        raise ConfigurationError(f"{what} is not set, and ENVIRONMENT=production embeds no servers")


def embedded_notice(services: Services) -> str | None:
    """The one line a long-running command prints when it runs on embedded servers."""
    if not services.embedded:
        return None
    unset = " and ".join({"PostgreSQL": "DATABASE_URL", "Redis": "REDIS_URL"}[e] for e in services.embedded)
    return (
        f"using the embedded {' and '.join(services.embedded)} under {services.settings.data_dir} "
        f"({unset} not set)"
    )


async def open_stack(settings: Settings) -> LocalStack:
    services = await resolve_services(settings)
    core = await open_queued_core(services.settings)
    return LocalStack(
        core.settings,
        core.service,
        core.store,
        core.exit,
        core.redis,
        core.queue,
        core.reader,
        keep=services.keep,
        revivers=services.revivers(),
    )


async def cli_matter(stack: LocalStack, matter_id: UUID | None) -> UUID:
    """The matter documents from the command line belong to: given, or one shared CLI matter."""
    if matter_id is not None:
        return matter_id
    return await stack.documents.matter_named(CLI_MATTER_NAME)
