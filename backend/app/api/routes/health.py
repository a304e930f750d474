"""Liveness for load balancers: the database and Redis answer."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.api.deps import ServiceDep
from app.core.errors import OCRError

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz(request: Request, service: ServiceDep) -> JSONResponse:
    checks: dict[str, str] = {}
    try:
        await service.ping()
        checks["database"] = "ok"
    except OCRError as exc:
        checks["database"] = exc.code
    try:
        await request.app.state.redis.ping()
        checks["redis"] = "ok"
    except (OSError, ConnectionError, TimeoutError) as exc:
        checks["redis"] = type(exc).__name__
    healthy = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ok" if healthy else "unavailable", **checks}, status_code=200 if healthy else 503
    )
