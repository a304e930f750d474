"""Domain errors to HTTP, in one place: a status per error class, the error's code in the body."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from app.core.errors import (
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    NotFoundError,
    OCRError,
    RepositoryUnavailableError,
)
from app.core.logging import get_logger
from app.storage.errors import StorageError

log = get_logger(__name__)


class AuthError(OCRError):
    """Missing, malformed, expired or foreign bearer token."""

    code = "unauthorized"


class PayloadTooLargeError(InvalidInputError):
    code = "file_too_large"


# Most specific first: the first class an error is an instance of decides.
_STATUS: list[tuple[type[OCRError], int]] = [
    (AuthError, 401),
    (PayloadTooLargeError, 413),
    (NotFoundError, 404),
    (ConflictError, 409),
    (InvalidInputError, 422),
    (RepositoryUnavailableError, 503),
    (StorageError, 503),
    (ConfigurationError, 500),
]


def status_for(error: OCRError) -> int:
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return 503 if error.retryable and status >= 500 else status
    return 503 if error.retryable else 500


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    return {"error": {"code": code, "message": message}}


async def handle_ocr_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, OCRError)
    status = status_for(exc)
    if status >= 500:
        log.error("request_failed", path=request.url.path, error_code=exc.code, error=str(exc))
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_body(exc.code, str(exc)), status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(OCRError, handle_ocr_error)
