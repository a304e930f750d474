"""The reference progress page in a real headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest
from arq.connections import ArqRedis
from playwright.async_api import Browser, async_playwright, expect

from app.pdf.samples import make_born_digital_pdf
from app.services.runtime import Runtime
from tests.factories import make_matter, make_user, pdf_with_a_refused_page
from tests.integration.api.conftest import bearer, token
from tests.integration.conftest import burst_worker

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# No downloads, no calls home: the machine has no network and Chromium must not wait for one.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        await chromium.close()


async def upload(server: str, user: UUID, matter: UUID, pdf: Path, **form: str) -> str:
    async with httpx.AsyncClient(base_url=server, timeout=30) as client:
        with pdf.open("rb") as handle:
            response = await client.post(
                "/documents",
                headers=bearer(user),
                data={"matterId": str(matter), **form},
                files={"file": (pdf.name, handle, "application/pdf")},
            )
    assert response.status_code == 201, response.text
    document_id: str = response.json()["document"]["id"]
    return document_id


@pytest.mark.timeout(180)
async def test_page_shows_a_finished_document(
    server: str, browser: Browser, runtime: Runtime, arq_redis: ArqRedis, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    matter = await make_matter(pool)
    user = await make_user(pool, matter)
    make_born_digital_pdf(tmp_path / "a.pdf", pages=6)
    document_id = await upload(server, user, matter, tmp_path / "a.pdf", chunkPages="2", engine="text-layer")
    await burst_worker(arq_redis, runtime).main()

    page = await browser.new_page()
    await page.goto(f"{server}/ui/documents/{document_id}#token={token(user)}")
    await expect(page.locator("#summary")).to_contain_text("completed: 6 of 6 pages (100%)")
    await expect(page.locator("#bar")).to_have_attribute("aria-valuenow", "100")
    await expect(page.locator(".tile.completed")).to_have_count(3)
    await expect(page.locator("#retry")).to_be_hidden()
    assert await page.locator("#error").text_content() == ""
    await page.screenshot(path=str(tmp_path / "completed.png"))


@pytest.mark.timeout(180)
async def test_page_shows_a_failed_chunk_and_retries_it(
    server: str, browser: Browser, runtime: Runtime, arq_redis: ArqRedis, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    matter = await make_matter(pool)
    user = await make_user(pool, matter)
    pdf_with_a_refused_page(tmp_path / "doc.pdf", "dw")
    runtime.processor.engine = "tesseract"
    document_id = await upload(server, user, matter, tmp_path / "doc.pdf", chunkPages="1", engine="tesseract")
    await burst_worker(arq_redis, runtime).main()

    page = await browser.new_page()
    retry_calls: list[str] = []
    page.on(
        "request",
        lambda request: retry_calls.append(request.url) if request.url.endswith("/ocr/retry") else None,
    )
    await page.goto(f"{server}/ui/documents/{document_id}#token={token(user)}")
    await expect(page.locator(".failure")).to_contain_text("chunk 1 (pages 2-2): tesseract_failed")
    await expect(page.locator(".tile.failed")).to_have_count(1)
    await expect(page.locator(".tile.completed")).to_have_count(1)
    await page.screenshot(path=str(tmp_path / "failed.png"))

    await page.locator("#retry").click()
    await expect(page.locator(".tile.pending")).to_have_count(1)
    await expect(page.locator("#retry")).to_be_hidden()
    assert len(retry_calls) == 1
    status = await pool.fetchval(
        "select status from document_ocr_chunks where document_id = $1 and chunk_index = 1", UUID(document_id)
    )
    assert status == "pending"
    await asyncio.sleep(0)
