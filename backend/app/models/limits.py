"""The size limits of stored fields, stated once for Python.

The models' field types and the service's input checks are built from these;
the table CHECK constraints in supabase/migrations are the database's own
statement of the same limits, and a test (integration/db/test_limits_sql.py)
proves the two agree.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

# tesseract's language syntax is stated in app.core.languages (settings validate it too)
from app.core.languages import LANGUAGE_MAX as LANGUAGE_MAX
from app.core.languages import LANGUAGE_PATTERN as LANGUAGE_PATTERN

MATTER_NAME_MAX = 500
FILENAME_MAX = 1024
STORAGE_PATH_MAX = 1024
ENGINE_NAME_MAX = 64
WORKER_ID_MAX = 200
ERROR_CODE_MAX = 100
ERROR_MESSAGE_MAX = 4000
PAGE_NUMBER_MAX = 1_000_000
SHA256_HEX_PATTERN = r"^[0-9a-f]{64}$"

PageNumber = Annotated[int, Field(ge=1, le=PAGE_NUMBER_MAX)]
Sha256Hex = Annotated[str, Field(pattern=SHA256_HEX_PATTERN)]
StoragePath = Annotated[str, Field(min_length=1, max_length=STORAGE_PATH_MAX)]
Filename = Annotated[str, Field(min_length=1, max_length=FILENAME_MAX)]
EngineName = Annotated[str, Field(min_length=1, max_length=ENGINE_NAME_MAX)]
Language = Annotated[str, Field(min_length=1, max_length=LANGUAGE_MAX, pattern=LANGUAGE_PATTERN)]
# a worker id must also say something: whitespace alone is not an id
WorkerId = Annotated[str, StringConstraints(min_length=1, max_length=WORKER_ID_MAX, pattern=r"\S")]
ErrorCodeText = Annotated[str, Field(min_length=1, max_length=ERROR_CODE_MAX)]
ErrorMessageText = Annotated[str, Field(max_length=ERROR_MESSAGE_MAX)]
MatterName = Annotated[str, Field(min_length=1, max_length=MATTER_NAME_MAX)]
