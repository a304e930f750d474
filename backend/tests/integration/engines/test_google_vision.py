"""The Vision engine through the real google-cloud-vision client, over a real gRPC channel,
to an in-process ImageAnnotator server on loopback that answers BatchAnnotateFiles with
responses shaped like the service's (tests/vision_fake.py; no network beyond 127.0.0.1)."""

from __future__ import annotations

import threading
from pathlib import Path

import grpc
import pytest
from google.cloud import vision_v1

from app.core.config import load_settings
from app.core.errors import ConfigurationError
from app.engines.errors import EngineUnavailableError
from app.engines.google_vision import GoogleVisionEngine, VisionError
from app.engines.pool import make_ocr_pool, recognize_in_process, stop_ocr_pool
from app.engines.registry import get_engine, use_settings
from app.engines.specs import ENGINE_SPECS
from app.pdf.samples import make_born_digital_pdf
from tests.vision_fake import Abort, Handler, VisionServer, echo_pages, vision_settings


def engine(vision: VisionServer, concurrency: int = 2) -> GoogleVisionEngine:
    return GoogleVisionEngine(
        endpoint=f"127.0.0.1:{vision.port}", insecure=True, max_concurrency=concurrency, timeout_seconds=10
    )


def test_requests_carry_at_most_five_pages_and_results_map_back(vision: VisionServer, tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "c.pdf", pages=12)
    pdf = (tmp_path / "c.pdf").read_bytes()
    pages = engine(vision, concurrency=2).recognize(pdf, first_page_number=41)

    sent = sorted((list(r.requests[0].pages) for r in vision.requests), key=lambda p: p[0])
    assert sent == [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12]]
    for request in vision.requests:
        (file_request,) = request.requests
        assert file_request.input_config.mime_type == "application/pdf"
        assert file_request.input_config.content == pdf
        assert [f.type_ for f in file_request.features] == [vision_v1.Feature.Type.DOCUMENT_TEXT_DETECTION]
    assert vision.max_in_flight <= 2
    assert [p.page_number for p in pages] == list(range(41, 53))
    assert pages[0].text == "page 1 text"  # page 1 of the chunk is page 41 of the document
    assert pages[11].text == "page 12 text"
    assert {(p.confidence, p.source) for p in pages} == {(0.8, "ocr")}


def test_concurrency_limit(vision: VisionServer, tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "c.pdf", pages=20)
    engine(vision, concurrency=4).recognize((tmp_path / "c.pdf").read_bytes(), 1)
    assert len(vision.requests) == 4
    assert vision.max_in_flight >= 2  # they did run side by side
    vision.requests.clear()
    vision.max_in_flight = 0
    engine(vision, concurrency=1).recognize((tmp_path / "c.pdf").read_bytes(), 1)
    assert vision.max_in_flight == 1


def _page_two_fails(status: grpc.StatusCode) -> Handler:
    def handler(request: vision_v1.BatchAnnotateFilesRequest) -> vision_v1.BatchAnnotateFilesResponse:
        response = echo_pages(request)
        response.responses[0].responses[1].error.code = status.value[0]
        response.responses[0].responses[1].error.message = "Bad image data."
        return response

    return handler


def test_a_permanent_error_on_one_page_fails_that_page_alone(vision: VisionServer, tmp_path: Path) -> None:
    vision.handler = _page_two_fails(grpc.StatusCode.INVALID_ARGUMENT)
    make_born_digital_pdf(tmp_path / "c.pdf", pages=3)
    pages = engine(vision).recognize((tmp_path / "c.pdf").read_bytes(), 10)
    assert [p.page_number for p in pages] == [10, 11, 12]
    assert [p.text for p in pages] == ["page 1 text", "", "page 3 text"]
    failed = pages[1].error
    assert failed is not None
    assert failed.code == "vision_error"
    assert "INVALID_ARGUMENT on page 11" in failed.message
    assert (pages[0].error, pages[2].error) == (None, None)


def test_a_retryable_error_on_one_page_fails_the_attempt(vision: VisionServer, tmp_path: Path) -> None:
    vision.handler = _page_two_fails(grpc.StatusCode.UNAVAILABLE)
    make_born_digital_pdf(tmp_path / "c.pdf", pages=3)
    with pytest.raises(VisionError) as raised:
        engine(vision).recognize((tmp_path / "c.pdf").read_bytes(), 10)
    assert raised.value.retryable is True
    assert raised.value.context["page"] == 11


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (grpc.StatusCode.UNAVAILABLE, True),
        (grpc.StatusCode.DEADLINE_EXCEEDED, True),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, True),
        (grpc.StatusCode.INTERNAL, True),
        (grpc.StatusCode.INVALID_ARGUMENT, False),
        (grpc.StatusCode.PERMISSION_DENIED, False),
        (grpc.StatusCode.UNAUTHENTICATED, False),
        (grpc.StatusCode.NOT_FOUND, False),
    ],
    ids=lambda v: v.name if isinstance(v, grpc.StatusCode) else str(v),
)
def test_rpc_status_codes(
    vision: VisionServer, tmp_path: Path, status: grpc.StatusCode, retryable: bool
) -> None:
    def fail(request: vision_v1.BatchAnnotateFilesRequest) -> vision_v1.BatchAnnotateFilesResponse:
        raise Abort(status)

    vision.handler = fail
    make_born_digital_pdf(tmp_path / "c.pdf", pages=2)
    with pytest.raises(VisionError) as raised:
        engine(vision).recognize((tmp_path / "c.pdf").read_bytes(), 1)
    assert raised.value.status is status
    assert raised.value.retryable is retryable
    assert len(vision.requests) == 1  # no client-side retries: the lease protocol decides


def test_per_call_timeout(vision: VisionServer, tmp_path: Path) -> None:
    def slow(request: vision_v1.BatchAnnotateFilesRequest) -> vision_v1.BatchAnnotateFilesResponse:
        threading.Event().wait(2)
        return echo_pages(request)

    vision.handler = slow
    make_born_digital_pdf(tmp_path / "c.pdf", pages=1)
    quick = GoogleVisionEngine(
        endpoint=f"127.0.0.1:{vision.port}", insecure=True, max_concurrency=1, timeout_seconds=0.3
    )
    with pytest.raises(VisionError) as raised:
        quick.recognize((tmp_path / "c.pdf").read_bytes(), 1)
    assert raised.value.status is grpc.StatusCode.DEADLINE_EXCEEDED
    assert raised.value.retryable


def test_missing_credentials_is_a_clear_start_up_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing-key.json"))
    with pytest.raises(EngineUnavailableError, match="GOOGLE_APPLICATION_CREDENTIALS"):
        GoogleVisionEngine.from_settings(load_settings(google_vision_insecure=False))


def test_the_registry_builds_the_engine_from_settings(vision: VisionServer, tmp_path: Path) -> None:
    settings = vision_settings(vision, google_vision_max_concurrency=1, google_vision_timeout_seconds=7.5)
    use_settings(settings)
    try:
        built = get_engine("google-vision")
        assert isinstance(built, GoogleVisionEngine)
        assert (built.endpoint, built.insecure, built.max_concurrency, built.timeout_seconds) == (
            f"127.0.0.1:{vision.port}",
            True,
            1,
            7.5,
        )
        make_born_digital_pdf(tmp_path / "c.pdf", pages=12)
        pages = built.recognize((tmp_path / "c.pdf").read_bytes(), 1)
    finally:
        use_settings(None)
    assert len(pages) == 12
    assert len(vision.requests) == 3
    assert vision.max_in_flight == 1  # GOOGLE_VISION_MAX_CONCURRENCY=1, from the Settings object


def test_ocr_processes_build_the_engine_with_their_workers_settings(
    vision: VisionServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OCR process that read the environment would call Google's endpoint with credentials that
    do not exist; it uses the Settings its pool was made with."""
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing-key.json"))
    for name in ("GOOGLE_VISION_ENDPOINT", "GOOGLE_VISION_INSECURE"):
        monkeypatch.delenv(name, raising=False)
    make_born_digital_pdf(tmp_path / "c.pdf", pages=7)
    pool = make_ocr_pool(1, settings=vision_settings(vision))
    try:
        pages, version = pool.submit(
            recognize_in_process, "google-vision", (tmp_path / "c.pdf").read_bytes(), 21
        ).result(timeout=60)
    finally:
        stop_ocr_pool(pool)
    assert [p.page_number for p in pages] == list(range(21, 28))
    assert pages[6].text == "page 7 text"
    assert sorted(len(r.requests[0].pages) for r in vision.requests) == [2, 5]
    assert version.startswith("google-cloud-vision")


def test_the_engine_batches_as_its_spec_declares() -> None:
    assert GoogleVisionEngine.pages_per_request == ENGINE_SPECS["google-vision"].pages_per_request == 5


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"max_concurrency": 0}, "GOOGLE_VISION_MAX_CONCURRENCY"),
        ({"timeout_seconds": 0.0}, "GOOGLE_VISION_TIMEOUT_SECONDS"),
        ({"timeout_seconds": float("nan")}, "GOOGLE_VISION_TIMEOUT_SECONDS"),
        ({"endpoint": ""}, "GOOGLE_VISION_ENDPOINT"),
    ],
)
def test_bad_options_are_a_configuration_error(options: dict[str, object], named: str) -> None:
    """Settings refuse these at start-up; the engine checks them too when built from anything else
    (here, settings copied without validation)."""
    unchecked = load_settings(google_vision_insecure=True).model_copy(
        update={f"google_vision_{k}": v for k, v in options.items()}
    )
    with pytest.raises(ConfigurationError, match=named) as raised:
        GoogleVisionEngine.from_settings(unchecked)
    assert not raised.value.retryable
