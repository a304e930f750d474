"""SQLSTATE -> domain error, the single translation both repositories use."""

from __future__ import annotations

import pytest

from app.core.errors import (
    DuplicateChunkError,
    InvalidInputError,
    InvalidStatusTransitionError,
    OCRError,
    RepositoryError,
    RepositoryUnavailableError,
    SchemaMissingError,
)
from app.db.errors import error_for_sqlstate


@pytest.mark.parametrize(
    ("sqlstate", "expected", "retryable"),
    [
        ("OC001", InvalidStatusTransitionError, False),
        ("23505", DuplicateChunkError, False),
        ("23514", InvalidInputError, False),
        ("22P02", InvalidInputError, False),
        ("08006", RepositoryUnavailableError, True),
        ("57P01", RepositoryUnavailableError, True),
        ("53300", RepositoryUnavailableError, True),
        ("40P01", RepositoryUnavailableError, True),
        ("42883", SchemaMissingError, False),  # undefined_function: not migrated
        ("42P01", SchemaMissingError, False),  # undefined_table
        ("PGRST202", SchemaMissingError, False),  # PostgREST: no such function
        ("42601", RepositoryError, False),  # a syntax error: ours
        (None, RepositoryError, False),
    ],
)
def test_sqlstates(sqlstate: str | None, expected: type[OCRError], retryable: bool) -> None:
    error = error_for_sqlstate(sqlstate, "message text is not inspected", on_unique=DuplicateChunkError)
    assert type(error) is expected
    assert error.retryable is retryable


def test_unique_violation_without_context_is_a_repository_error() -> None:
    assert type(error_for_sqlstate("23505", "duplicate key")) is RepositoryError
