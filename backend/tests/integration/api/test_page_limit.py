"""MAX_PAGES_PER_DOCUMENT over HTTP: a page tree naming one page 100,000 times is 422
`too_many_pages`, refused while the upload is inspected, leaving no row and no object."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import httpx

from app.services.runtime import Runtime
from tests.bombs import repeated_page_pdf
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import bearer


async def test_a_repeated_page_tree_is_422_too_many_pages(
    client: httpx.AsyncClient, pool: asyncpg.Pool, runtime: Runtime, tmp_path: Path
) -> None:
    matter = await make_matter(pool, "A")
    user = await make_user(pool, matter)
    pdf = repeated_page_pdf(tmp_path / "repeated.pdf", 100_000)  # 600 KB: under the upload limit
    for start in ("true", "false"):  # registering only is refused as well: a later start would be
        with pdf.open("rb") as handle:
            response = await client.post(
                "/documents",
                headers=bearer(user),
                data={"matterId": str(matter), "start": start},
                files={"file": (pdf.name, handle, "application/pdf")},
            )
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "too_many_pages"
        assert error["message"] == (
            "the PDF has 100000 pages, more than the 10000 allowed (MAX_PAGES_PER_DOCUMENT)"
        )
    assert await pool.fetchval("select count(*) from documents") == 0
    bucket = runtime.settings.local_storage_dir / runtime.settings.storage_bucket
    assert not bucket.exists() or not any(p.is_file() for p in bucket.rglob("*"))
