from __future__ import annotations

import pytest

from app.core.config import RepositoryBackend, load_settings
from app.core.errors import ConfigurationError


def test_defaults_follow_the_design(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SUPABASE_URL", "SUPABASE_SERVICE_ROLE_KEY", "OCR_ENGINE", "CHUNK_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert settings.ocr_engine == "auto"
    assert settings.ocr_max_attempts == 3
    assert settings.ocr_retry_base_seconds == 30
    assert settings.stale_chunk_threshold_seconds == 90
    assert settings.heartbeat_interval_seconds == 5
    assert settings.storage_bucket == "ocr-chunks"
    assert settings.repository_backend is RepositoryBackend.POSTGRES


def test_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STALE_CHUNK_THRESHOLD_SECONDS", "12")
    monkeypatch.setenv("HEARTBEAT_INTERVAL_SECONDS", "2")
    monkeypatch.setenv("SUPABASE_URL", "https://abc.supabase.co")
    monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", "eyJhbGciOiJIUzI1NiJ9.real")
    settings = load_settings()
    assert settings.stale_chunk_threshold_seconds == 12
    assert settings.repository_backend is RepositoryBackend.SUPABASE


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"OCR_MAX_ATTEMPTS": "0"}, "OCR_MAX_ATTEMPTS"),
        ({"STALE_CHUNK_THRESHOLD_SECONDS": "abc"}, "STALE_CHUNK_THRESHOLD_SECONDS"),
        ({"STORAGE_BACKEND": "s3"}, "STORAGE_BACKEND"),
        (
            {"SUPABASE_SERVICE_ROLE_KEY": "changethis", "SUPABASE_URL": "https://x.supabase.co"},
            "SUPABASE_SERVICE_ROLE_KEY",
        ),
        ({"STORAGE_BACKEND": "supabase"}, "SUPABASE_URL"),
        ({"HEARTBEAT_INTERVAL_SECONDS": "60"}, "HEARTBEAT_INTERVAL_SECONDS"),
    ],
)
def test_bad_settings_give_one_line_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], named: str
) -> None:
    for name in ("SUPABASE_URL", "SUPABASE_SERVICE_ROLE_KEY"):
        monkeypatch.delenv(name, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    message = str(raised.value)
    assert named in message
    assert "\n" not in message


def test_pooler_turns_the_statement_cache_off() -> None:
    pooled = load_settings(database_url="postgresql://u:p@aws-0-eu.pooler.supabase.com:6543/postgres")
    direct = load_settings(database_url="postgresql://u:p@db.abc.supabase.co:5432/postgres")
    assert (pooled.statement_cache_size, direct.statement_cache_size) == (0, 100)


VISION_SETTINGS = (
    "GOOGLE_VISION_ENDPOINT",
    "GOOGLE_VISION_INSECURE",
    "GOOGLE_VISION_MAX_CONCURRENCY",
    "GOOGLE_VISION_TIMEOUT_SECONDS",
)


def test_vision_options_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VISION_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert settings.google_vision_endpoint == "vision.googleapis.com"
    assert settings.google_vision_insecure is False
    assert settings.google_vision_max_concurrency == 4
    assert settings.google_vision_timeout_seconds == 120


def test_vision_options_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_VISION_ENDPOINT", "127.0.0.1:50051")
    monkeypatch.setenv("GOOGLE_VISION_INSECURE", "1")
    monkeypatch.setenv("GOOGLE_VISION_MAX_CONCURRENCY", "9")
    monkeypatch.setenv("GOOGLE_VISION_TIMEOUT_SECONDS", "2.5")
    settings = load_settings()
    assert settings.google_vision_endpoint == "127.0.0.1:50051"
    assert settings.google_vision_insecure is True
    assert settings.google_vision_max_concurrency == 9
    assert settings.google_vision_timeout_seconds == 2.5


def test_empty_vision_endpoint_and_insecure_mean_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_VISION_ENDPOINT", "")
    monkeypatch.setenv("GOOGLE_VISION_INSECURE", "")
    settings = load_settings()
    assert settings.google_vision_endpoint == "vision.googleapis.com"
    assert settings.google_vision_insecure is False


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GOOGLE_VISION_MAX_CONCURRENCY", "0"),
        ("GOOGLE_VISION_MAX_CONCURRENCY", "four"),
        ("GOOGLE_VISION_TIMEOUT_SECONDS", "0"),
        ("GOOGLE_VISION_TIMEOUT_SECONDS", "-5"),
        ("GOOGLE_VISION_TIMEOUT_SECONDS", "nan"),
        ("GOOGLE_VISION_INSECURE", "perhaps"),
    ],
)
def test_bad_vision_options_are_one_line_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    assert str(raised.value).startswith(f"invalid setting {name}: ")
    assert "\n" not in str(raised.value)


def test_supabase_credentials_name_what_is_missing() -> None:
    settings = load_settings(
        supabase_url="https://abc.supabase.co", supabase_service_role_key="sb-service-role-key-for-tests"
    )
    assert settings.supabase_credentials() == ("https://abc.supabase.co", "sb-service-role-key-for-tests")
    without_key = load_settings(supabase_url="https://abc.supabase.co", supabase_service_role_key=None)
    with pytest.raises(ConfigurationError, match="SUPABASE_SERVICE_ROLE_KEY"):
        without_key.supabase_credentials()
