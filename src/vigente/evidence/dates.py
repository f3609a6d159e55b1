"""Dates as people write them, in English and Italian: render for a reader, find in a text.

Citations print dates in the reader's language ("3 March 2025", "1° marzo 2025"); the extractor
and the answer check must find dates however a document or a model wrote them — full dates
("3 March 2025", "March 3, 2025", "03/03/2025", "2025-03-03") and partial ones ("1 October",
"dal 1° ottobre", "February 2025"). A text that looks like a date but is not one
("31 febbraio 2025") is found *with a problem*, never silently skipped and never a crash.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass
from typing import Literal

from vigente.errors import InvalidTime
from vigente.evidence.errors import UnsupportedLanguage
from vigente.time import Instant

__all__ = [
    "LANGUAGES",
    "DateMention",
    "Language",
    "check_language",
    "find_dates",
    "format_date",
    "parse_date",
]

Language = Literal["en", "it"]
LANGUAGES: tuple[Language, ...] = ("en", "it")

_MONTHS: dict[Language, tuple[str, ...]] = {
    "en": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    "it": (
        "gennaio",
        "febbraio",
        "marzo",
        "aprile",
        "maggio",
        "giugno",
        "luglio",
        "agosto",
        "settembre",
        "ottobre",
        "novembre",
        "dicembre",
    ),
}
_ABBREVIATIONS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
    "gen": 1,
    "mag": 5,
    "giu": 6,
    "lug": 7,
    "ago": 8,
    "set": 9,
    "sett": 9,
    "ott": 10,
    "dic": 12,
}
_FULL_NAMES = {name.lower(): i + 1 for names in _MONTHS.values() for i, name in enumerate(names)}
_MONTH_NUMBER = {**_ABBREVIATIONS, **_FULL_NAMES}


def _alternation(names: list[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


_ANY_MONTH = rf"(?:{_alternation(list(_FULL_NAMES))}|(?:{_alternation(list(_ABBREVIATIONS))})\.?)"
_FULL_MONTH = rf"(?:{_alternation(list(_FULL_NAMES))})"
_ORDINAL = r"(?:°|º|\s?st|\s?nd|\s?rd|\s?th)?"
_DAY = r"(?P<day>\d{1,2})"
_YEAR = r"(?P<year>\d{4})"

# Full dates first (they win over the partial forms that overlap them).
_FULL_PATTERNS = (
    ("iso", re.compile(r"(?<![\d/.-])(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?![\d])")),
    (
        "numeric",
        re.compile(
            r"(?<![\d/.-])(?P<day>\d{1,2})(?P<sep>[/.-])(?P<month>\d{1,2})(?P=sep)"
            r"(?P<year>\d{4})(?![\d/])"
        ),
    ),
    (
        "day_month_year",
        re.compile(
            rf"(?<![\w]){_DAY}{_ORDINAL}\s+(?:of\s+|di\s+)?(?P<month>{_ANY_MONTH})"
            rf",?\s+{_YEAR}(?!\d)",
            re.IGNORECASE,
        ),
    ),
    (
        "month_day_year",
        re.compile(
            rf"(?<![\w])(?P<month>{_ANY_MONTH})\s+{_DAY}{_ORDINAL},?\s+{_YEAR}(?!\d)",
            re.IGNORECASE,
        ),
    ),
)
_PARTIAL_PATTERNS = (
    (
        "day_month",
        re.compile(
            rf"(?<![\w]){_DAY}{_ORDINAL}\s+(?:of\s+|di\s+)?(?P<month>{_FULL_MONTH})(?![\w])",
            re.IGNORECASE,
        ),
    ),
    (
        "month_day",
        re.compile(rf"(?<![\w])(?P<month>{_FULL_MONTH})\s+{_DAY}{_ORDINAL}(?![\w])", re.IGNORECASE),
    ),
    (
        "month_year",
        re.compile(rf"(?<![\w])(?P<month>{_FULL_MONTH}),?\s+{_YEAR}(?!\d)", re.IGNORECASE),
    ),
)


def check_language(language: str) -> Language:
    """Return ``language`` if vigente can render and read it, else raise."""
    if language == "en":
        return "en"
    if language == "it":
        return "it"
    raise UnsupportedLanguage(
        f"language {language!r} is not supported: use one of {', '.join(LANGUAGES)}"
    )


def _as_date(value: _dt.date | Instant) -> _dt.date:
    if isinstance(value, Instant):
        return value.date
    if isinstance(value, _dt.datetime):
        return value.date()
    return value


def format_date(value: _dt.date | Instant, language: str = "en") -> str:
    """The date as a reader writes it: ``3 March 2025`` / ``3 marzo 2025``, ``1° marzo 2025``."""
    lang = check_language(language)
    d = _as_date(value)
    month = _MONTHS[lang][d.month - 1]
    day = "1°" if lang == "it" and d.day == 1 else str(d.day)
    return f"{day} {month} {d.year}"


@dataclass(frozen=True, slots=True)
class DateMention:
    """A date (or part of one) written in a text, where, and why it is unusable if it is.

    ``year``, ``month`` and ``day`` are ``None`` for the parts the text leaves out ("1 October"
    has no year). ``problem`` is set when the text has the shape of a date but names no real
    day ("31 febbraio 2025"); ``ambiguous`` when ``03/04/2025`` could be read either way (it is
    read day first, as in Italian and European English).
    """

    text: str
    start: int
    end: int
    year: int | None
    month: int | None
    day: int | None
    problem: str | None = None
    ambiguous: bool = False

    @property
    def complete(self) -> bool:
        return self.year is not None and self.month is not None and self.day is not None

    @property
    def date(self) -> _dt.date | None:
        """The calendar day, when the mention names a whole, real one."""
        if self.problem is not None or not self.complete:
            return None
        assert self.year is not None and self.month is not None and self.day is not None
        return _dt.date(self.year, self.month, self.day)

    def matches(self, day: _dt.date | Instant) -> bool:
        """True when every part the mention states agrees with ``day`` ("1 October" matches
        2026-10-01; "October 2026" matches every day of that month)."""
        if self.problem is not None:
            return False
        d = _as_date(day)
        return (
            (self.year is None or self.year == d.year)
            and (self.month is None or self.month == d.month)
            and (self.day is None or self.day == d.day)
        )


def _problem(year: int | None, month: int | None, day: int | None) -> str | None:
    if month is not None and not 1 <= month <= 12:
        return f"there is no month {month}"
    if year is not None and not 1 <= year <= 9999:
        return f"year {year} is out of range"
    if day is not None:
        if day < 1:
            return "there is no day 0"
        if month is not None:
            last = calendar.monthrange(year if year is not None else 2000, month)[1]
            if day > last:
                name = _MONTHS["en"][month - 1]
                where = f"{name} {year}" if year is not None else name
                return f"{where} has {last} days, not {day}"
        elif day > 31:
            return f"there is no day {day}"
    return None


def _mention(kind: str, match: re.Match[str]) -> DateMention:
    groups = match.groupdict()
    raw_month = groups.get("month")
    month: int | None
    if raw_month is None:
        month = None
    elif raw_month.isdigit():
        month = int(raw_month)
    else:
        month = _MONTH_NUMBER[raw_month.lower().rstrip(".")]
    day = int(groups["day"]) if groups.get("day") else None
    year = int(groups["year"]) if groups.get("year") else None
    ambiguous = False
    if kind == "numeric" and day is not None and month is not None:
        if month > 12 and day <= 12:  # only a month-first reading names a real day
            day, month = month, day
        elif day <= 12 and month <= 12 and day != month:
            ambiguous = True
    return DateMention(
        text=match.group(0),
        start=match.start(),
        end=match.end(),
        year=year,
        month=month,
        day=day,
        problem=_problem(year, month, day),
        ambiguous=ambiguous,
    )


def find_dates(text: str, *, partial: bool = True) -> list[DateMention]:
    """Every date written in ``text``, in order; full dates win over partial ones they contain.

    With ``partial=False`` only full dates (day, month and year) are returned.
    """
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    patterns = _FULL_PATTERNS + (_PARTIAL_PATTERNS if partial else ())
    for kind, pattern in patterns:
        for match in pattern.finditer(text):
            if free(match.start(), match.end()):
                found.append(_mention(kind, match))
                taken.append((match.start(), match.end()))
    return sorted(found, key=lambda m: m.start)


def parse_date(text: str) -> _dt.date:
    """Read one whole date written in any supported form; raise :class:`InvalidTime` if the
    text is not exactly one real calendar day."""
    if not isinstance(text, str):
        raise InvalidTime(f"expected a date as text, got {type(text).__name__}")
    stripped = text.strip()
    mentions = find_dates(stripped)
    whole = [m for m in mentions if m.start == 0 and m.end == len(stripped)]
    if not whole:
        raise InvalidTime(
            f"{stripped[:64]!r} is not a date vigente can read: write it as 3 March 2025, "
            "3 marzo 2025, 03/03/2025 or 2025-03-03"
        )
    mention = whole[0]
    if mention.problem is not None:
        raise InvalidTime(
            f"{stripped!r} is not a calendar date ({mention.problem}): check the day and month"
        )
    if mention.date is None:
        raise InvalidTime(
            f"{stripped!r} is only part of a date: give the day, the month and the year"
        )
    return mention.date
