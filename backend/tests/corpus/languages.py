"""Scans in other languages than English: Russian (Cyrillic) and German (umlauts and ß).

Minutes of a town committee, written for this corpus, drawn with DejaVu Serif (it has the
Cyrillic and Latin-1 glyphs) onto 300 DPI letter pages as `chunk-ocr sample` draws its
English scans (app.pdf.samples.render_scan), and stored as images only. Read as English,
the Russian page comes back as Latin look-alikes and guesses; read with its language it
should come back nearly whole. Each builder returns the Fixture with the text each page
should give; SCANS names the tesseract language each one is to be read in:

    for language, build in SCANS.items():
        fixture = build(directory)   # then OCR fixture.path in `language`, score with cer()
"""

# ruff: noqa: RUF001 - Cyrillic letters that look like Latin ones are the point of a Russian text

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from app.pdf.samples import DPI, render_scan, wrapped
from tests.corpus import Fixture

RUSSIAN = (
    "Заседание комиссии состоялось во вторник утром в здании городской администрации.",
    "Председатель напомнил, что отчёт о расходах за третий квартал должен быть готов к пятнице.",
    "Бухгалтер сообщила, что часть счетов поступила с опозданием из-за ремонта склада.",
    "Члены комиссии задали несколько вопросов о стоимости новых насосов для водокачки.",
    "Было решено перенести обсуждение бюджета на следующее заседание.",
    "Письмо от страховой компании прочитали вслух и приложили к протоколу.",
    "Жители северного района просят отремонтировать мост через реку до начала зимы.",
    "Инженер подтвердил, что работы можно закончить за шесть недель при хорошей погоде.",
    "Секретарь записала все предложения и разослала копии участникам по почте.",
    "Заседание закрыто в половине пятого, следующее назначено на четвёртое декабря.",
)

GERMAN = (
    "Die Sitzung des Ausschusses fand am Dienstagmorgen im großen Saal des Rathauses statt.",
    "Der Vorsitzende erinnerte daran, dass die Abrechnung für das dritte Quartal bis Freitag "
    "fertig sein muss.",
    "Die Buchhalterin berichtete, dass einige Rechnungen wegen der Straßensperrung verspätet eingingen.",
    "Mehrere Mitglieder stellten Fragen zu den Kosten der neuen Pumpen für das Wasserwerk.",
    "Es wurde beschlossen, die Beratung über den Haushalt auf die nächste Sitzung zu verschieben.",
    "Ein Schreiben der Versicherung wurde vorgelesen und dem Protokoll beigefügt.",
    "Die Anwohner im nördlichen Viertel bitten darum, die Brücke über den Fluss vor dem Winter "
    "instand zu setzen.",
    "Der Ingenieur bestätigte, dass die Arbeiten bei gutem Wetter in sechs Wochen abgeschlossen sind.",
    "Für Rückfragen steht Frau Müller im Büro gegenüber der Hauptstraße zur Verfügung.",
    "Die Sitzung endete um halb fünf; die nächste ist für den vierten Dezember angesetzt.",
)

SENTENCES_PER_PARAGRAPH = 3


def russian_scan(directory: Path, pages: int = 1) -> Fixture:
    """Minutes in Russian, read with `rus`."""
    return _scan(directory / "russian-scan.pdf", RUSSIAN, pages, "Cyrillic: English reads look-alikes")


def german_scan(directory: Path, pages: int = 1) -> Fixture:
    """Minutes in German, read with `deu`."""
    return _scan(directory / "german-scan.pdf", GERMAN, pages, "Latin with umlauts and ß")


# tesseract language -> the builder of a scan in it
SCANS: dict[str, Callable[[Path], Fixture]] = {"rus": russian_scan, "deu": german_scan}


def page_texts(sentences: Sequence[str], pages: int) -> list[str]:
    """Every sentence once per page, each page starting one sentence further on, in
    paragraphs of three: page n is the text as it is drawn (wrapped where the page wraps it)."""
    texts = []
    for page in range(pages):
        turned = [*sentences[page:], *sentences[:page]]
        paragraphs = [
            " ".join(turned[i : i + SENTENCES_PER_PARAGRAPH])
            for i in range(0, len(turned), SENTENCES_PER_PARAGRAPH)
        ]
        texts.append("\n\n".join(paragraphs))
    return texts


def _scan(path: Path, sentences: Sequence[str], pages: int, note: str) -> Fixture:
    texts = page_texts(sentences, pages)
    images = [render_scan(text) for text in texts]
    path.parent.mkdir(parents=True, exist_ok=True)
    # Fixed dates: Pillow writes the time of the save, and the fixture is compared byte for byte.
    fixed = time.gmtime(0)
    images[0].save(
        path,
        "PDF",
        resolution=DPI,
        save_all=True,
        append_images=images[1:],
        creationDate=fixed,
        modDate=fixed,
    )
    return Fixture(path.stem, path, tuple(wrapped(text) for text in texts), note)
