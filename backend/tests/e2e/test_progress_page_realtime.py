"""The progress page with Supabase Realtime, in headless Chromium: pushed progress from a
websocket-level stand-in of Realtime (tests/realtime_fake.py), and polling when it is absent,
refuses the channel or goes away."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

import asyncpg
import httpx
import pytest
from playwright.async_api import Browser, Page, Route, expect

from app.services.ocr_chunk_service import OCRChunkService
from tests.e2e.test_progress_page import browser, started_document  # noqa: F401 (browser: the fixture)
from tests.factories import checksum
from tests.integration.api.conftest import bearer, token
from tests.realtime_fake import Join, RealtimeFake

ANON_KEY = "test-anon-key.not-a-placeholder"
VENDORED = (
    Path(__file__).resolve().parents[2] / "app" / "api" / "static" / "vendor" / "supabase-js" / "supabase.js"
)


@pytest.fixture
async def realtime() -> AsyncIterator[RealtimeFake]:
    fake = RealtimeFake()
    await fake.start()
    yield fake
    await fake.stop()


def page_url(server: str, document_id: UUID, user_token: str, realtime: RealtimeFake | None) -> str:
    fragment = {"token": user_token}
    if realtime is not None:
        fragment |= {"supabaseUrl": realtime.url, "anonKey": ANON_KEY}
    return f"{server}/ui/documents/{document_id}#{urlencode(fragment)}"


async def complete_chunks(service: OCRChunkService, document_id: UUID, count: int) -> None:
    """Really: claimed and completed through the service, committed."""
    for chunk in (await service.get_chunks_by_document(document_id))[:count]:
        claimed = await service.claim_chunk(chunk.id, "worker")
        assert claimed is not None
        await service.complete_chunk(claimed.lease, f"r/{chunk.chunk_index}.json", checksum(b"r"))


async def broadcast_never_committed(pool: asyncpg.Pool, document_id: UUID, chunks: int) -> dict[str, Any]:
    """The message the trigger writes when the first `chunks` chunks have completed, from a
    transaction rolled back afterwards: Realtime could deliver it, the progress route can never
    answer it."""
    channel = f"document:{document_id}"
    async with pool.acquire() as conn:
        transaction = conn.transaction()
        await transaction.start()
        try:
            ids = await conn.fetch(
                "select id from document_ocr_chunks where document_id = $1 order by chunk_index limit $2",
                document_id,
                chunks,
            )
            for row in ids:
                claimed = await conn.fetchrow("select * from ocr_claim_chunk($1, 'worker')", row["id"])
                assert claimed is not None
                earlier = await conn.fetchval(
                    "select array_agg(id) from realtime.messages where topic = $1", channel
                )
                await conn.execute(
                    "update ocr_progress_broadcasts set sent_at = '-infinity' where document_id = $1",
                    document_id,
                )
                await conn.fetchrow(
                    "select * from ocr_complete_chunk($1, 'worker', $2, 'r.json', $3)",
                    row["id"],
                    claimed["attempt_count"],
                    checksum(b"r"),
                )
            # One transaction: every message has its now(), so the last is told apart by id.
            message = await conn.fetchval(
                "select payload from realtime.messages where topic = $1 and id <> all($2)", channel, earlier
            )
        finally:
            await transaction.rollback()
    sent: dict[str, Any] = json.loads(message)
    return sent


async def joined(realtime: RealtimeFake) -> Join:
    """The page's channel join, once the page has made it."""
    async with asyncio.timeout(30):
        return await realtime.wait_for_join()


async def polled(server: str, document_id: UUID, user: UUID) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server, timeout=30) as client:
        response = await client.get(f"/documents/{document_id}/ocr/progress", headers=bearer(user))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def opened(
    browser: Browser,  # noqa: F811 (the fixture imported above)
    url: str,
    progress_route: Callable[[Route], Awaitable[None]] | None = None,
) -> Page:
    """The page at url, showing the document's progress from its first poll; with
    progress_route, its progress calls handled by it from the first."""
    page = await browser.new_page()
    if progress_route is not None:
        await page.route("**/ocr/progress", progress_route)
    await page.goto(url)
    await expect(page.locator("#summary")).to_contain_text("processing: 0 of 6 pages (0%), 0/3 chunks")
    return page


@pytest.mark.timeout(120)
async def test_a_poll_under_way_when_progress_is_pushed_does_not_put_the_page_back(
    server: str,
    browser: Browser,  # noqa: F811
    realtime: RealtimeFake,
    service: OCRChunkService,
    pool: asyncpg.Pool,
) -> None:
    """The poll the page makes on joining its channel, answered only after a push: what it read
    is older than the push. Shown after it, the page went back from 4 of 6 pages to 0 of 6 until
    the next poll, 30 s on; answered while the push's tiles loaded, the push was never shown
    (seen once in CI, the poll answering late on a loaded machine)."""
    user, document_id = await started_document(service, pool)
    polls: list[Route] = []
    held = asyncio.Event()
    release = asyncio.Event()

    async def hold_later_polls(route: Route) -> None:
        polls.append(route)
        if len(polls) == 1:  # the first, at load, answers at once
            await route.continue_()
            return
        held.set()
        await release.wait()
        # Answered in full, as when anything else had changed since the page's last poll (a
        # chunk started): the page's etag would make the server answer "not modified".
        headers = {name: value for name, value in route.request.headers.items() if name != "if-none-match"}
        await route.continue_(headers=headers)

    page = await opened(browser, page_url(server, document_id, token(user), realtime), hold_later_polls)
    await joined(realtime)
    async with asyncio.timeout(30):
        await held.wait()  # the poll on joining, under way

    message = await broadcast_never_committed(pool, document_id, chunks=2)
    assert await realtime.push(f"document:{document_id}", "progress", message) == 1
    await expect(page.locator("#summary")).to_contain_text("processing: 4 of 6 pages (67%), 2/3 chunks")
    async with page.expect_response("**/ocr/progress"):
        release.set()
    await page.wait_for_timeout(1000)  # what the page does with the answer: a chunks call and a render

    await expect(page.locator("#summary")).to_contain_text("processing: 4 of 6 pages (67%), 2/3 chunks")


@pytest.mark.timeout(120)
async def test_page_shows_progress_pushed_over_its_private_channel(
    server: str,
    browser: Browser,  # noqa: F811
    realtime: RealtimeFake,
    service: OCRChunkService,
    pool: asyncpg.Pool,
) -> None:
    user, document_id = await started_document(service, pool)
    user_token = token(user)
    page = await opened(browser, page_url(server, document_id, user_token, realtime))

    join = await joined(realtime)
    assert join.topic == f"realtime:document:{document_id}"
    assert join.path == "/realtime/v1/websocket"
    assert join.query["apikey"] == [ANON_KEY]
    assert join.query["vsn"] == ["2.0.0"]
    assert join.payload["config"]["private"] is True
    assert join.payload["access_token"] == user_token  # the user's JWT: the policy sees auth.uid()
    await expect(page.locator("body")).to_have_attribute("data-updates", "realtime")
    await expect(page.locator("#source")).to_have_text("Live: progress pushed by Supabase Realtime.")

    message = await broadcast_never_committed(pool, document_id, chunks=2)
    assert await realtime.push(f"document:{document_id}", "progress", message) == 1
    await expect(page.locator("#summary")).to_contain_text("processing: 4 of 6 pages (67%), 2/3 chunks")
    assert (await polled(server, document_id, user))["pagesDone"] == 0  # polling could not have shown it
    assert await page.locator("#error").text_content() == ""

    # The final state, as the document's status change always sends it: the result is ready.
    finished = {**message, "status": "completed", "pagesDone": 6, "completed": 3, "percent": 100.0}
    await realtime.push(f"document:{document_id}", "progress", finished)
    await expect(page.locator("#summary")).to_contain_text("completed: 6 of 6 pages (100%), 3/3 chunks")
    await expect(page.locator("#pdf")).to_be_visible()


@pytest.mark.timeout(120)
async def test_page_polls_when_realtime_refuses_the_channel(
    server: str,
    browser: Browser,  # noqa: F811
    realtime: RealtimeFake,
    service: OCRChunkService,
    pool: asyncpg.Pool,
) -> None:
    realtime.refuse_joins = True  # as for a client the policies on realtime.messages refuse
    user, document_id = await started_document(service, pool)
    page = await opened(browser, page_url(server, document_id, token(user), realtime))
    await joined(realtime)
    await expect(page.locator("body")).to_have_attribute("data-updates", "polling")

    await complete_chunks(service, document_id, 1)
    await expect(page.locator("#summary")).to_contain_text("processing: 2 of 6 pages (33%), 1/3 chunks")
    await expect(page.locator(".tile.completed")).to_have_count(1)


@pytest.mark.timeout(120)
async def test_page_polls_again_when_the_channel_goes_away(
    server: str,
    browser: Browser,  # noqa: F811
    realtime: RealtimeFake,
    service: OCRChunkService,
    pool: asyncpg.Pool,
) -> None:
    user, document_id = await started_document(service, pool)
    page = await opened(browser, page_url(server, document_id, token(user), realtime))
    await joined(realtime)
    await expect(page.locator("body")).to_have_attribute("data-updates", "realtime")

    realtime.refuse_connections = True
    await realtime.drop_connections()
    await expect(page.locator("body")).to_have_attribute("data-updates", "polling")
    await complete_chunks(service, document_id, 2)
    await expect(page.locator("#summary")).to_contain_text("processing: 4 of 6 pages (67%), 2/3 chunks")


@pytest.mark.timeout(120)
async def test_page_without_realtime_settings_polls_and_loads_no_client(
    server: str,
    browser: Browser,  # noqa: F811
    realtime: RealtimeFake,
    service: OCRChunkService,
    pool: asyncpg.Pool,
) -> None:
    user, document_id = await started_document(service, pool)
    requests: list[str] = []
    page = await browser.new_page()
    page.on("request", lambda request: requests.append(request.url))
    await page.goto(page_url(server, document_id, token(user), None))
    await expect(page.locator("#summary")).to_contain_text("processing: 0 of 6 pages (0%)")
    await expect(page.locator("body")).to_have_attribute("data-updates", "polling")
    await complete_chunks(service, document_id, 1)
    await expect(page.locator("#summary")).to_contain_text("processing: 2 of 6 pages (33%)")
    assert not [url for url in requests if "supabase" in url]
    assert realtime.connections == 0


async def test_api_serves_the_vendored_client(server: str) -> None:
    async with httpx.AsyncClient(base_url=server, timeout=30) as client:
        served = await client.get("/ui/vendor/supabase-js/supabase.js")
        again = await client.get(
            "/ui/vendor/supabase-js/supabase.js", headers={"If-None-Match": served.headers["etag"]}
        )
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("text/javascript")
    assert served.content == VENDORED.read_bytes()
    assert served.content.startswith(b"var supabase=")
    assert again.status_code == 304
