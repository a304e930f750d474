"""Engine errors: each says whether the same pages can succeed on another attempt."""

from __future__ import annotations

from app.core.errors import InvalidInputError, OCRError


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


class TesseractFailedError(EngineError):
    """tesseract exited with an error on a page: the page makes it fail, every time."""

    code = "tesseract_failed"


class TesseractTimeoutError(EngineError):
    """tesseract took too long on a page; the machine may have been overloaded."""

    code = "tesseract_timeout"
    retryable = True


class OcrProcessDiedError(EngineError):
    """The OCR process running the chunk died (killed, or aborted by PDFium on a failed allocation).

    Retryable: the machine may have killed it (the kernel's OOM killer, an operator); a chunk that
    kills its process every time ends failed once its attempts are spent.
    """

    code = "ocr_process_died"
    retryable = True
