"""The one settings object of a process, read from the environment and validated at start-up."""

from __future__ import annotations

import os
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Self
from uuid import UUID

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.core.errors import ConfigurationError
from app.core.languages import DEFAULT_LANGUAGE, InvalidLanguageError, check_language

# Values copied from templates and tutorials; a deployment that still carries one is misconfigured.
_PLACEHOLDER_SECRETS = frozenset(
    {
        "changethis",
        "change-me",
        "changeme",
        "your-service-role-key",
        "your-jwt-secret",
        "secret",
        "xxx",
        "todo",
        "placeholder",
    }
)


class RepositoryBackend(StrEnum):
    POSTGRES = "postgres"  # asyncpg straight to DATABASE_URL (direct or pooler)
    SUPABASE = "supabase"  # supabase-py: PostgREST table ops and RPC


class StorageBackend(StrEnum):
    LOCAL = "local"  # a directory on this machine
    SUPABASE = "supabase"  # Supabase Storage through storage3


class Environment(StrEnum):
    DEVELOPMENT = "development"
    TEST = "test"
    PRODUCTION = "production"


def _default_data_dir() -> Path:
    return Path.home() / ".cache" / "chunk-ocr"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", case_sensitive=False)

    environment: Environment = Environment.DEVELOPMENT
    log_level: str = "INFO"
    log_file: Path | None = None  # structured log lines appended here (JSON) instead of stderr

    database_url: str | None = None
    database_pool_min_size: Annotated[int, Field(ge=0)] = 1
    database_pool_max_size: Annotated[int, Field(ge=1)] = 10
    # Transaction poolers (Supabase's on port 6543, PgBouncer) cannot keep named
    # prepared statements between transactions; 0 turns asyncpg's cache off.
    database_statement_cache_size: Annotated[int, Field(ge=0)] | None = None
    # A database call (or connection) that has not answered in this long is an outage, as a refused
    # one is: a dead connection (a failover, a NAT that forgot it) would otherwise hang its caller
    # until TCP gives up, about 15 minutes. The same bound on each PostgREST request.
    database_timeout_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 30.0
    redis_url: str | None = None
    # A Redis reply not received in this long fails that try, as a refused connection does (each
    # command is tried 7 times over about 4 s, then is an outage); unbounded, a dead connection
    # would hold its caller until TCP gives up, about 15 minutes.
    redis_timeout_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 5.0

    supabase_url: str | None = None
    supabase_service_role_key: SecretStr | None = None
    supabase_jwt_secret: SecretStr | None = None
    chunk_repository: RepositoryBackend | None = None  # default: supabase when its keys are set

    ocr_engine: str = "auto"
    ocr_language: str = DEFAULT_LANGUAGE  # tesseract's codes for documents that name none: eng, eng+deu
    ocr_chunk_pages: Annotated[int, Field(ge=1, le=1000)] | None = None  # None: chosen per file
    ocr_max_attempts: Annotated[int, Field(ge=1, le=100)] = 3
    ocr_retry_base_seconds: Annotated[float, Field(ge=0)] = 30.0
    ocr_retry_cap_seconds: Annotated[float, Field(ge=0)] = 600.0
    stale_chunk_threshold_seconds: Annotated[float, Field(gt=0)] = 90.0
    heartbeat_interval_seconds: Annotated[float, Field(gt=0)] = 5.0
    sweep_interval_seconds: Annotated[int, Field(ge=1, le=60)] = 15
    # Build result.pdf (the original with an invisible text layer over each OCR'd page) at finalize.
    searchable_pdf: bool = True
    # Read pages whose own text layer is their text (engines auto and text-layer) while planning,
    # in OCR processes of the planning process: a born-digital document is complete when its
    # upload returns, and workers only see pages to OCR. False: workers read every page.
    read_text_at_planning: bool = True
    ocr_low_confidence_threshold: Annotated[float, Field(ge=0, le=1)] = 0.7
    ocr_processes: Annotated[int, Field(ge=1, le=256)] | None = None  # None: one per core
    # Limits that hold whatever a PDF says (README, "Limits"). A page tree may name one small page
    # 100,000 times: the page count is what planning and OCR cost, not the file's size.
    max_pages_per_document: Annotated[int, Field(ge=1)] = 10_000
    max_page_decoded_mb: Annotated[int, Field(ge=0)] = 512  # content + images of a page; 0: unlimited
    ocr_process_memory_mb: Annotated[int, Field(ge=0)] = 2048  # RLIMIT_AS per OCR process; 0: none
    # CPU seconds PDFium and the engine may spend on one page, tesseract's reading aside; 0: none
    max_page_cpu_seconds: Annotated[int, Field(ge=0)] = 120
    # Pages of one document, on any worker, that may use up MAX_PAGE_CPU_SECONDS before each page
    # of it still to be read gets MAX_PAGE_CPU_SECONDS_AFTER_TIMEOUTS instead (a hostile file of a
    # thousand such pages would cost a thousand times the full limit); 0: no such budget
    max_document_page_timeouts: Annotated[int, Field(ge=0)] = 3
    max_page_cpu_seconds_after_timeouts: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 10.0
    # An OCR process whose task makes no progress this long (no page begun, no CPU used, no command
    # of its own running: stopped or hung) is killed; 0: never
    ocr_process_stall_seconds: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 300.0
    # Characters of text one page, and one document's merged result, may hold; 0: none
    max_page_text_chars: Annotated[int, Field(ge=0)] = 1_000_000
    max_document_text_chars: Annotated[int, Field(ge=0)] = 100_000_000

    # arq worker
    worker_max_jobs: Annotated[int, Field(ge=1, le=1000)] | None = None  # None: OCR processes + 1
    worker_grace_seconds: Annotated[int, Field(ge=0, le=3600)] = 60  # SIGTERM: wait for running chunks
    chunk_job_timeout_seconds: Annotated[int, Field(ge=10)] = 3600
    # Each worker process serves /metrics on this port (0: a free port, logged); None: not served.
    worker_metrics_port: Annotated[int, Field(ge=0, le=65535)] | None = None
    worker_metrics_host: Annotated[str, Field(min_length=1)] = "0.0.0.0"

    storage_backend: StorageBackend | None = None  # default: supabase when its keys are set
    local_storage_dir: Path = Field(default_factory=lambda: _default_data_dir() / "storage")
    storage_bucket: str = "ocr-chunks"
    data_dir: Path = Field(default_factory=_default_data_dir)

    google_application_credentials: Path | None = None
    # The google-vision engine, built with these in each OCR process (app.engines.registry).
    google_vision_endpoint: Annotated[str, Field(min_length=1)] = "vision.googleapis.com"
    google_vision_insecure: bool = False  # plaintext gRPC without credentials: a local stand-in (tests)
    google_vision_max_concurrency: Annotated[int, Field(ge=1)] = 4  # requests in flight per chunk
    google_vision_timeout_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 120.0  # per request
    # One Vision quota for the fleet, kept in Redis (docs/VISION_QUOTA.md). Defaults: Google's
    # published per-project quotas (requests, and text detection pages, per minute).
    google_vision_requests_per_minute: Annotated[int, Field(ge=1)] = 1800
    google_vision_pages_per_minute: Annotated[int, Field(ge=5)] = 1800  # 5: one full request
    google_vision_pages_in_flight: Annotated[int, Field(ge=5)] = 500  # fleet-wide, sent and unanswered
    google_vision_quota_window_seconds: Annotated[float, Field(gt=0, le=60, allow_inf_nan=False)] = 60.0
    google_vision_quota_max_wait_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 600.0
    # After a RESOURCE_EXHAUSTED (429): the fleet waits base * 2^(strikes - 1), capped.
    google_vision_backoff_base_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 2.0
    google_vision_backoff_cap_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 64.0
    google_vision_quota_project: str = ""  # the Cloud project whose quota it is; "": default

    # HTTP API
    max_upload_bytes: Annotated[int, Field(ge=1)] = 200 * 1024 * 1024
    max_concurrent_uploads: Annotated[int, Field(ge=1, le=1000)] = 4  # per API process; then 503
    upload_idle_seconds: Annotated[float, Field(gt=0, le=3600)] = 30.0  # no byte for this long: 408
    supabase_jwt_audience: str = "authenticated"
    supabase_jwks_url: str | None = None  # asymmetric JWT signing keys; HS256 with the secret otherwise
    # The tokens' `iss`, e.g. https://<ref>.supabase.co/auth/v1; unset: not checked.
    supabase_jwt_issuer: str | None = None
    auth_disabled: bool = False  # development only: every request is AUTH_DEV_USER_ID
    auth_dev_user_id: UUID | None = None

    @field_validator("google_vision_endpoint", "google_vision_insecure", mode="before")
    @classmethod
    def _empty_is_the_default(cls, value: object, info: ValidationInfo) -> object:
        # An empty GOOGLE_VISION_ENDPOINT or GOOGLE_VISION_INSECURE has always meant the default.
        if value == "" and info.field_name is not None:
            return cls.model_fields[info.field_name].default
        return value

    @field_validator("ocr_language")
    @classmethod
    def _language(cls, value: str) -> str:
        try:
            return check_language(value)
        except InvalidLanguageError as exc:
            raise ValueError(str(exc).removeprefix("language: ")) from None

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.heartbeat_interval_seconds * 2 > self.stale_chunk_threshold_seconds:
            raise ValueError(
                "HEARTBEAT_INTERVAL_SECONDS must be at most half of STALE_CHUNK_THRESHOLD_SECONDS"
            )
        if self.database_pool_min_size > self.database_pool_max_size:
            raise ValueError("DATABASE_POOL_MIN_SIZE must not exceed DATABASE_POOL_MAX_SIZE")
        for name in ("supabase_service_role_key", "supabase_jwt_secret"):
            secret: SecretStr | None = getattr(self, name)
            if secret is not None and secret.get_secret_value().strip().lower() in _PLACEHOLDER_SECRETS:
                raise ValueError(f"{name.upper()} is a placeholder value; set the real secret")
        if self.auth_disabled and self.environment is Environment.PRODUCTION:
            raise ValueError("AUTH_DISABLED cannot be set when ENVIRONMENT=production")
        if self.auth_disabled and self.auth_dev_user_id is None:
            raise ValueError("AUTH_DISABLED needs AUTH_DEV_USER_ID, the user every request acts as")
        if self.repository_backend is RepositoryBackend.SUPABASE and not self.supabase_configured:
            raise ValueError("CHUNK_REPOSITORY=supabase needs SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY")
        if self.storage_backend is StorageBackend.SUPABASE and not self.supabase_configured:
            raise ValueError("STORAGE_BACKEND=supabase needs SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY")
        return self

    @property
    def supabase_configured(self) -> bool:
        return bool(self.supabase_url and self.supabase_service_role_key)

    def supabase_credentials(self) -> tuple[str, str]:
        """The project URL and the service-role key, or ConfigurationError naming what is unset."""
        if not self.supabase_url or self.supabase_service_role_key is None:
            raise ConfigurationError("SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY must both be set")
        return self.supabase_url, self.supabase_service_role_key.get_secret_value()

    @property
    def repository_backend(self) -> RepositoryBackend:
        if self.chunk_repository is not None:
            return self.chunk_repository
        return RepositoryBackend.SUPABASE if self.supabase_configured else RepositoryBackend.POSTGRES

    @property
    def ocr_process_count(self) -> int:
        return self.ocr_processes or max(1, os.cpu_count() or 1)

    @property
    def blob_backend(self) -> StorageBackend:
        if self.storage_backend is not None:
            return self.storage_backend
        return StorageBackend.SUPABASE if self.supabase_configured else StorageBackend.LOCAL

    @property
    def statement_cache_size(self) -> int:
        if self.database_statement_cache_size is not None:
            return self.database_statement_cache_size
        url = self.database_url or ""
        return 0 if (":6543/" in url or "pgbouncer=true" in url) else 100


def load_settings(**overrides: object) -> Settings:
    """Build Settings, turning pydantic's report into one line naming the bad setting."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]).upper()
        prefix = f"{where}: " if where else ""
        raise ConfigurationError(f"invalid setting {prefix}{first['msg']}") from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
