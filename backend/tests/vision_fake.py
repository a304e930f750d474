"""A Google Cloud Vision stand-in at the gRPC level: an ImageAnnotator server on loopback that
answers BatchAnnotateFiles with responses shaped like the service's.

The real client (google-cloud-vision) talks to it over a real gRPC channel. What it answers is
a handler's choice:

- echo_pages: one response per requested page, its text naming the page ("page 3 text");
- read_pages: what the PDF's own text layer says, where it is, as Vision reports a PDF page:
  blocks, paragraphs (one a line), words and symbols with confidences; each word's
  bounding box as normalized vertices (0..1 of the page as displayed, crop box and /Rotate
  applied) in the order the word reads (vertex 0 is its top-left as read, so a word lying
  sideways has its vertices turned); the page's width and height in points.

The server records every request's arrival (time.monotonic(), pages, the caller's address: one
per client channel, so one per engine process), how many requests and pages were in flight at
once, and answers RESOURCE_EXHAUSTED, as Google does over quota, to the arrivals it is told to
(`exhaust`, numbered from 1 in order of arrival), recording when it did.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field

import grpc
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from google.cloud import vision_v1

from app.core.config import Settings, load_settings
from app.pdf._pdfium import PDFIUM_LOCK

Handler = Callable[[vision_v1.BatchAnnotateFilesRequest], vision_v1.BatchAnnotateFilesResponse]
Break = vision_v1.TextAnnotation.DetectedBreak.BreakType


class Abort(Exception):
    """Raised by a handler: the server answers with this gRPC status and no response."""

    def __init__(self, status: grpc.StatusCode) -> None:
        self.status = status


def _file_response(
    request: vision_v1.BatchAnnotateFilesRequest,
    page: Callable[[int], vision_v1.AnnotateImageResponse],
) -> vision_v1.BatchAnnotateFilesResponse:
    (file_request,) = request.requests
    return vision_v1.BatchAnnotateFilesResponse(
        responses=[
            vision_v1.AnnotateFileResponse(
                responses=[page(p) for p in file_request.pages], total_pages=len(file_request.pages)
            )
        ]
    )


def page_response(page: int, text: str, confidences: list[float]) -> vision_v1.AnnotateImageResponse:
    """Words of text on one line near the top of the page, upright, with these confidences."""
    words = [
        vision_v1.Word(
            confidence=c,
            symbols=[vision_v1.Symbol(text=t, confidence=c)],
            bounding_box=_normalized(
                [(0.1 + 0.2 * i, 0.05), (0.25 + 0.2 * i, 0.05), (0.25 + 0.2 * i, 0.07), (0.1 + 0.2 * i, 0.07)]
            ),
        )
        for i, (t, c) in enumerate(zip(text.split(), confidences, strict=True))
    ]
    annotation = vision_v1.TextAnnotation(
        text=text,
        pages=[
            vision_v1.Page(
                confidence=1.0, blocks=[vision_v1.Block(paragraphs=[vision_v1.Paragraph(words=words)])]
            )
        ],
    )
    return vision_v1.AnnotateImageResponse(
        full_text_annotation=annotation, context=vision_v1.ImageAnnotationContext(page_number=page)
    )


def echo_pages(request: vision_v1.BatchAnnotateFilesRequest) -> vision_v1.BatchAnnotateFilesResponse:
    """Like the service: one AnnotateImageResponse per requested page, text naming the page."""
    return _file_response(request, lambda p: page_response(p, f"page {p} text", [0.9, 0.8, 0.7]))


def read_pages(request: vision_v1.BatchAnnotateFilesRequest) -> vision_v1.BatchAnnotateFilesResponse:
    """Like the service on a PDF whose text it reads perfectly: the text layer, with its geometry."""
    (file_request,) = request.requests
    with PDFIUM_LOCK:  # the server answers from a thread pool, beside the engine under test
        document = pdfium.PdfDocument(file_request.input_config.content)
        try:
            return _file_response(request, lambda p: _read_page(document, p))
        finally:
            document.close()


def word_confidence(index: int) -> float:
    """The confidence read_pages gives a page's index-th word (0.95, 0.9, 0.85, 0.95, ...)."""
    return (0.95, 0.9, 0.85)[index % 3]


@dataclass
class _Char:
    text: str
    box: tuple[float, float, float, float]  # left, top, right, bottom in displayed points, y down
    reads: tuple[float, float]  # unit direction the glyph reads in, displayed, y down


def _read_page(document: pdfium.PdfDocument, number: int) -> vision_v1.AnnotateImageResponse:
    page = document[number - 1]
    width, height = page.get_size()
    text_page = page.get_textpage()
    try:
        chars = [_char(page, text_page, i, width, height) for i in range(text_page.count_chars())]
    finally:
        text_page.close()
        page.close()
    lines: list[list[list[_Char]]] = [[[]]]  # lines of words of characters
    for char in chars:
        if char.text in "\r\n":
            if lines[-1] != [[]]:
                lines.append([[]])
        elif char.text.isspace():
            if lines[-1][-1]:
                lines[-1].append([])
        else:
            lines[-1][-1].append(char)
    # Top line first and each line's words first to last, as read: PDFium orders the lines and
    # words of text that is not upright by where they are on the page.
    lines = [sorted((w for w in line if w), key=_along) for line in lines]
    lines = sorted((line for line in lines if line), key=_across)
    paragraphs, texts, index = [], [], 0
    for line in lines:
        words = []
        for position, word in enumerate(line):
            last = position == len(line) - 1
            ends_with = Break.LINE_BREAK if last else Break.SPACE
            words.append(_word(word, (width, height), word_confidence(index), ends_with))
            index += 1
        paragraphs.append(vision_v1.Paragraph(words=words, confidence=0.9))
        texts.append(" ".join("".join(c.text for c in word) for word in line) + "\n")
    annotation = vision_v1.TextAnnotation(
        text="".join(texts),
        pages=[
            vision_v1.Page(
                width=round(width),
                height=round(height),
                confidence=0.9,
                blocks=[vision_v1.Block(paragraphs=paragraphs, confidence=0.9)] if paragraphs else [],
            )
        ],
    )
    return vision_v1.AnnotateImageResponse(
        full_text_annotation=annotation, context=vision_v1.ImageAnnotationContext(page_number=number)
    )


def _char(
    page: pdfium.PdfPage, text_page: pdfium.PdfTextPage, index: int, width: float, height: float
) -> _Char:
    """One character where PDFium draws it on the displayed page, and the way it reads."""
    text = text_page.get_text_range(index, 1)
    left, bottom, right, top = text_page.get_charbox(index)
    corners = [_displayed(page, x, y, width, height) for x, y in ((left, bottom), (right, top))]
    matrix = pdfium_c.FS_MATRIX()
    pdfium_c.FPDFText_GetMatrix(text_page.raw, index, matrix)
    origin = _displayed(page, left, bottom, width, height)
    ahead = _displayed(page, left + matrix.a * 10, bottom + matrix.b * 10, width, height)
    dx, dy = ahead[0] - origin[0], ahead[1] - origin[1]
    length = (dx * dx + dy * dy) ** 0.5 or 1.0
    xs, ys = sorted(x for x, _ in corners), sorted(y for _, y in corners)
    return _Char(text, (xs[0], ys[0], xs[1], ys[1]), (dx / length, dy / length))


def _along(word: list[_Char]) -> float:
    """How far along its line the word is, measured the way it reads."""
    first = word[0]
    left, top, right, bottom = first.box
    return (left + right) / 2 * first.reads[0] + (top + bottom) / 2 * first.reads[1]


def _across(line: list[list[_Char]]) -> float:
    """How far down the page the line is, measured the way its text reads."""
    first = line[0][0]
    down = (-first.reads[1], first.reads[0])
    left, top, right, bottom = first.box
    return (left + right) / 2 * down[0] + (top + bottom) / 2 * down[1]


_PRECISION = 100  # device pixels per point for FPDF_PageToDevice, which answers whole pixels


def _displayed(page: pdfium.PdfPage, x: float, y: float, width: float, height: float) -> tuple[float, float]:
    """A point of PDF user space on the page as PDFium displays it, in points from its top-left."""
    device_x, device_y = ctypes.c_int(), ctypes.c_int()
    pdfium_c.FPDF_PageToDevice(
        page.raw,
        0,
        0,
        round(width * _PRECISION),
        round(height * _PRECISION),
        0,
        ctypes.c_double(x),
        ctypes.c_double(y),
        device_x,
        device_y,
    )
    return device_x.value / _PRECISION, device_y.value / _PRECISION


def _word(
    chars: list[_Char], size: tuple[float, float], confidence: float, ends_with: Break
) -> vision_v1.Word:
    left = min(c.box[0] for c in chars)
    top = min(c.box[1] for c in chars)
    right = max(c.box[2] for c in chars)
    bottom = max(c.box[3] for c in chars)
    symbols = [vision_v1.Symbol(text=c.text, confidence=confidence) for c in chars]
    symbols[-1].property = vision_v1.TextAnnotation.TextProperty(
        detected_break=vision_v1.TextAnnotation.DetectedBreak(type_=ends_with)
    )
    corners = [(left, top), (right, top), (right, bottom), (left, bottom)]
    reads = chars[0].reads
    down = (-reads[1], reads[0])  # a quarter turn clockwise from the way it reads (y down)
    along = [x * reads[0] + y * reads[1] for x, y in corners]
    across = [x * down[0] + y * down[1] for x, y in corners]
    # the word's corners as read: top-left, top-right, bottom-right, bottom-left
    order = [
        min(range(4), key=lambda i: along[i] + across[i]),
        max(range(4), key=lambda i: along[i] - across[i]),
        max(range(4), key=lambda i: along[i] + across[i]),
        min(range(4), key=lambda i: along[i] - across[i]),
    ]
    width, height = size
    return vision_v1.Word(
        confidence=confidence,
        symbols=symbols,
        bounding_box=_normalized([(corners[i][0] / width, corners[i][1] / height) for i in order]),
    )


def _normalized(points: list[tuple[float, float]]) -> vision_v1.BoundingPoly:
    return vision_v1.BoundingPoly(
        normalized_vertices=[vision_v1.NormalizedVertex(x=x, y=y) for x, y in points]
    )


@dataclass(frozen=True)
class Arrival:
    """One request as the server received it."""

    number: int  # 1 for the first request the server received
    at: float  # time.monotonic() on arrival
    pages: int
    peer: str  # the client's address: one per channel
    exhausted_at: float | None = None  # answered RESOURCE_EXHAUSTED at this time.monotonic()


@dataclass
class VisionServer:
    """The server's state: its handler, the requests it was sent, how many ran at once."""

    handler: Handler = echo_pages
    requests: list[vision_v1.BatchAnnotateFilesRequest] = field(default_factory=list)
    arrivals: list[Arrival] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    in_flight_pages: int = 0
    max_in_flight_pages: int = 0
    delay: float = 0.05  # seconds each request takes, long enough for concurrent ones to overlap
    exhaust: set[int] = field(default_factory=set)  # arrival numbers answered RESOURCE_EXHAUSTED
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    def batch_annotate_files(
        self, raw: vision_v1.BatchAnnotateFilesRequest, context: grpc.ServicerContext
    ) -> vision_v1.BatchAnnotateFilesResponse:
        pages = sum(len(r.pages) for r in raw.requests)
        with self.lock:
            arrived = time.monotonic()
            self.requests.append(raw)
            number = len(self.requests)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.in_flight_pages += pages
            self.max_in_flight_pages = max(self.max_in_flight_pages, self.in_flight_pages)
        exhausted_at = None
        try:
            threading.Event().wait(self.delay)
            try:
                if number in self.exhaust:
                    raise Abort(grpc.StatusCode.RESOURCE_EXHAUSTED)
                return self.handler(raw)
            except Abort as abort:  # as the service answers: a gRPC status, no response
                if abort.status is grpc.StatusCode.RESOURCE_EXHAUSTED:
                    exhausted_at = time.monotonic()
                context.abort(abort.status, f"{abort.status.name} from the test server")
                raise
        finally:
            with self.lock:
                self.in_flight -= 1
                self.in_flight_pages -= pages
                self.arrivals.append(Arrival(number, arrived, pages, context.peer(), exhausted_at))


@contextmanager
def serve_vision(threads: int = 8) -> Iterator[VisionServer]:
    """The ImageAnnotator service on a free loopback port, for the length of the block, answering
    up to `threads` requests at once."""
    state = VisionServer()

    def dispatch(
        request: vision_v1.BatchAnnotateFilesRequest, context: grpc.ServicerContext
    ) -> vision_v1.BatchAnnotateFilesResponse:
        return state.batch_annotate_files(request, context)

    handler = grpc.method_handlers_generic_handler(
        "google.cloud.vision.v1.ImageAnnotator",
        {
            "BatchAnnotateFiles": grpc.unary_unary_rpc_method_handler(
                dispatch,
                request_deserializer=vision_v1.BatchAnnotateFilesRequest.deserialize,
                response_serializer=vision_v1.BatchAnnotateFilesResponse.serialize,
            )
        },
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=threads))
    server.add_generic_rpc_handlers((handler,))
    state.port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield state
    finally:
        server.stop(grace=None)


def vision_settings(vision: VisionServer, **options: object) -> Settings:
    """Settings that point the engine at the test server (the environment names none of this)."""
    return load_settings(
        google_vision_endpoint=f"127.0.0.1:{vision.port}",
        google_vision_insecure=True,
        **options,
    )
