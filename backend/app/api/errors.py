"""Domain errors to HTTP, in one place: a status per error class, the error's code in the body."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from app.core.errors import (
    ConfigurationError,
    ConflictError,
    ForbiddenError,
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


class UploadStalledError(InvalidInputError):
    """No byte of the body arrived for UPLOAD_IDLE_SECONDS: the upload's slot is given back."""

    code = "upload_stalled"


# Most specific first: the first class an error is an instance of decides.
_STATUS: list[tuple[type[OCRError], int]] = [
    (AuthError, 401),
    (PayloadTooLargeError, 413),
    (UploadStalledError, 408),
    (ForbiddenError, 403),
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
    if status >= 500:  # a retryable one (an outage, uploads shed under load) is expected: a warning
        (log.warning if exc.retryable else log.error)(
            "request_failed",
            path=request.url.path,
            error_code=exc.code,
            error=str(exc),
            detail=exc.context.get("detail"),
        )
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if (retry_after := getattr(exc, "retry_after_seconds", None)) is not None:
        headers = {"Retry-After": str(retry_after)}
    return JSONResponse(error_body(exc.code, str(exc)), status_code=status, headers=headers)


# Statuses FastAPI and Starlette raise themselves (an unknown path, a wrong method), by code.
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "file_too_large",
    415: "unsupported_media_type",
}


async def handle_validation_error(request: Request, exc: Exception) -> JSONResponse:
    """A malformed request (a form field missing or of the wrong type): 422 invalid_input, naming
    the first field and what is wrong with it, never echoing the value sent."""
    assert isinstance(exc, RequestValidationError)
    problems = []
    for error in exc.errors()[:5]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part not in ("body", "query", "path"))
        problems.append(f"{where or 'request'}: {error.get('msg', 'invalid')}")
    return JSONResponse(error_body("invalid_input", "; ".join(problems)), status_code=422)


async def handle_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
    return JSONResponse(error_body(code, message), status_code=exc.status_code, headers=exc.headers)


async def handle_unexpected(request: Request, exc: Exception) -> JSONResponse:
    """A bug: logged with its traceback, answered without one."""
    log.error("request_crashed", path=request.url.path, error_type=type(exc).__name__, exc_info=exc)
    return JSONResponse(error_body("internal_error", "internal error"), status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(OCRError, handle_ocr_error)
    app.add_exception_handler(RequestValidationError, handle_validation_error)
    app.add_exception_handler(HTTPException, handle_http_error)
    app.add_exception_handler(Exception, handle_unexpected)
