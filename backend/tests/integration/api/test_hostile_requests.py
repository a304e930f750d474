"""Requests meant to hurt the API, found by probing it from outside: each is refused with its
documented code, before it costs the server more than it must, and without a 500.

- The start route read and spooled a whole form body of any size before it checked the token.
- Four uploads that stopped sending held every upload slot for as long as their connections
  stayed open: every user's uploads were 503.
- A token whose alg is a list, a chunkPages of non-ASCII digits and a multipart body that cannot
  be parsed were 500s; a form without its closing boundary was taken as complete.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from uuid import UUID, uuid4

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from structlog.testing import capture_logs

from app.core.config import Settings
from app.main import create_app
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import bearer, token
from tests.integration.api.test_documents import upload
from tests.integration.api.test_error_contract import assert_error, member, pdf  # noqa: F401 (fixtures)

BLOCK = 64 * 1024


async def _counted(blocks: list[int], count: int) -> AsyncIterator[bytes]:
    """A body of count blocks of form data; blocks[0] counts those the server took."""
    yield b"chunkPages="
    for _ in range(count):
        blocks[0] += 1
        yield b"1" * BLOCK


@pytest.mark.parametrize("authorized", [False, True], ids=["no token", "another matter's user"])
async def test_the_start_route_refuses_before_it_reads_the_body(
    client: httpx.AsyncClient, pool: asyncpg.Pool, authorized: bool
) -> None:
    stranger = await make_user(pool, await make_matter(pool, "elsewhere"))
    taken = [0]
    response = await client.post(
        f"/documents/{uuid4()}/ocr",
        headers={"Content-Type": "application/x-www-form-urlencoded"}
        | (bearer(stranger) if authorized else {}),
        content=_counted(taken, 200),  # 12.5 MiB, had it all been read
    )
    assert_error(response, 404 if authorized else 401, "document_not_found" if authorized else "unauthorized")
    assert taken[0] <= 1


@pytest.mark.parametrize(
    ("headers", "content", "status", "code"),
    [
        ({"Content-Type": "application/json"}, b'{"chunkPages": 2}', 422, "invalid_input"),
        (
            {"Content-Type": "application/x-www-form-urlencoded"},
            b"chunkPages=2&colour=red",
            422,
            "invalid_input",
        ),
        (
            {"Content-Type": "application/x-www-form-urlencoded"},
            "chunkPages=²".encode(),
            422,
            "invalid_input",
        ),
        (
            {"Content-Type": "application/x-www-form-urlencoded"},
            b"chunkPages=" + b"1" * 70_000,
            413,
            "file_too_large",
        ),
        (
            {"Content-Type": "multipart/form-data; boundary=zz"},
            b"--zz\r\nnot a header\r\n",
            422,
            "invalid_input",
        ),
        (
            {"Content-Type": "application/x-www-form-urlencoded"},
            b"chunkPages=" + b"1" * 4_301,  # Python will not convert it: a 500
            422,
            "invalid_input",
        ),
    ],
    ids=["json", "unknown field", "superscript two", "too large", "broken multipart", "4,301 digits"],
)
async def test_the_start_route_refuses_what_it_cannot_use(
    client: httpx.AsyncClient,
    member: tuple[UUID, UUID],  # noqa: F811
    pdf: Path,  # noqa: F811
    headers: dict[str, str],
    content: bytes,
    status: int,
    code: str,
) -> None:
    matter, user = member
    created = await upload(client, user, matter, pdf, start="false")
    assert created.status_code == 201, created.text
    document = created.json()["document"]["id"]
    response = await client.post(
        f"/documents/{document}/ocr", headers=bearer(user) | headers, content=content
    )
    assert_error(response, status, code)
    started = await client.post(f"/documents/{document}/ocr", headers=bearer(user), data={"chunkPages": "1"})
    assert started.status_code == 202, started.text  # nothing was started by the refused ones


async def test_a_token_whose_alg_is_not_a_name_is_401(client: httpx.AsyncClient) -> None:
    good = token(uuid4()).split(".")
    header = base64.urlsafe_b64encode(json.dumps({"alg": ["HS256"], "typ": "JWT"}).encode()).rstrip(b"=")
    forged = ".".join([header.decode(), good[1], good[2]])
    response = await client.get(
        f"/documents/{uuid4()}/ocr/progress", headers={"Authorization": f"Bearer {forged}"}
    )
    assert_error(response, 401, "unauthorized")


def _upload_head(boundary: str) -> bytes:
    return (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n%PDF-1.7\n"
    ).encode()


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("multipart/form-data; boundary=other", _upload_head("zz") + b"x\r\n--zz--\r\n"),
        ("multipart/form-data; boundary=" + "b" * 300, _upload_head("b" * 300)),
        ("multipart/form-data; boundary=zz", _upload_head("zz") + b"the body stops here, unclosed"),
    ],
    ids=["another boundary", "boundary over 256", "no closing boundary"],
)
async def test_an_upload_form_that_cannot_be_read_is_422(
    client: httpx.AsyncClient,
    member: tuple[UUID, UUID],  # noqa: F811
    content_type: str,
    body: bytes,
) -> None:
    matter, user = member
    response = await client.post(
        f"/matters/{matter}/documents", headers=bearer(user) | {"Content-Type": content_type}, content=body
    )
    assert_error(response, 422, "invalid_input")


@pytest.fixture
async def impatient(api_settings: Settings, pool: object) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """The API with a 0.5 s idle limit on upload bodies and 4 upload slots."""
    app = create_app(
        api_settings.model_copy(update={"upload_idle_seconds": 0.5, "max_concurrent_uploads": 4})
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
            yield app, client


async def _stalling(head: bytes, release: asyncio.Event) -> AsyncIterator[bytes]:
    yield head
    await release.wait()  # sends nothing more until told


async def test_uploads_that_stop_sending_give_their_slots_back(
    impatient: tuple[FastAPI, httpx.AsyncClient],
    member: tuple[UUID, UUID],  # noqa: F811
    pdf: Path,  # noqa: F811
) -> None:
    app, client = impatient
    matter, user = member
    release = asyncio.Event()
    try:
        stalled = await asyncio.gather(
            *(
                client.post(
                    f"/matters/{matter}/documents",
                    headers=bearer(user) | {"Content-Type": "multipart/form-data; boundary=zz"},
                    content=_stalling(_upload_head("zz"), release),
                )
                for _ in range(2)
            )
        )
    finally:
        release.set()
    for response in stalled:
        assert_error(response, 408, "upload_stalled")
    assert app.state.upload_slots.in_use == 0
    after = await upload(client, user, matter, pdf, engine="text-layer")
    assert after.status_code == 201, after.text


def _field(boundary: str, name: str, value: str) -> bytes:
    return f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()


@pytest.mark.parametrize(
    ("content_type", "head"),
    [
        ("multipart/form-data; boundary=zz", _upload_head("zz")),
        ("application/pdf", b"%PDF-1.7\n"),
    ],
    ids=["file before matterId", "bare body without matterId"],
)
async def test_a_legacy_upload_is_refused_when_its_file_comes_before_its_matter(
    impatient: tuple[FastAPI, httpx.AsyncClient], pool: asyncpg.Pool, content_type: str, head: bytes
) -> None:
    """The legacy route took an upload slot and received the file before it knew the matter:
    any signed-in caller, a member of no matter, held slots (all but one) for as long as it sent,
    and was refused only at the end. A file that begins before the matter is known is now 422 at
    once; it held no slot."""
    app, client = impatient
    nobody = await make_user(pool)  # a member of no matter
    release = asyncio.Event()
    try:
        response = await client.post(
            "/documents",
            headers=bearer(nobody) | {"Content-Type": content_type},
            content=_stalling(head, release),
        )
    finally:
        release.set()
    assert "matterId" in assert_error(response, 422, "invalid_input")  # not 408 after holding a slot
    assert app.state.upload_slots.in_use == 0


async def test_a_legacy_upload_holds_its_slot_from_the_file_on(
    impatient: tuple[FastAPI, httpx.AsyncClient],
    member: tuple[UUID, UUID],  # noqa: F811
    pdf: Path,  # noqa: F811
) -> None:
    app, client = impatient
    matter, user = member
    release, held = asyncio.Event(), []

    async def watch() -> None:
        await asyncio.sleep(0.25)  # the matter checked, the file begun, not yet stalled (0.5 s)
        held.append(app.state.upload_slots.in_use)
        release.set()

    head = _field("zz", "matterId", str(matter)) + _upload_head("zz")
    response, _ = await asyncio.gather(
        client.post(
            "/documents",
            headers=bearer(user) | {"Content-Type": "multipart/form-data; boundary=zz"},
            content=_stalling(head, release),
        ),
        watch(),
    )
    assert held == [1]
    assert_error(response, 422, "invalid_input")  # the form never closed
    assert app.state.upload_slots.in_use == 0
    whole = await upload(client, user, matter, pdf, engine="text-layer")  # the legacy route, matterId first
    assert whole.status_code == 201, whole.text


async def test_one_user_holds_all_upload_slots_but_one(
    impatient: tuple[FastAPI, httpx.AsyncClient],
    pool: asyncpg.Pool,
    member: tuple[UUID, UUID],  # noqa: F811
    pdf: Path,  # noqa: F811
) -> None:
    app, client = impatient
    matter, user = member
    other = await make_user(pool, matter)
    slots = app.state.upload_slots
    with slots.taken_by(user), slots.taken_by(user), slots.taken_by(user):  # three of four
        with capture_logs() as logs:
            assert_error(await upload(client, user, matter, pdf), 503, "too_many_uploads")  # a fourth
        # shed under load, to be retried: the API working as meant, a warning (every one was an error)
        (event,) = [entry for entry in logs if entry["event"] == "request_failed"]
        assert (event["log_level"], event["error_code"]) == ("warning", "too_many_uploads")
        theirs = await upload(client, other, matter, pdf, engine="text-layer")
        assert theirs.status_code == 201, theirs.text


async def test_an_id_that_is_not_one_is_not_echoed_back_whole(
    client: httpx.AsyncClient,
    member: tuple[UUID, UUID],  # noqa: F811
) -> None:
    _, user = member
    response = await client.get(f"/documents/{'a' * 5000}/ocr/progress", headers=bearer(user))
    message = assert_error(response, 422, "invalid_input")
    assert len(message) < 200


async def test_a_client_that_hangs_up_mid_upload_is_an_incomplete_upload(
    app: FastAPI,
    member: tuple[UUID, UUID],  # noqa: F811
) -> None:
    """Driven at the ASGI level: the server sees the first part of the body, then the client leaves."""
    matter, user = member
    arriving: list[dict[str, object]] = [
        {"type": "http.request", "body": _upload_head("zz"), "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return arriving.pop(0) if arriving else {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    path = f"/matters/{matter}/documents"
    headers = [(b"authorization", bearer(user)["Authorization"].encode())]
    headers.append((b"content-type", b"multipart/form-data; boundary=zz"))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("api.test", 80),
    }
    await app(scope, receive, send)
    assert sent[0]["status"] == 422
    body = json.loads(b"".join(bytes(m.get("body", b"")) for m in sent[1:]))  # type: ignore[arg-type]
    assert body["error"]["code"] == "upload_incomplete"
    assert app.state.upload_slots.in_use == 0


async def _trickling(head: bytes) -> AsyncIterator[bytes]:
    yield head
    for _ in range(40):  # 10 bytes every 0.05 s: never silent for the idle limit, and 200 bytes/s
        await asyncio.sleep(0.05)
        yield b"0" * 10


async def test_an_upload_that_trickles_is_stalled_and_gives_its_slot_back(
    impatient: tuple[FastAPI, httpx.AsyncClient],
    member: tuple[UUID, UUID],  # noqa: F811
) -> None:
    """A byte a second never went silent for UPLOAD_IDLE_SECONDS: four such uploads held every
    slot for as long as their clients liked."""
    app, client = impatient
    matter, user = member
    response = await client.post(
        f"/matters/{matter}/documents",
        headers=bearer(user) | {"Content-Type": "multipart/form-data; boundary=zz"},
        content=_trickling(_upload_head("zz")),
    )
    message = assert_error(response, 408, "upload_stalled")
    assert "an upload must keep" in message
    assert app.state.upload_slots.in_use == 0


async def _form_then(document: bytes, extra: bytes, *, before_file: bool) -> AsyncIterator[bytes]:
    """A multipart upload of the document, sent chunked, with about `extra` bytes of small fields (one
    name again and again) before the file, or of anything after the form's closing boundary (its
    epilogue, which a parser skips)."""
    if before_file:
        field = b'--zz\r\nContent-Disposition: form-data; name="engine"\r\n\r\ntesseract\r\n'
        for _ in range(0, len(extra), BLOCK):
            yield field * (BLOCK // len(field))
    yield b'--zz\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n'
    yield b"Content-Type: application/pdf\r\n\r\n" + document + b"\r\n--zz--\r\n"
    if not before_file:
        for start in range(0, len(extra), BLOCK):
            yield extra[start : start + BLOCK]


@pytest.mark.parametrize("before_file", [True, False], ids=["in a field", "after the form"])
async def test_a_chunked_form_past_the_limit_outside_its_file_is_413(
    api_settings: Settings,
    pool: object,
    member: tuple[UUID, UUID],  # noqa: F811
    pdf: Path,  # noqa: F811
    before_file: bool,
) -> None:
    """Only the file's bytes were counted: a chunked body (no Content-Length to refuse first)
    could carry any amount besides it, read to its end (300 MiB after the form: 201)."""
    limit = 1024 * 1024
    document = await asyncio.to_thread(pdf.read_bytes)
    app = create_app(api_settings.model_copy(update={"max_upload_bytes": limit}))
    matter, user = member
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
            response = await client.post(
                f"/matters/{matter}/documents",
                headers=bearer(user) | {"Content-Type": "multipart/form-data; boundary=zz"},
                content=_form_then(document, b"x" * (2 * limit), before_file=before_file),
            )
    assert_error(response, 413, "file_too_large")


async def test_an_engine_that_is_not_one_is_not_echoed_back_whole(
    client: httpx.AsyncClient,
    member: tuple[UUID, UUID],  # noqa: F811
    pdf: Path,  # noqa: F811
) -> None:
    matter, user = member
    response = await upload(client, user, matter, pdf, engine="e" * 4000)
    message = assert_error(response, 422, "engine_unavailable")
    assert len(message) < 200


@pytest.mark.parametrize("path", ["/healthz/", "/documents/{id}/ocr/progress/", "/matters/{id}/documents/"])
async def test_a_forged_host_is_never_sent_back_as_a_redirect(
    client: httpx.AsyncClient,
    member: tuple[UUID, UUID],  # noqa: F811
    path: str,
) -> None:
    matter, user = member
    response = await client.request(
        "POST" if path.startswith("/matters") else "GET",
        path.format(id=matter),
        headers={"Host": "attacker.example"} | bearer(user),
    )
    assert "location" not in response.headers
    assert_error(response, 404, "not_found")


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("/matters/{matter}/documents", {"engine": ["auto", "text-layer"]}),
        ("/matters/{matter}/documents?engine=auto", {"engine": "text-layer"}),
        ("/matters/{matter}/documents?chunkPages=1&chunkPages=2", {}),
        ("/documents?matterId={other}", {"matterId": "{matter}"}),
    ],
    ids=["form twice", "query and form", "query twice", "legacy matterId in query and form"],
)
async def test_an_option_given_twice_with_two_values_is_422_and_starts_nothing(
    client: httpx.AsyncClient,
    pool: asyncpg.Pool,
    member: tuple[UUID, UUID],  # noqa: F811
    pdf: Path,  # noqa: F811
    url: str,
    data: dict[str, str | list[str]],
) -> None:
    """Which value was meant cannot be known: the last one in a form had been taken silently, a
    form's over a query's, and for the legacy route's matterId the query's over the form's."""
    matter, user = member
    other = await make_matter(pool, "another of the user's matters")
    await pool.execute("insert into public.matter_members (matter_id, user_id) values ($1, $2)", other, user)
    fill = {"matter": str(matter), "other": str(other)}
    with pdf.open("rb") as handle:
        response = await client.post(
            url.format(**fill),
            headers=bearer(user),
            data={k: v.format(**fill) if isinstance(v, str) else v for k, v in data.items()},
            files={"file": (pdf.name, handle, "application/pdf")},
        )
    message = assert_error(response, 422, "invalid_input")
    assert "given twice" in message
    documents = "select count(*) from public.documents where matter_id = any($1)"
    assert await pool.fetchval(documents, [matter, other]) == 0
    with pdf.open("rb") as handle:  # the same value twice is one value
        same = await client.post(
            f"/matters/{matter}/documents?engine=auto",
            headers=bearer(user),
            data={"engine": ["auto", "auto"]},
            files={"file": (pdf.name, handle, "application/pdf")},
        )
    assert same.status_code == 201, same.text


async def test_the_start_route_refuses_an_option_given_twice_with_two_values(
    client: httpx.AsyncClient,
    member: tuple[UUID, UUID],  # noqa: F811
    pdf: Path,  # noqa: F811
) -> None:
    matter, user = member
    created = await upload(client, user, matter, pdf, start="false")
    document = created.json()["document"]["id"]
    response = await client.post(
        f"/documents/{document}/ocr?chunkPages=1", headers=bearer(user), data={"chunkPages": "2"}
    )
    assert "given twice" in assert_error(response, 422, "invalid_input")
    started = await client.post(f"/documents/{document}/ocr?chunkPages=2", headers=bearer(user))
    assert started.status_code == 202, started.text


async def test_every_answer_says_its_type_is_not_to_be_sniffed(
    client: httpx.AsyncClient,
    member: tuple[UUID, UUID],  # noqa: F811
) -> None:
    """An upload is a PDF by its first kilobyte, as readers take it: what comes before `%PDF`
    may be HTML, and a searchable PDF starts with it too. No answer is to be read as anything
    but the type it says, errors included."""
    _, user = member
    answers = [
        await client.get("/healthz"),
        await client.get("/no/such/route", headers=bearer(user)),
        await client.get(f"/documents/{uuid4()}/ocr/progress"),  # 401
        await client.get(f"/documents/{uuid4()}/ocr/result.pdf", headers=bearer(user)),  # 404
        await client.get(f"/ui/documents/{uuid4()}"),  # sets its own, once
    ]
    assert [a.status_code for a in answers] == [200, 404, 401, 404, 200]
    for answer in answers:
        assert answer.headers.get_list("x-content-type-options") == ["nosniff"], answer.request.url
