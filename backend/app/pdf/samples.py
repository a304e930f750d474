"""Sample PDFs the project makes itself, for the demo, tests and benchmarks.

Scans are real English prose drawn with a TrueType font onto 300 DPI
letter-size pages and stored as images only (no text layer); born-digital
pages are reportlab text. The generators of good files return the text of
each page, so OCR output can be scored against it (cer). The make_*
helpers further down write the bad inputs the service must refuse or
repair: encrypted, owner-locked, zero pages, truncated, broken xref, a page
tesseract refuses and a page too large to render.
"""

from __future__ import annotations

import io
import random
import textwrap
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

from app.core.errors import ConfigurationError

SENTENCES = (
    "The committee met on a wet Tuesday morning to review the harbour accounts.",
    "Most of the ledgers had been kept by hand until the old clerk retired last spring.",
    "A careful reader will notice that the totals for March do not match the summary.",
    "The difference was traced to a shipment of timber that arrived two days late.",
    "Nobody disputed the facts, although several members questioned the delay.",
    "The report recommends that every invoice be scanned on the day it is received.",
    "Our lawyers asked for copies of the correspondence with the insurance company.",
    "The warehouse roof was repaired in August at a cost of eleven thousand pounds.",
    "During the winter the ferry ran twice a day, weather permitting.",
    "The town council agreed to extend the lease for another five years.",
    "A short walk along the river brings you to the mill and the old stone bridge.",
    "She wrote the letter in pencil and signed it with her full name.",
    "The inspector found no evidence of damage to the northern wall.",
    "Payment is due within thirty days of the date shown on the statement.",
    "Witnesses described a grey van parked outside the office that evening.",
    "The library keeps the original maps in a locked cabinet on the second floor.",
    "Each tenant is responsible for clearing snow from the path in front of the house.",
    "The contract was signed in duplicate and one copy was sent by registered post.",
    "He remembered the smell of bread from the bakery at the corner of the square.",
    "The meeting closed at half past four with a vote of thanks to the chairman.",
    "Records from the previous decade were moved to the county archive.",
    "The engineer recommended replacing the pumps before the summer season.",
    "A receipt must be attached to every claim for travel expenses.",
    "The farm has belonged to the same family for more than a hundred years.",
    "Our auditors will visit the branch offices during the first week of May.",
    "The museum reopened after the floods with a new exhibition of local pottery.",
    "Please return the signed form together with a copy of your passport.",
    "The garden is planted with roses, lavender and a row of young apple trees.",
    "Traffic on the coast road was slow because of repairs near the lighthouse.",
    "The board approved the budget subject to a review of the staffing costs.",
    "A new school will be built on the field behind the church.",
    "The captain logged the position of the vessel every hour during the storm.",
    "Tickets for the concert may be collected from the box office after noon.",
    "The survey shows that most residents would welcome a weekly market.",
    "All visitors must sign the book at the front desk and wear a badge.",
    "The tenant reported a leak under the kitchen sink on the fourth of June.",
    "Heavy rain in the hills caused the stream to overflow its banks.",
    "The minutes of the last meeting were read and approved without changes.",
    "An independent valuation put the property at slightly less than expected.",
    "The bakery opens at seven and closes when the last loaf is sold.",
)

FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf",
)
DPI = 300
PAGE_INCHES = (8.5, 11)


def page_text(page_index: int, seed: int, sentences: int = 14) -> str:
    """Deterministic prose for one page: a few paragraphs of sentences from the bank."""
    rng = random.Random(seed * 100_003 + page_index)
    chosen = [rng.choice(SENTENCES) for _ in range(sentences)]
    paragraphs = [" ".join(chosen[i : i + 4]) for i in range(0, len(chosen), 4)]
    return "\n\n".join(paragraphs)


def _font(points: float) -> ImageFont.FreeTypeFont:
    for candidate in FONT_CANDIDATES:
        if Path(candidate).is_file():
            return ImageFont.truetype(candidate, size=round(points * DPI / 72))
    raise ConfigurationError("no TrueType font found; install fonts-dejavu-core")


def render_scan(text: str, *, points: float = 11.5) -> Image.Image:
    """A 300 DPI grayscale page with text laid out in a 6.5-inch column."""
    width, height = (round(x * DPI) for x in PAGE_INCHES)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    font = _font(points)
    line_height = round(points * 1.45 * DPI / 72)
    y = DPI  # one-inch top margin
    for paragraph in text.split("\n\n"):
        for line in textwrap.wrap(paragraph, width=78):
            draw.text((DPI, y), line, font=font, fill=0)
            y += line_height
        y += line_height // 2
    return image


def _wrapped(text: str) -> str:
    """The text as laid out on the page (line breaks where the renderer wrapped)."""
    return "\n\n".join("\n".join(textwrap.wrap(p, width=78)) for p in text.split("\n\n"))


def degrade_scan(image: Image.Image, seed: int) -> Image.Image:
    """What an economy office scan does to a clean page: a slight skew, optics that resolve
    about 120 DPI (stored at 300), grey paper and ink, light sensor noise and a few specks of
    dust. Deterministic for a seed (the noise comes from random.Random, not from PIL's
    effect_noise, which uses the C library's rand())."""
    rng = random.Random(seed)
    image = image.rotate(rng.uniform(-0.7, 0.7), resample=Image.Resampling.BICUBIC, fillcolor=255)
    full = image.size
    image = image.resize((full[0] * 2 // 5, full[1] * 2 // 5), Image.Resampling.BOX)
    image = image.resize(full, Image.Resampling.BICUBIC).filter(ImageFilter.GaussianBlur(1.0))
    image = image.point(lambda v: 28 + v * 212 // 255)  # ink is not black, paper is not white
    noise = Image.frombytes("L", image.size, rng.randbytes(image.width * image.height))
    noise = noise.point(lambda v: 128 + (v - 128) * 20 // 128)  # uniform, +-20 grey levels
    image = ImageChops.add(image, noise, scale=1.0, offset=-128)
    draw = ImageDraw.Draw(image)
    for _ in range(rng.randrange(40, 120)):
        x, y, r = rng.randrange(image.width), rng.randrange(image.height), rng.uniform(1, 3.5)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=rng.randrange(40, 140))
    return image


def make_scanned_pdf(path: Path, pages: int, seed: int = 0, *, degraded: bool = False) -> list[str]:
    """An image-only PDF of `pages` prose pages at 300 DPI; returns each page's text.

    degraded=True draws 8-point type and makes the pages look scanned (degrade_scan, stored as
    JPEG at quality 40) rather than rendered, so OCR engines make mistakes worth comparing:
    tesseract reads the clean pages without a single error."""
    texts = [page_text(i, seed) for i in range(pages)]
    images = (
        degrade_scan(render_scan(t, points=8), seed * 100_003 + i) if degraded else render_scan(t)
        for i, t in enumerate(texts)
    )
    first = next(images)
    options = {"quality": 40} if degraded else {}
    first.save(path, "PDF", resolution=DPI, save_all=True, append_images=images, **options)
    return [_wrapped(t) for t in texts]


def make_born_digital_pdf(path: Path, pages: int, seed: int = 0, *, blank: bool = False) -> list[str]:
    """A text PDF (reportlab); with blank=True, pages with nothing on them."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=letter, pageCompression=1)
    texts = []
    for i in range(pages):
        text = "" if blank else _wrapped(page_text(i, seed, sentences=8))
        lines = pdf.beginText(72, 720)
        lines.setFont("Helvetica", 11)
        for line in text.split("\n"):
            lines.textLine(line)
        if text:
            pdf.drawText(lines)
        pdf.showPage()
        texts.append(text)
    pdf.save()
    return texts


def make_mixed_pdf(path: Path, kinds: str, seed: int = 0) -> list[str]:
    """Pages by kind, one letter each: 'd' born-digital, 's' scanned. E.g. 'dsd'."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    texts = []
    for i, kind in enumerate(kinds):
        single = io.BytesIO()
        if kind == "d":
            tmp = path.with_suffix(f".part{i}.pdf")
            texts += make_born_digital_pdf(tmp, 1, seed * 1000 + i)
            single.write(tmp.read_bytes())
            tmp.unlink()
        elif kind == "s":
            text = page_text(i, seed)
            render_scan(text).save(single, "PDF", resolution=DPI)
            texts.append(_wrapped(text))
        else:
            raise ValueError(f"page kind must be 'd' or 's', not {kind!r}")
        writer.append(PdfReader(io.BytesIO(single.getvalue())))
    with path.open("wb") as handle:
        writer.write(handle)
    return texts


def make_scan_with_text_layer(path: Path, overlay: str, *, invisible: bool, seed: int = 0) -> str:
    """One scanned page with a text layer drawn over it; returns the scan's text.

    invisible=True is an OCR layer as scanners write it (render mode 3); False
    is a visible stamp in the bottom margin, as a Bates number is added.
    """
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    text = page_text(0, seed)
    pdf = canvas.Canvas(str(path), pagesize=letter, pageCompression=1)
    pdf.drawImage(ImageReader(render_scan(text)), 0, 0, width=letter[0], height=letter[1])
    layer = pdf.beginText(72, 36)
    layer.setFont("Helvetica", 9)
    if invisible:
        layer.setTextRenderMode(3)
    for line in overlay.split("\n"):
        layer.textLine(line)
    pdf.drawText(layer)
    pdf.showPage()
    pdf.save()
    return _wrapped(text)


def make_empty_file(path: Path) -> None:
    path.write_bytes(b"")


def make_not_a_pdf(path: Path) -> None:
    """A PNG signature and nothing else: what a wrong upload looks like."""
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))


def make_encrypted_pdf(path: Path, password: str = "secret") -> None:
    from pypdf import PdfWriter

    source = path.with_suffix(".plain.pdf")
    make_born_digital_pdf(source, 1)
    writer = PdfWriter(clone_from=str(source))
    writer.encrypt(user_password=password, owner_password=password + "-owner")
    with path.open("wb") as handle:
        writer.write(handle)
    source.unlink()


def make_owner_locked_pdf(path: Path, pages: int = 1, seed: int = 0) -> list[str]:
    """Encrypted with an owner password only ("no copying"): opens without a password."""
    from pypdf import PdfWriter
    from pypdf.constants import UserAccessPermissions

    source = path.with_suffix(".plain.pdf")
    texts = make_born_digital_pdf(source, pages, seed)
    writer = PdfWriter(clone_from=str(source))
    writer.encrypt(
        user_password="",
        owner_password="owner",
        algorithm="AES-256",
        permissions_flag=UserAccessPermissions(0),
    )
    with path.open("wb") as handle:
        writer.write(handle)
    source.unlink()
    return texts


def make_wide_page_pdf(path: Path) -> None:
    """A 194-inch banner: 58,000 pixels wide at 300 DPI, more than tesseract accepts (32,767)."""
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=(14000, 72))
    pdf.setFont("Helvetica", 40)
    pdf.drawString(10, 20, "A banner far too wide for tesseract")
    pdf.showPage()
    pdf.save()


def make_oversized_page_pdf(path: Path) -> None:
    """A 200 x 200 inch page (the largest PDF allows): 3.6 gigapixels at 300 DPI, refused unrendered."""
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=(14400, 14400))
    pdf.setFont("Helvetica", 400)
    pdf.drawString(100, 100, "A poster nobody can render at 300 DPI")
    pdf.showPage()
    pdf.save()


def make_zero_page_pdf(path: Path) -> None:
    """A syntactically valid PDF whose page tree is empty."""
    from pypdf import PdfWriter

    with path.open("wb") as handle:
        PdfWriter().write(handle)


def make_truncated_pdf(path: Path, pages: int, keep: float = 0.6, seed: int = 0) -> list[str]:
    """A born-digital PDF cut short (as an interrupted download is)."""
    texts = make_born_digital_pdf(path, pages, seed)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return texts


def make_broken_xref_pdf(path: Path, pages: int, seed: int = 0) -> list[str]:
    """A born-digital PDF whose startxref points at the wrong offset (readers must rebuild it)."""
    texts = make_born_digital_pdf(path, pages, seed)
    data = path.read_bytes()
    head, _, tail = data.rpartition(b"startxref")
    offset = tail.split()[0]
    path.write_bytes(head + b"startxref" + tail.replace(offset, str(int(offset) // 2).encode(), 1))
    return texts


def cer(reference: str, hypothesis: str) -> float:
    """Character error rate: edit distance over reference length, whitespace runs collapsed."""
    from rapidfuzz.distance import Levenshtein  # a test and benchmark dependency

    ref, hyp = " ".join(reference.split()), " ".join(hypothesis.split())
    if not ref:
        return 0.0 if not hyp else 1.0
    return Levenshtein.distance(ref, hyp) / len(ref)
