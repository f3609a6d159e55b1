"""The date a question is about, when the question says it.

"as of 2015", "on 2 September 2026", "in vigore al 3 marzo 2025", "seisuga 1. jaanuar 2020",
"2015. aastal". Full dates are read with :func:`vigente.evidence.dates.find_dates` (English and
Italian forms, ISO and numeric) plus Estonian month names; a month or a year alone needs a cue
word ("as of", "in", "nel", "al", "seisuga" …) so that "Law 2015/3" is not read as a date.

A period stands for its last day: "as of 2015" asks about the state at the end of 2015, "in
March 2025" about 31 March 2025. The phrase is removed from the text used for matching, so the
date words do not compete with the topic words.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass

from vigente.errors import InvalidInput
from vigente.evidence.dates import find_dates
from vigente.time import Instant, calendar_day

__all__ = ["QueryDate", "date_from_query"]

_ET_MONTHS = {
    "jaanuar": 1, "veebruar": 2, "märts": 3, "aprill": 4, "mai": 5, "juuni": 6, "juuli": 7,
    "august": 8, "september": 9, "oktoober": 10, "november": 11, "detsember": 12,
}
_EN_IT_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "gennaio": 1, "febbraio": 2, "marzo": 3, "aprile": 4, "maggio": 5, "giugno": 6,
    "luglio": 7, "agosto": 8, "settembre": 9, "ottobre": 10, "dicembre": 12,
}
_CUE = (
    r"as\s+of|as\s+at|as\s+on|in|on|at|by|during|since|until|for|"
    r"in\s+vigore\s+(?:al|il|nel|dal)|alla\s+data\s+del|al|il|nel|del|dal|entro|"
    r"seisuga|kehtiv|kuni"
)
_ET_FULL = re.compile(
    rf"(?<![\w])(?P<day>\d{{1,2}})\.\s*(?P<month>{'|'.join(_ET_MONTHS)})\s+(?P<year>\d{{4}})"
    r"(?:\.\s*a\.?)?(?!\d)",
    re.IGNORECASE,
)
_MONTH_YEAR = re.compile(
    rf"(?<![\w])(?:(?:{_CUE})\s+)?(?P<month>{'|'.join([*_EN_IT_MONTHS, *_ET_MONTHS])})"
    r",?\s+(?P<year>\d{4})(?!\d)",
    re.IGNORECASE,
)
_YEAR_CUED = re.compile(
    rf"(?<![\w])(?:{_CUE})\s+(?:the\s+(?:end\s+of\s+)?|l'anno\s+|anno\s+)?"
    r"(?P<year>1[5-9]\d\d|2[01]\d\d)(?![\d/.-])",
    re.IGNORECASE,
)
_YEAR_ET = re.compile(r"(?<![\w])(?P<year>1[5-9]\d\d|2[01]\d\d)\.\s*aasta(?:l|s|ks)?(?![\w])",
                      re.IGNORECASE)
_LEADING_CUE = re.compile(rf"(?:(?<=\s)|^)(?:{_CUE})\s+$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class QueryDate:
    """A date found in a question: the day it stands for, the words that said it, and the
    question without them."""

    valid_at: Instant
    phrase: str
    text: str
    granularity: str  # "day" | "month" | "year"


def _last_day(phrase: str, year: int, month: int | None) -> _dt.date:
    """The last day of ``year`` (or of its ``month``); a year outside the calendar's 1 to 9999
    ("December 0000") is refused, naming the ``phrase`` that said it."""
    day = calendar_day(year, 12 if month is None else month)
    if day is None:
        raise InvalidInput(
            f"the question names {phrase!r}, which is not in the years 1 to 9999: correct it "
            "or give the date with valid_at"
        )
    return day.replace(day=calendar.monthrange(year, day.month)[1])


def _without(text: str, start: int, end: int) -> tuple[str, str]:
    """``text`` without ``[start, end)`` and a cue word right before it."""
    before = text[:start]
    cue = _LEADING_CUE.search(before)
    if cue is not None:
        start = cue.start()
    phrase = text[start:end].strip()
    rest = " ".join((text[:start] + " " + text[end:]).split())
    return phrase, rest.strip(" ,;:?") + ("?" if text.rstrip().endswith("?") else "")


def date_from_query(text: str) -> QueryDate | None:
    """The date ``text`` asks about, or ``None`` when it names none.

    Raises :class:`InvalidInput` when it names a date that does not exist ("31 febbraio
    2025") or several different ones (say which with ``valid_at``).
    """
    found: list[tuple[int, int, _dt.date, str]] = []

    def taken(start: int, end: int) -> bool:
        return any(start < e and end > s for s, e, _, _ in found)

    for mention in find_dates(text, partial=False):
        if mention.problem is not None:
            raise InvalidInput(
                f"the question names {mention.text!r}, which is not a calendar date "
                f"({mention.problem}): correct it or give the date with valid_at"
            )
        assert mention.date is not None
        found.append((mention.start, mention.end, mention.date, "day"))
    for match in _ET_FULL.finditer(text):
        if taken(match.start(), match.end()):
            continue
        day = calendar_day(int(match["year"]), _ET_MONTHS[match["month"].lower()],
                           int(match["day"]))
        if day is None:
            raise InvalidInput(
                f"the question names {match.group(0)!r}, which is not a calendar date (a real "
                "day of the years 1 to 9999): correct it or give the date with valid_at"
            )
        found.append((match.start(), match.end(), day, "day"))
    for match in _MONTH_YEAR.finditer(text):
        start = match.start("month")
        if taken(start, match.end()):
            continue
        month = {**_EN_IT_MONTHS, **_ET_MONTHS}[match["month"].lower()]
        found.append((start, match.end(), _last_day(match.group(0), int(match["year"]), month),
                      "month"))
    for pattern in (_YEAR_CUED, _YEAR_ET):
        for match in pattern.finditer(text):
            start = match.start("year") if pattern is _YEAR_CUED else match.start()
            if taken(start, match.end()):
                continue
            found.append((start, match.end(), _last_day(match.group(0), int(match["year"]), None),
                          "year"))
    if not found:
        return None
    days = {day for _, _, day, _ in found}
    if len(days) > 1:
        listed = ", ".join(text[s:e] for s, e, _, _ in sorted(found))
        raise InvalidInput(
            f"the question names several dates ({listed}): give the one it is about with "
            "valid_at (--at)"
        )
    start, end, day, granularity = min(found)
    phrase, rest = _without(text, start, end)
    return QueryDate(Instant.from_date(day), phrase, rest or text, granularity)
