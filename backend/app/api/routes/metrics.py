"""Prometheus metrics of this API process, of the queue and of the fleet's Vision quota
(docs/METRICS.md).

The queue's gauges are read from the database at each scrape, the Vision quota's counters from
Redis; when one does not answer in time, the scrape still succeeds, with chunk_ocr_queue_up (or
chunk_ocr_vision_quota_up) 0 and none of its numbers.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Response
from redis.exceptions import RedisError

from app.api.deps import CoreDep
from app.core.errors import OCRError
from app.core.logging import get_logger
from app.engines.vision_quota import VisionQuotaCounters, quota_scope, read_counters
from app.metrics import QueueReading, VisionReading, exposition
from app.metrics.exposition import CONTENT_TYPE_LATEST
from app.models.queue import QueueSnapshot
from app.services.composition import QueuedCore

router = APIRouter(tags=["metrics"])
log = get_logger(__name__)

# Well inside Prometheus' default scrape timeout (10 s): a slow database costs the queue gauges
# of one scrape, not the scrape.
QUEUE_READ_TIMEOUT_SECONDS = 5.0


@router.get("/metrics", include_in_schema=False)
async def metrics(core: CoreDep) -> Response:
    scope = quota_scope(core.settings)
    # Both sources at once: with the database and Redis both down a scrape takes one budget, not two.
    snapshot, vision = await asyncio.gather(_queue(core), _vision(core, scope))
    body = exposition(core.service.metrics.registry, QueueReading(snapshot), VisionReading(scope, vision))
    return Response(body, media_type=CONTENT_TYPE_LATEST)


async def _queue(core: QueuedCore) -> QueueSnapshot | None:
    try:
        async with asyncio.timeout(QUEUE_READ_TIMEOUT_SECONDS):
            return await core.service.queue_snapshot()
    except (OCRError, TimeoutError) as exc:
        log.warning("metrics_queue_unread", error_code=getattr(exc, "code", "timeout"), error=str(exc))
        return None


async def _vision(core: QueuedCore, scope: str) -> VisionQuotaCounters | None:
    try:
        async with asyncio.timeout(QUEUE_READ_TIMEOUT_SECONDS):
            return await read_counters(core.redis, scope)
    except (RedisError, OSError, TimeoutError) as exc:
        log.warning("metrics_vision_unread", error=f"{type(exc).__name__}: {exc}")
        return None
