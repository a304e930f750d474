"""Google Cloud Vision: DOCUMENT_TEXT_DETECTION on the chunk's PDF bytes.

The synchronous files API takes at most 5 pages per request, so a chunk is
sent as ceil(pages / 5) BatchAnnotateFiles requests, run concurrently under
GOOGLE_VISION_MAX_CONCURRENCY, each with its own deadline. Errors are
classified by gRPC status code: UNAVAILABLE, DEADLINE_EXCEEDED,
RESOURCE_EXHAUSTED and INTERNAL are retryable, every other code is
permanent; an error on one page inside a successful response counts the same
way. Client-side retries are off: the lease protocol decides when to retry.

Configuration (environment): credentials the usual Google way
(GOOGLE_APPLICATION_CREDENTIALS or the platform's default credentials);
GOOGLE_VISION_ENDPOINT to talk to another endpoint, with
GOOGLE_VISION_INSECURE=1 for a plaintext local one (tests); and
GOOGLE_VISION_MAX_CONCURRENCY (4), GOOGLE_VISION_TIMEOUT_SECONDS (120).
"""

from __future__ import annotations

import asyncio
import os
from importlib.metadata import version as package_version

import grpc
import pypdfium2 as pdfium
from google.api_core import exceptions as google_errors
from google.api_core.client_options import ClientOptions
from google.auth import exceptions as auth_errors
from google.auth.credentials import AnonymousCredentials
from google.cloud import vision_v1
from google.cloud.vision_v1.services.image_annotator import ImageAnnotatorAsyncClient
from google.cloud.vision_v1.services.image_annotator.transports import ImageAnnotatorGrpcAsyncIOTransport

from app.engines.base import PageResult
from app.engines.errors import EngineError, EngineUnavailableError, PageRenderError

PAGES_PER_REQUEST = 5  # the synchronous files API's limit
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

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        insecure: bool | None = None,
        max_concurrency: int | None = None,
        timeout_seconds: float | None = None,
    ) -> None:
        self.endpoint = endpoint or os.environ.get("GOOGLE_VISION_ENDPOINT") or "vision.googleapis.com"
        self.insecure = insecure if insecure is not None else os.environ.get("GOOGLE_VISION_INSECURE") == "1"
        self.max_concurrency = max_concurrency or int(os.environ.get("GOOGLE_VISION_MAX_CONCURRENCY", "4"))
        self.timeout_seconds = timeout_seconds or float(
            os.environ.get("GOOGLE_VISION_TIMEOUT_SECONDS", "120")
        )
        if not self.insecure:
            self._check_credentials()

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
        count = _page_count(pdf_bytes)
        batches = [
            list(range(s, min(s + PAGES_PER_REQUEST, count + 1)))
            for s in range(1, count + 1, PAGES_PER_REQUEST)
        ]
        client = self._client()
        limit = asyncio.Semaphore(self.max_concurrency)

        async def annotate(pages: list[int]) -> list[PageResult]:
            request = vision_v1.AnnotateFileRequest(
                input_config=vision_v1.InputConfig(content=pdf_bytes, mime_type="application/pdf"),
                features=[vision_v1.Feature(type_=vision_v1.Feature.Type.DOCUMENT_TEXT_DETECTION)],
                pages=pages,
            )
            async with limit:
                try:
                    response = await client.batch_annotate_files(
                        requests=[request], retry=None, timeout=self.timeout_seconds
                    )
                except google_errors.GoogleAPICallError as exc:
                    status = exc.grpc_status_code or grpc.StatusCode.UNKNOWN
                    raise VisionError(f"Vision {status.name}: {exc.message}", status) from None
            return _pages(response, pages, first_page_number)

        try:
            results = await asyncio.gather(*(annotate(b) for b in batches))
        finally:
            await client.transport.close()  # type: ignore[no-untyped-call]
        return [page for batch in results for page in batch]


def _page_count(pdf_bytes: bytes) -> int:
    try:
        document = pdfium.PdfDocument(pdf_bytes)
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"the chunk's PDF cannot be opened: {exc}") from None
    try:
        return len(document)
    finally:
        document.close()


def _pages(
    response: vision_v1.BatchAnnotateFilesResponse, requested: list[int], first_page_number: int
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
            raise VisionError(
                f"Vision {status.name} on page {number}: {image.error.message}", status, page=number
            )
        annotation = image.full_text_annotation
        confidences = [
            word.confidence
            for vision_page in annotation.pages
            for block in vision_page.blocks
            for paragraph in block.paragraphs
            for word in paragraph.words
        ]
        confidence = sum(confidences) / len(confidences) if confidences else 0.0
        results.append(PageResult(number, annotation.text, round(confidence, 4), "ocr"))
    return results
