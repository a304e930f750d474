"""Google Cloud Vision: DOCUMENT_TEXT_DETECTION on the chunk's PDF bytes.

The synchronous files API takes at most 5 pages per request, so a chunk is
sent as ceil(pages / 5) BatchAnnotateFiles requests, run concurrently under
GOOGLE_VISION_MAX_CONCURRENCY, each with its own deadline. Errors are
classified by gRPC status code: UNAVAILABLE, DEADLINE_EXCEEDED,
RESOURCE_EXHAUSTED and INTERNAL are retryable, every other code is
permanent. An error on one page inside a successful response is classified the
same way: a retryable one fails the attempt, a permanent one fails that page
alone (the chunk completes with it recorded as failed). Client-side retries are
off: the lease protocol decides when to retry.

Every request first takes a permit of the fleet's Vision quota (vision_quota.py:
requests and pages per minute, pages in flight, kept in Redis for every worker), waiting
for it rather than failing; it gives the permit back once answered. A RESOURCE_EXHAUSTED
answer (the whole call's, or a page's) backs the whole fleet off and the request is sent again
once the back-off is over, within GOOGLE_VISION_QUOTA_MAX_WAIT_SECONDS
(docs/VISION_QUOTA.md). An engine built without a quota (quota=None) sends at once and
raises on RESOURCE_EXHAUSTED like any retryable status.

Each page's words come with boxes in the geometry tesseract's have (pixels at
300 DPI of the page turned upright; _vision_words.py): the page's size as
displayed is read from the chunk's PDF, and its turn from the way Vision's
words read.

Configuration: credentials the usual Google way (GOOGLE_APPLICATION_CREDENTIALS
or the platform's default credentials); the options are Settings fields
(app.core.config, validated at start-up), passed in by the registry through
from_settings: GOOGLE_VISION_ENDPOINT to talk to another endpoint, with
GOOGLE_VISION_INSECURE=1 for a plaintext local one (tests); and
GOOGLE_VISION_MAX_CONCURRENCY (4), GOOGLE_VISION_TIMEOUT_SECONDS (120); the quota's are
listed in docs/VISION_QUOTA.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from importlib.metadata import version as package_version
from typing import Any

import grpc
import pypdfium2 as pdfium
from google.api_core import exceptions as google_errors
from google.api_core.client_options import ClientOptions
from google.auth import exceptions as auth_errors
from google.auth.credentials import AnonymousCredentials
from google.cloud import vision_v1
from google.cloud.vision_v1.services.image_annotator import ImageAnnotatorAsyncClient
from google.cloud.vision_v1.services.image_annotator.transports import ImageAnnotatorGrpcAsyncIOTransport

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.core.languages import DEFAULT_LANGUAGE
from app.core.logging import get_logger
from app.engines._pages import RENDER_DPI, lost_page
from app.engines._vision_words import page_words
from app.engines.base import PageResult
from app.engines.errors import EngineError, EngineUnavailableError, PageRenderError
from app.engines.specs import ENGINE_SPECS
from app.engines.vision_languages import vision_language_hints
from app.engines.vision_quota import QuotaSession, VisionQuota
from app.pdf._pdfium import PDFIUM_LOCK
from app.pdf.lost import placeholder_pages

log = get_logger(__name__)

RETRYABLE_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.INTERNAL,
    }
)
_CODES_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}


class VisionError(EngineError):
    """Vision refused or failed; `retryable` follows the gRPC status code."""

    code = "vision_error"

    def __init__(self, message: str, status: grpc.StatusCode, **context: object) -> None:
        super().__init__(message, status=status.name, **context)
        self.status = status

    @property
    def retryable(self) -> bool:  # type: ignore[override]
        return self.status in RETRYABLE_CODES


class GoogleVisionEngine:
    name = "google-vision"
    # The synchronous files API takes at most 5 pages a request. Declared in the engine's spec,
    # where chunk planning reads it without importing this module.
    pages_per_request = ENGINE_SPECS[name].pages_per_request

    def __init__(
        self,
        *,
        endpoint: str,
        insecure: bool,
        max_concurrency: int,
        timeout_seconds: float,
        language_hints: tuple[str, ...] = (),
        quota: VisionQuota | None = None,
    ) -> None:
        if not endpoint:
            raise ConfigurationError("google-vision needs an endpoint (GOOGLE_VISION_ENDPOINT)")
        if max_concurrency < 1:
            raise ConfigurationError(
                f"google-vision needs GOOGLE_VISION_MAX_CONCURRENCY of at least 1, got {max_concurrency}"
            )
        if not timeout_seconds > 0:  # also refuses NaN
            raise ConfigurationError(
                f"google-vision needs GOOGLE_VISION_TIMEOUT_SECONDS above 0, got {timeout_seconds}"
            )
        self.endpoint = endpoint
        self.insecure = insecure
        self.max_concurrency = max_concurrency
        self.timeout_seconds = timeout_seconds
        self.language_hints = language_hints  # BCP-47; none: Vision detects the language
        self.quota = quota  # the fleet's; None: no limit but max_concurrency
        if not self.insecure:
            self._check_credentials()

    @classmethod
    def from_settings(cls, settings: Settings, language: str = DEFAULT_LANGUAGE) -> GoogleVisionEngine:
        """The engine with its options from settings (the GOOGLE_VISION_* fields), hinted at the
        document's language where it maps onto Vision's (vision_languages.py)."""
        return cls(
            endpoint=settings.google_vision_endpoint,
            insecure=settings.google_vision_insecure,
            max_concurrency=settings.google_vision_max_concurrency,
            timeout_seconds=settings.google_vision_timeout_seconds,
            language_hints=vision_language_hints(language),
            quota=VisionQuota.from_settings(settings),
        )

    @staticmethod
    def _check_credentials() -> None:
        """Fail at start-up, with the fix in the message, rather than on the first chunk."""
        import google.auth

        try:
            google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-vision"])
        except auth_errors.DefaultCredentialsError as exc:
            raise EngineUnavailableError(
                "google-vision needs Google credentials: set GOOGLE_APPLICATION_CREDENTIALS to a "
                f"service-account key file ({exc})"
            ) from None

    def version(self) -> str:
        return f"google-cloud-vision {package_version('google-cloud-vision')} DOCUMENT_TEXT_DETECTION"

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        return asyncio.run(self.recognize_async(pdf_bytes, first_page_number))

    def _client(self) -> ImageAnnotatorAsyncClient:
        if self.insecure:
            channel = grpc.aio.insecure_channel(self.endpoint)
            anonymous = AnonymousCredentials()  # type: ignore[no-untyped-call]
            transport = ImageAnnotatorGrpcAsyncIOTransport(channel=channel, credentials=anonymous)
            return ImageAnnotatorAsyncClient(transport=transport)
        return ImageAnnotatorAsyncClient(client_options=ClientOptions(api_endpoint=self.endpoint))

    async def recognize_async(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        sizes = _page_sizes(pdf_bytes)
        count = len(sizes)
        size = self.pages_per_request
        batches = [list(range(s, min(s + size, count + 1))) for s in range(1, count + 1, size)]
        client = self._client()
        limit = asyncio.Semaphore(self.max_concurrency)

        async def annotate(pages: list[int], quota: QuotaSession | None) -> list[PageResult]:
            request = vision_v1.AnnotateFileRequest(
                input_config=vision_v1.InputConfig(content=pdf_bytes, mime_type="application/pdf"),
                features=[vision_v1.Feature(type_=vision_v1.Feature.Type.DOCUMENT_TEXT_DETECTION)],
                pages=pages,
                image_context=vision_v1.ImageContext(language_hints=list(self.language_hints)),
            )
            first = first_page_number + pages[0] - 1
            async with limit:
                if quota is None:
                    return _pages(await self._send(client, request), pages, first_page_number, sizes)
                deadline = quota.deadline()
                while True:  # sent again after each RESOURCE_EXHAUSTED, once the fleet's back-off ends
                    permit = await quota.acquire(len(pages), deadline, first_page=first)
                    try:
                        response = await self._send(client, request)
                        return _pages(response, pages, first_page_number, sizes)
                    except VisionError as error:
                        if error.status is not grpc.StatusCode.RESOURCE_EXHAUSTED:
                            raise
                        await quota.exhausted(permit, first_page=first)
                    finally:
                        await quota.release(permit)

        try:
            if self.quota is None:
                results = await _all_or_none([annotate(b, None) for b in batches])
            else:
                async with self.quota.session() as session:
                    results = await _all_or_none([annotate(b, session) for b in batches])
        finally:
            await client.transport.close()  # type: ignore[no-untyped-call]
        return _with_lost_pages([page for batch in results for page in batch], pdf_bytes, first_page_number)

    async def _send(
        self, client: ImageAnnotatorAsyncClient, request: vision_v1.AnnotateFileRequest
    ) -> vision_v1.BatchAnnotateFilesResponse:
        try:
            return await client.batch_annotate_files(
                requests=[request], retry=None, timeout=self.timeout_seconds
            )
        except google_errors.GoogleAPICallError as exc:
            status = exc.grpc_status_code or grpc.StatusCode.UNKNOWN
            raise VisionError(f"Vision {status.name}: {exc.message}", status) from None


async def _all_or_none(calls: list[Coroutine[Any, Any, list[PageResult]]]) -> list[list[PageResult]]:
    """Every call's result; on the first error, the others are cancelled and waited for (so each
    gives its quota permit back while the session is open) before the error is raised."""
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _with_lost_pages(pages: list[PageResult], pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
    """Pages lost in a damaged file are failed pages (page_lost), not the blank pages Vision saw."""
    placeholders = placeholder_pages(pdf_bytes)
    if placeholders is None:
        return pages
    out = []
    for page in pages:
        lost = lost_page(placeholders, page.page_number - first_page_number, page.page_number)
        out.append(page if lost is None else PageResult.failed(page.page_number, lost.code, lost.message))
    return out


def _page_sizes(pdf_bytes: bytes) -> list[tuple[float, float]]:
    """Each page's size as displayed (crop box, /Rotate applied), in points: the frame of
    Vision's normalized vertices. Read from the page dictionaries, without parsing any content;
    a page PDFium cannot size has none (its words come without boxes)."""
    with PDFIUM_LOCK:  # in the worker's own process, beside planning in other threads
        try:
            document = pdfium.PdfDocument(pdf_bytes)
        except pdfium.PdfiumError as exc:
            raise PageRenderError(f"the chunk's PDF cannot be opened: {exc}") from None
        try:
            return [_displayed_size(document, index) for index in range(len(document))]
        finally:
            document.close()


def _displayed_size(document: pdfium.PdfDocument, index: int) -> tuple[float, float]:
    try:
        width, height = document.get_page_size(index)
    except pdfium.PdfiumError:
        return (0.0, 0.0)
    return (float(width), float(height))


def _pages(
    response: vision_v1.BatchAnnotateFilesResponse,
    requested: list[int],
    first_page_number: int,
    sizes: list[tuple[float, float]],
) -> list[PageResult]:
    (file_response,) = response.responses
    if file_response.error.code:
        raise VisionError(
            file_response.error.message,
            _CODES_BY_NUMBER.get(file_response.error.code, grpc.StatusCode.UNKNOWN),
        )
    by_page = {r.context.page_number: r for r in file_response.responses}
    results = []
    for page in requested:
        image = by_page.get(page)
        number = first_page_number + page - 1
        if image is None:
            raise VisionError(f"Vision returned no result for page {number}", grpc.StatusCode.INTERNAL)
        if image.error.code:
            status = _CODES_BY_NUMBER.get(image.error.code, grpc.StatusCode.UNKNOWN)
            error = VisionError(
                f"Vision {status.name} on page {number}: {image.error.message}", status, page=number
            )
            if error.retryable:  # the attempt runs again, this page with it
                raise error
            # Vision refuses this page for good (a bad image, say): the other pages stand.
            log.warning("page_failed", page=number, error_code=error.code, error=error.message)
            results.append(PageResult.failed(number, error.code, error.message))
            continue
        annotation = image.full_text_annotation
        confidences = [
            word.confidence
            for vision_page in annotation.pages
            for block in vision_page.blocks
            for paragraph in block.paragraphs
            for word in paragraph.words
        ]
        confidence = sum(confidences) / len(confidences) if confidences else 0.0
        found = page_words(annotation, sizes[page - 1], RENDER_DPI)
        results.append(
            PageResult(
                number,
                annotation.text,
                round(confidence, 4),
                "ocr",
                found.words,
                rotation=found.rotation,
                skew=0.0,  # Vision reads a tilted page as it is: its boxes follow the tilt
            )
        )
    return results
