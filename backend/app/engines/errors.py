"""Engine errors: each says whether the same pages can succeed on another attempt."""

from __future__ import annotations

from typing import Any

from app.core.errors import InvalidInputError, OCRError, ResourceLimitError


class EngineError(OCRError):
    code = "engine_error"


class UnknownEngineError(InvalidInputError):
    code = "unknown_engine"


class EngineUnavailableError(EngineError):
    """The engine cannot run here (binary or credentials missing): a deployment problem."""

    code = "engine_unavailable"


class PageRenderError(EngineError):
    """PDFium cannot load or render a page: the page is broken, retrying will not help."""

    code = "page_render_failed"


class PageTooLargeError(PageRenderError):
    """The page is too large to render even at the lowest resolution worth OCR-ing."""

    code = "page_too_large"


class PageLostError(PageRenderError):
    """The page was lost in a damaged file: its repair left a blank page in its place."""

    code = "page_lost"


class TesseractFailedError(EngineError):
    """tesseract exited with an error on a page: the page makes it fail, every time."""

    code = "tesseract_failed"


class TesseractTimeoutError(EngineError):
    """tesseract took too long on a page; the machine may have been overloaded."""

    code = "tesseract_timeout"
    retryable = True


class VisionQuotaWaitError(EngineError):
    """A Vision request waited for the fleet's quota (its rate, its pages in flight, a back-off
    after a 429) longer than GOOGLE_VISION_QUOTA_MAX_WAIT_SECONDS. Retryable: the quota frees."""

    code = "vision_quota_wait"
    retryable = True


class OcrProcessDiedError(EngineError):
    """The OCR process running the chunk died (killed, or aborted by PDFium on a failed allocation).

    Retryable: the machine may have killed it (the kernel's OOM killer, an operator); a chunk that
    kills its process every time ends failed once its attempts are spent.
    """

    code = "ocr_process_died"
    retryable = True
    # The pages the chunk's task had read when its process died (PageResults): its next run
    # leaves them out (app.engines._read_pages).
    pages_read: tuple[Any, ...] = ()


class OcrPoolStoppedError(EngineError):
    """The worker stopped its OCR processes (it is shutting down) before the task ended: a task
    still queued, or running in a process the stop killed. Nothing about the pages: the worker
    hands the chunk back without charging its attempt (ChunkProcessor)."""

    code = "ocr_pool_stopped"
    retryable = True


class PageTimeoutError(OcrProcessDiedError):
    """A page used up its CPU time (MAX_PAGE_CPU_SECONDS) and its OCR process was ended
    (_page_clock). Permanent: the same page takes the same CPU time on every run."""

    code = "page_timeout"
    retryable = False


# Permanent errors about one page: the engines record the page as failed (PageResult.failed) and
# go on with the others, so one unreadable page never costs its chunk or its document.
# A retryable error (a timeout) is not among them: it fails the attempt, which runs again.
PAGE_FAILURES: tuple[type[OCRError], ...] = (PageRenderError, TesseractFailedError, ResourceLimitError)


def is_page_failure(error: BaseException) -> bool:
    return isinstance(error, PAGE_FAILURES) and not error.retryable
