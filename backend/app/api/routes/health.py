"""Liveness for load balancers: the database and Redis answer."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.api.deps import CoreDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz(core: CoreDep) -> JSONResponse:
    return await _health(core)


@router.head("/healthz", include_in_schema=False)  # some load balancers ask with HEAD
async def healthz_head(core: CoreDep) -> JSONResponse:
    return await _health(core)


async def _health(core: CoreDep) -> JSONResponse:
    checks = await core.health()
    healthy = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ok" if healthy else "unavailable", **checks}, status_code=200 if healthy else 503
    )
