"""PDFium access rules shared by inspect and split.

PDFium is not thread-safe: every call in a process goes through PDFIUM_LOCK
(the API server and the CLI call it from worker threads). OCR engines run in
their own processes and need no lock.
"""

from __future__ import annotations

import threading

PDFIUM_LOCK = threading.Lock()
