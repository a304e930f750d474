"""supabase/config.toml and the migrations declare the same bucket and database version."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_bucket_declared_alike_in_config_and_migration() -> None:
    config = tomllib.loads((ROOT / "supabase" / "config.toml").read_text())
    assert config["db"]["major_version"] == 15
    bucket = config["storage"]["buckets"]["ocr-chunks"]
    assert bucket["public"] is False
    match = re.fullmatch(r"(\d+)MiB", bucket["file_size_limit"])
    assert match is not None
    number = match.group(1)
    limit_bytes = int(number) * 1024 * 1024

    (access,) = (ROOT / "supabase" / "migrations").glob("*_ocr_access.sql")
    row = re.search(
        r"values \('ocr-chunks', 'ocr-chunks', (\w+), (\d+),\s*array\[([^\]]*)\]\)", access.read_text()
    )
    assert row is not None
    public, size, mimes = row.groups()
    assert public == "false"
    assert int(size) == limit_bytes
    assert [m.strip().strip("'") for m in mimes.split(",")] == bucket["allowed_mime_types"]
