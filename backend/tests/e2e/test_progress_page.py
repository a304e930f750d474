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
from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect

from app.pdf.samples import make_born_digital_pdf
from app.services.ocr_chunk_service import OCRChunkService
from app.services.runtime import Runtime
from app.storage.checksums import sha256_hex
from tests.factories import (
    lose_chunk_input,
    make_document,
    make_matter,
    make_user,
    pdf_with_an_unreadable_page,
    ranges,
)
from tests.integration.api.conftest import bearer, token
from tests.integration.conftest import burst_worker
from tests.pdf_factories import make_mixed_pdf
from tests.servers import free_port

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
async def test_page_runs_its_own_script_only_and_may_not_be_framed(
    server: str, browser: Browser, runtime: Runtime, arq_redis: ArqRedis, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    """A token in the fragment is a session: the page had no Content-Security-Policy and could be
    framed by any site. Its own script and style run under the policy (no violation while it
    works); a script put into it does not."""
    matter = await make_matter(pool)
    user = await make_user(pool, matter)
    make_born_digital_pdf(tmp_path / "a.pdf", pages=2)
    document_id = await upload(server, user, matter, tmp_path / "a.pdf", engine="text-layer")
    await burst_worker(arq_redis, runtime).main()

    page = await browser.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    response = await page.goto(f"{server}/ui/documents/{document_id}#token={token(user)}")
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "script-src 'self' 'sha256-" in policy
    assert response.headers["x-frame-options"] == "DENY"
    await expect(page.locator("#summary")).to_contain_text("completed: 2 of 2 pages (100%)")
    injected = await page.evaluate(
        """() => { const s = document.createElement("script"); s.textContent = "window.injected = 1";
        document.body.appendChild(s); return window.injected === 1; }"""
    )
    assert injected is False
    violations = [text for text in console if "Content Security Policy" in text]
    assert len(violations) == 1  # the injected script's, and no other
    assert "inline script" in violations[0]


@pytest.mark.timeout(180)
async def test_page_links_to_the_searchable_pdf_once_done(
    server: str, browser: Browser, runtime: Runtime, arq_redis: ArqRedis, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    matter = await make_matter(pool)
    user = await make_user(pool, matter)
    make_mixed_pdf(tmp_path / "scan.pdf", "sd", seed=81)
    document_id = await upload(server, user, matter, tmp_path / "scan.pdf", chunkPages="2", engine="auto")

    page = await browser.new_page()
    await page.goto(f"{server}/ui/documents/{document_id}#token={token(user)}")
    await expect(page.locator("#summary")).to_contain_text("processing")
    await expect(page.locator("#pdf")).to_be_hidden()  # nothing to download yet
    await burst_worker(arq_redis, runtime).main()
    await expect(page.locator("#pdf")).to_be_visible(timeout=15_000)
    async with page.expect_download() as downloading:
        await page.click("#pdf")
    download = await downloading.value
    assert download.suggested_filename == f"{document_id}.ocr.pdf"
    saved = Path(await download.path())
    async with httpx.AsyncClient(base_url=server, timeout=30) as client:
        served = await client.get(f"/documents/{document_id}/ocr/result.pdf", headers=bearer(user))
    assert served.status_code == 200
    assert await asyncio.to_thread(saved.read_bytes) == served.content
    assert sha256_hex(served.content) == served.headers["x-checksum-sha256"]
    assert await page.locator("#error").text_content() == ""


@pytest.mark.timeout(180)
async def test_page_says_which_pages_could_not_be_read_and_stops_polling(
    server: str, browser: Browser, runtime: Runtime, arq_redis: ArqRedis, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    matter = await make_matter(pool)
    user = await make_user(pool, matter)
    pdf_with_an_unreadable_page(tmp_path / "doc.pdf", "dhd")
    document_id = await upload(server, user, matter, tmp_path / "doc.pdf", chunkPages="3", engine="tesseract")
    await burst_worker(arq_redis, runtime).main()

    page = await browser.new_page()
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "/progress" in request.url else None)
    await page.goto(f"{server}/ui/documents/{document_id}#token={token(user)}")
    await expect(page.locator("#summary")).to_contain_text(
        "completed_with_errors: 3 of 3 pages (100%), 1 could not be read (see the result)"
    )
    await expect(page.locator("#retry")).to_be_hidden()
    await asyncio.sleep(2.5)  # a finished document is polled every 5 s, not every second
    assert len(polls) == 1, polls


@pytest.mark.timeout(180)
async def test_page_shows_a_failed_chunk_and_retries_it(
    server: str, browser: Browser, runtime: Runtime, arq_redis: ArqRedis, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    matter = await make_matter(pool)
    user = await make_user(pool, matter)
    make_born_digital_pdf(tmp_path / "doc.pdf", pages=2, seed=3)
    document_id = await upload(
        server, user, matter, tmp_path / "doc.pdf", chunkPages="1", engine="text-layer"
    )
    await lose_chunk_input(pool, runtime.settings.local_storage_dir, UUID(document_id), 1)
    await burst_worker(arq_redis, runtime).main()

    page = await browser.new_page()
    retry_calls: list[str] = []
    page.on(
        "request",
        lambda request: retry_calls.append(request.url) if request.url.endswith("/ocr/retry") else None,
    )
    await page.goto(f"{server}/ui/documents/{document_id}#token={token(user)}")
    await expect(page.locator(".failure")).to_contain_text("chunk 1 (pages 2-2): object_not_found")
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


async def started_document(service: OCRChunkService, pool: asyncpg.Pool) -> tuple[UUID, UUID]:
    """A member and their 6-page document in 3 chunks, started and untouched: 0 of 6 pages."""
    matter = await make_matter(pool)
    user = await make_user(pool, matter)
    document_id = await make_document(pool, matter, 6)
    await service.start_document(document_id, ranges(6, 2))
    return user, document_id


async def visit(context: BrowserContext, url: str, stay: float = 3) -> Page:
    """The page opened anew (a new load, not a jump within the last one's fragment) on the context's
    localStorage, `stay` seconds after its load (it polls every second)."""
    page = await context.new_page()
    await page.goto(url)
    await asyncio.sleep(stay)
    return page


async def remembering(
    server: str, browser: Browser, service: OCRChunkService, pool: asyncpg.Pool
) -> tuple[BrowserContext, UUID, UUID]:
    """A browser context whose page has been opened once with a member's token (remembered), on
    the member's started document: (the context, the member, the document)."""
    user, document_id = await started_document(service, pool)
    context = await browser.new_context()
    await shows_progress(await visit(context, f"{server}/ui/documents/{document_id}#token={token(user)}", 0))
    return context, user, document_id


async def shows_progress(page: Page) -> None:
    """The page shows the started document's progress (polled from the page's own origin), and is closed."""
    await expect(page.locator("#summary")).to_contain_text("processing: 0 of 6 pages (0%), 0/3 chunks")
    await page.close()


@pytest.mark.timeout(60)
async def test_a_link_without_a_token_cannot_send_the_remembered_token_to_another_api(
    server: str, browser: Browser, service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    context, _, document_id = await remembering(server, browser, service, pool)

    evil = f"http://127.0.0.1:{free_port()}"  # nothing listens: a stand-in for an attacker
    authorized: list[str] = []
    context.on(
        "request",
        lambda request: authorized.append(request.url) if "authorization" in request.headers else None,
    )
    page = await visit(context, f"{server}/ui/documents/{document_id}#api={evil}")
    assert [url for url in authorized if not url.startswith(server + "/")] == []
    await shows_progress(page)  # with the remembered token, from the page's own origin
    assert authorized
    await context.close()


@pytest.mark.timeout(60)
async def test_a_link_without_a_token_cannot_point_the_remembered_token_at_another_realtime(
    server: str, browser: Browser, service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    context, user, document_id = await remembering(server, browser, service, pool)

    evil = f"http://127.0.0.1:{free_port()}"  # nothing listens: a stand-in for an attacker
    evil_ws = "ws" + evil.removeprefix("http")
    contacted: list[str] = []
    context.on("request", lambda request: contacted.append(request.url))
    context.on("page", lambda opened: opened.on("websocket", lambda ws: contacted.append(ws.url)))
    page = await visit(context, f"{server}/ui/documents/{document_id}#supabaseUrl={evil}&anonKey=x")
    assert [url for url in contacted if url.startswith((evil, evil_ws))] == []
    await shows_progress(page)

    # Nor later, from a legitimate link with a token and no Supabase: the URL was not remembered.
    page = await visit(context, f"{server}/ui/documents/{document_id}#token={token(user)}")
    assert [url for url in contacted if url.startswith((evil, evil_ws))] == []
    await shows_progress(page)
    await context.close()
