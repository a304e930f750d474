"""Bad PDFs: one error class per kind, each with a stable code and a one-line message."""

from __future__ import annotations

from app.core.errors import InvalidInputError, OCRError


class PdfError(InvalidInputError):
    code = "invalid_pdf"


class PdfNotFoundError(PdfError):
    code = "file_not_found"


class EmptyFileError(PdfError):
    code = "empty_file"


class NotAPdfError(PdfError):
    code = "not_a_pdf"


class EncryptedPdfError(PdfError):
    code = "encrypted_pdf"


class NoPagesError(PdfError):
    code = "no_pages"


class DamagedPdfError(PdfError):
    code = "damaged_pdf"


class UnsupportedCompressionError(DamagedPdfError):
    """The objects the file needs are compressed with a filter no reader here decodes (or an image codec)."""

    code = "unsupported_compression"


class ObjectsTooLargeError(PdfError):
    """The file's compressed object streams decompress past a sane size: a decompression bomb that
    would take gigabytes to open (app.pdf.object_scan)."""

    code = "objects_too_large"


class TooManyPagesError(PdfError):
    """More pages than MAX_PAGES_PER_DOCUMENT (a page tree may name one small page any number of times)."""

    code = "too_many_pages"


class TextLayerError(OCRError):
    """A text layer that cannot be written or grafted: its pages do not match the document's, or
    it is not a layer render_text_layer wrote. The same inputs fail the same way: not retryable."""

    code = "text_layer_invalid"
