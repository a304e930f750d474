"""Tables set without rules, as a bank statement, an invoice's lines or an account's details
are, and pages set in columns that are not tables. Read as they came, tesseract read each of the
tables a column at a time: a statement of 24 rows came back as its 24 dates, then its
descriptions, then its balances (68 % of the page wrong, ocrmypdf 73 %), and a reader could not
tell which amount went with which day.

300 DPI, DejaVu (tests.corpus.leaders.FACES); each builder returns the page and its text, a
table a row to a line (cells joined by a space, an empty cell left out), columns that are not a
table one after another. Deterministic for a seed.
"""

from __future__ import annotations

import random
import textwrap

from PIL import Image, ImageDraw, ImageFont

from app.pdf.samples import DPI, PAGE_INCHES, SENTENCES
from tests.corpus.leaders import FACES

PAYEES = (
    "Card payment TESCO STORES",
    "Direct debit COUNCIL TAX",
    "Transfer from J SMITH",
    "Salary HARBOUR LTD",
    "Card payment SHELL 4471",
    "Standing order RENT",
    "Cash withdrawal",
    "Interest paid",
    "Direct debit BRITISH GAS",
    "Cheque 100231",
    "Refund ARGOS",
)
WORDS = (
    "harbour",
    "ledger",
    "timber",
    "ferry",
    "council",
    "lease",
    "river",
    "mill",
    "bridge",
    "pencil",
    "letter",
    "inspector",
    "wall",
    "library",
    "cabinet",
    "tenant",
    "contract",
    "bakery",
    "square",
    "chairman",
    "archive",
    "engineer",
    "receipt",
    "farm",
    "auditor",
    "branch",
    "museum",
    "pottery",
    "passport",
    "garden",
    "lavender",
    "apple",
    "traffic",
    "lighthouse",
    "budget",
    "school",
    "field",
    "church",
)


class _Page:
    def __init__(self, points: float, face: str) -> None:
        self.image = Image.new("L", (round(PAGE_INCHES[0] * DPI), round(PAGE_INCHES[1] * DPI)), 255)
        self.draw = ImageDraw.Draw(self.image)
        self.font = ImageFont.truetype(FACES[face], size=round(points * DPI / 72))
        self.points = points

    def step(self, leading: float) -> int:
        return round(self.points * leading * DPI / 72)

    def left(self, x: float, y: int, text: str) -> None:
        """text starting x inches in."""
        self.draw.text((x * DPI, y), text, font=self.font, fill=0)

    def right(self, x: float, y: int, text: str) -> None:
        """text ending x inches in."""
        self.draw.text(
            (x * DPI - self.draw.textlength(text, font=self.font), y), text, font=self.font, fill=0
        )

    def prose(
        self, rng: random.Random, x: float, y: int, width: float, lines: int, leading: float
    ) -> list[str]:
        """Paragraphs of one to three sentences filling width inches, a blank line between them."""
        characters = int(0.95 * width * DPI / self.draw.textlength("n", font=self.font))
        out: list[str] = []
        while len(out) < lines:
            for line in textwrap.wrap(
                " ".join(rng.choice(SENTENCES) for _ in range(rng.randint(1, 3))), characters
            ):
                if len(out) == lines:
                    break
                self.left(x, y, line)
                out.append(line)
                y += self.step(leading)
            y += self.step(leading)
        return out


def bank_statement_image(
    seed: int = 4, *, points: float = 9.0, face: str = "sans"
) -> tuple[Image.Image, str]:
    """24 rows of date, payee, paid out or paid in (the other cell empty) and balance; the date
    and payee flush left, the amounts flush right."""
    rng = random.Random(seed)
    page = _Page(points, face)
    step = page.step(1.9)
    header = ("Date", "Description", "Paid out", "Paid in", "Balance")
    rows = [header]
    balance = 1520.0
    for index in range(24):
        amount = rng.randint(100, 90000) / 100
        paid_out = rng.random() < 0.7
        balance += -amount if paid_out else amount
        money = f"{amount:,.2f}"
        rows.append(
            (
                f"{index // 2 + 1:02d} Mar",
                rng.choice(PAYEES),
                money if paid_out else "",
                "" if paid_out else money,
                f"{balance:,.2f}",
            )
        )
    for index, row in enumerate(rows):
        y = DPI + index * step
        page.left(0.8, y, row[0])
        page.left(1.8, y, row[1])
        for x, cell in zip((5.3, 6.4, 7.7), row[2:], strict=True):
            page.right(x, y, cell)
    return page.image, "\n".join(" ".join(cell for cell in row if cell) for row in rows)


def wrapped_table_image(
    seed: int = 9, *, points: float = 10.0, face: str = "serif"
) -> tuple[Image.Image, str]:
    """12 rows of reference, description and amount, each description a sentence wrapped onto
    two lines (the second line has nothing beside it)."""
    rng = random.Random(seed)
    page = _Page(points, face)
    step = page.step(1.5)
    page.left(1.0, DPI, "Ref")
    page.left(1.8, DPI, "Description")
    page.right(7.5, DPI, "Amount")
    lines = ["Ref Description Amount"]
    y = DPI + round(1.5 * step)
    for index in range(12):
        reference, amount = f"A-{100 + index}", f"{rng.randint(100, 99999) / 100:,.2f}"
        description = textwrap.wrap(rng.choice(SENTENCES), 48)
        page.left(1.0, y, reference)
        page.right(7.5, y, amount)
        for number, line in enumerate(description):
            page.left(1.8, y + number * step, line)
        lines += [f"{reference} {description[0]} {amount}", *description[1:]]
        y += step * len(description) + step // 2
    return page.image, "\n".join(lines)


def account_details_image(*, points: float = 11.0, face: str = "sans") -> tuple[Image.Image, str]:
    """Eight labels down the left and their values 2.5 inches to the right of them."""
    page = _Page(points, face)
    pairs = (
        ("Name", "Margaret Ellis"),
        ("Account", "Harbour Savings Plus"),
        ("Branch", "Portsmouth Quay"),
        ("Opened", "March 2011"),
        ("Status", "Active"),
        ("Manager", "John Harper"),
        ("Telephone", "Ask at the branch"),
        ("Category", "Personal customer"),
    )
    for index, (label, value) in enumerate(pairs):
        page.left(1.0, DPI + index * page.step(2.0), label)
        page.left(3.5, DPI + index * page.step(2.0), value)
    return page.image, "\n".join(f"{label} {value}" for label, value in pairs)


def word_columns_image(
    seed: int = 6, *, points: float = 11.0, face: str = "serif"
) -> tuple[Image.Image, str]:
    """Three columns of 25 two-word entries, alike: a list set in columns, read down each."""
    rng = random.Random(seed)
    page = _Page(points, face)
    columns = []
    for column in range(3):
        entries = [f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)}" for _ in range(25)]
        for row, entry in enumerate(entries):
            page.left(1.0 + column * 6.5 / 3, DPI + row * page.step(1.6), entry)
        columns.append("\n".join(entries))
    return page.image, "\n".join(columns)


def sidebar_image(seed: int = 11, *, points: float = 10.0, face: str = "serif") -> tuple[Image.Image, str]:
    """A column of prose 4.2 inches wide and, on the same rows, a sidebar of prose 1.9 inches
    wide (three or four words a line), each in short paragraphs."""
    rng = random.Random(seed)
    page = _Page(points, face)
    main = page.prose(rng, 1.0, DPI, 4.2, 45, 1.4)
    side = page.prose(rng, 5.6, DPI, 1.9, 30, 1.4)
    return page.image, "\n".join(main + side)


def prose_columns_image(
    seed: int = 10, *, points: float = 10.0, face: str = "serif"
) -> tuple[Image.Image, str]:
    """Two columns of prose, 3 inches wide, in short paragraphs on the same rows."""
    rng = random.Random(seed)
    page = _Page(points, face)
    return page.image, "\n".join(
        page.prose(rng, 1.0, DPI, 3.0, 40, 1.4) + page.prose(rng, 4.5, DPI, 3.0, 40, 1.4)
    )
