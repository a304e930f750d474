"""Arabic and Hebrew lines printed from HTML by Chromium, read as written.

Chromium stores some of an Arabic line's words as drawn (left to right) and others as read, so
that half the words of a line came out backwards ("لصو" for "وصل"), and PDFium's own ordering of
a right-to-left line turns a run of English words with it ("בשם Mint Linux" for "Linux Mint").
Each such line is now read from where its characters stand (app.engines._rtl_order).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine
from tests.corpus.word_gaps import print_html

LINES = [
    "وصل عدد الطلاب إلى 2500 طالب في عام 2023.",
    "تستخدم الشركة برنامج Microsoft Word لكتابة التقارير السنوية منذ عام 1998.",
    "החברה משתמשת בתוכנה בשם Linux Mint גרסה 21.3 בכל המחשבים.",
]


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("rtl")
    paragraphs = "".join(f"<p>{line}</p>" for line in LINES)
    source = directory / "rtl.html"
    source.write_text(
        "<html dir=rtl><head><meta charset=utf-8><style>@page { size: A4; margin: 18mm; }"
        " body { font-family: 'DejaVu Sans'; font-size: 14pt; }</style></head>"
        f"<body>{paragraphs}</body></html>",
        encoding="utf-8",
    )
    print_html(source, directory / "rtl.pdf")
    return directory / "rtl.pdf"


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_each_line_reads_as_written(printed: Path, engine: TextLayerEngine | AutoEngine) -> None:
    (page,) = engine.recognize(printed.read_bytes(), 1)
    assert page.source == "text-layer"
    assert page.text.splitlines() == LINES
