"""Translation of database errors into domain errors, by SQLSTATE only.

Both repository implementations feed the SQLSTATE they received (asyncpg's
``sqlstate``, PostgREST's ``code``) through ``error_for_sqlstate``; the caller
says which domain error a unique or foreign-key violation means for the
operation it ran, since only the operation knows which constraint it touched.
"""

from __future__ import annotations

from app.core.errors import (
    InvalidInputError,
    InvalidStatusTransitionError,
    OCRAlreadyStartedError,
    OCRError,
    RepositoryError,
    RepositoryUnavailableError,
    SchemaMissingError,
)

# Raised by ocr_chunk_status_guard (supabase/migrations/*_ocr_schema.sql).
SQLSTATE_INVALID_TRANSITION = "OC001"
# Raised by ocr_start_document (*_ocr_start_finalize_engine.sql) when OCR has started already.
SQLSTATE_ALREADY_STARTED = "OC002"
# A table or function of ours missing: PostgreSQL's undefined_table and undefined_function, and
# PostgREST's "no such function in the schema cache" and "no such table".
_SCHEMA_MISSING = frozenset({"42P01", "42883", "PGRST202", "PGRST205"})
SQLSTATE_UNIQUE_VIOLATION = "23505"
SQLSTATE_FOREIGN_KEY_VIOLATION = "23503"

_INVALID_INPUT = frozenset(
    {
        "23502",  # not_null_violation
        "23514",  # check_violation
        "22P02",  # invalid_text_representation (a bad uuid, say)
        "22003",  # numeric_value_out_of_range
        "22023",  # invalid_parameter_value
        "22007",  # invalid_datetime_format
        "22008",  # datetime_field_overflow
        "22001",  # string_data_right_truncation
    }
)
# Classes and codes where the same statement can succeed later.
_RETRYABLE_CLASSES = ("08", "53", "57")  # connection, resources, operator intervention
_RETRYABLE = frozenset({"40001", "40P01", "55P03"})  # serialization, deadlock, lock_not_available


def error_for_sqlstate(
    sqlstate: str | None,
    message: str,
    *,
    on_unique: type[OCRError] | None = None,
    on_foreign_key: type[OCRError] | None = None,
) -> OCRError:
    state = (sqlstate or "").upper()
    # Our own SQL raises these two with messages written for people; anything else PostgreSQL says
    # names tables, constraints and keys: it stays in the error's context for logs, and the
    # message (what an HTTP caller sees) is ours.
    if state == SQLSTATE_INVALID_TRANSITION:
        return InvalidStatusTransitionError(message, sqlstate=state)
    if state == SQLSTATE_ALREADY_STARTED:
        return OCRAlreadyStartedError(message, sqlstate=state)
    if state == SQLSTATE_UNIQUE_VIOLATION and on_unique is not None:
        return on_unique("it already exists", sqlstate=state, detail=message)
    if state == SQLSTATE_FOREIGN_KEY_VIOLATION and on_foreign_key is not None:
        return on_foreign_key("what it refers to does not exist", sqlstate=state, detail=message)
    if state in _INVALID_INPUT:
        return InvalidInputError(
            "the database refused a value (out of range or malformed)", sqlstate=state, detail=message
        )
    if state in _SCHEMA_MISSING:
        return SchemaMissingError(
            "the database has no chunk-ocr schema, or an older one: run `chunk-ocr db migrate` "
            "(`supabase db push` on a Supabase project)",
            sqlstate=state,
            detail=message,
        )
    if state in _RETRYABLE or state[:2] in _RETRYABLE_CLASSES:
        return RepositoryUnavailableError(
            "the database is unavailable; try again", sqlstate=state, detail=message
        )
    return RepositoryError("the database refused the operation", sqlstate=state, detail=message)
