"""Time expressions of a recall query, read against the time it is asked at.

"what did I say in May", "last week", "yesterday", "3 days ago", "on 12 March 2026",
"in 2025", "before the move", "after my trip to Rome". A calendar phrase becomes a window of
knowledge time (UTC days), read relative to the recall's ``known_at`` — never the wall clock,
so the same query as known at ``k`` always reads the same window. A phrase anchored on an
event ("before the move") names the event's words; the recall finds when that was said and
takes the window before or after it. The phrase is removed from the words that are matched, so
"May" does not compete with the topic.

A month or weekday alone is the latest one on or before ``known_at`` ("in May" asked in
March 2027 is May 2026). A window only raises the records inside it; it never hides the rest.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass

from vigente.evidence.dates import find_dates
from vigente.time import Instant

__all__ = ["TimeWindow", "time_window"]

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4,
             "saturday": 5, "sunday": 6}
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3}
_NUMBER = r"(?P<n>\d{1,3}|a couple of|a few|an|a|one|two|three|four|five|six|seven|eight|nine|ten)"

_TODAY = re.compile(r"\b(?:earlier\s+)?(?:today|this\s+(?:morning|afternoon|evening))\b", re.I)
_YESTERDAY = re.compile(r"\byesterday\b", re.I)
_LAST_UNIT = re.compile(r"\b(?:last|past|previous)\s+(?P<unit>day|week|month|year)\b", re.I)
_THIS_UNIT = re.compile(r"\bthis\s+(?P<unit>week|month|year)\b", re.I)
_AGO = re.compile(rf"\b{_NUMBER}\s+(?P<unit>day|week|month|year)s?\s+ago\b", re.I)
_IN_LAST = re.compile(rf"\b(?:in|over|during)\s+the\s+(?:last|past)\s+{_NUMBER}\s+"
                      r"(?P<unit>day|week|month|year)s?\b", re.I)
_WEEKDAY = re.compile(rf"\b(?:on\s+|last\s+)?(?P<day>{'|'.join(_WEEKDAYS)})\b", re.I)
_MONTH = re.compile(rf"\b(?:in|during|back\s+in|since|last)\s+(?P<month>{'|'.join(_MONTHS)})"
                    r"(?:,?\s+(?P<year>\d{4}))?\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|back\s+in)\s+(?P<year>(?:19|20)\d\d)\b", re.I)
_STOP_EVENT = r"(?:where|what|when|who|which|how|did|do|does|is|was|were|and|but|i|you|we)\b"
_ANCHOR = re.compile(r"\b(?P<side>before|after|since)\s+(?P<event>(?:the|my|our|your|his|her|"
                     rf"their|that)\s+\w+(?:[ '\-]+(?!{_STOP_EVENT})\w+){{0,3}})", re.I)
_CUE_BEFORE = re.compile(r"(?:\b(?:on|before|after|since|from)\s+)$", re.I)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """When a query asks about: ``[start, end]`` in microseconds (None: open), the phrase
    that said it, the query without it, and an event to anchor on (``before``/``after``
    ``event``: the window is found by the recall)."""

    start: int | None
    end: int | None
    phrase: str
    text: str
    side: str | None = None
    event: str | None = None

    def holds(self, micros: int) -> bool:
        return ((self.start is None or micros >= self.start)
                and (self.end is None or micros <= self.end))

    def describe(self) -> str:
        if self.event is not None:
            return f"{self.phrase!r}: records {self.side} {self.event!r} was said"
        start = "…" if self.start is None else Instant(self.start).isoformat()
        end = "…" if self.end is None else Instant(self.end).isoformat()
        return f"{self.phrase!r} read as {start} to {end}"


def _day_start(day: _dt.date) -> int:
    return Instant.from_datetime(_dt.datetime(day.year, day.month, day.day,
                                              tzinfo=_dt.UTC)).micros


def _days(first: _dt.date, last: _dt.date) -> tuple[int, int]:
    return _day_start(first), _day_start(last + _dt.timedelta(days=1)) - 1


def _number(text: str) -> int:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _NUMBERS[text]


def _month_days(year: int, month: int) -> tuple[_dt.date, _dt.date]:
    return _dt.date(year, month, 1), _dt.date(year, month, calendar.monthrange(year, month)[1])


def _window(match: re.Match[str], today: _dt.date) -> tuple[_dt.date, _dt.date] | None:
    pattern = match.re
    if pattern is _TODAY:
        return today, today
    if pattern is _YESTERDAY:
        day = today - _dt.timedelta(days=1)
        return day, day
    if pattern is _LAST_UNIT:
        unit = match["unit"].lower()
        if unit == "day":
            return today - _dt.timedelta(days=1), today
        if unit == "week":  # the previous calendar week and this one so far
            return today - _dt.timedelta(days=today.weekday() + 7), today
        if unit == "month":
            first = (today.replace(day=1) - _dt.timedelta(days=1)).replace(day=1)
            return first, today
        return _dt.date(today.year - 1, 1, 1), today
    if pattern is _THIS_UNIT:
        unit = match["unit"].lower()
        if unit == "week":
            return today - _dt.timedelta(days=today.weekday()), today
        if unit == "month":
            return today.replace(day=1), today
        return _dt.date(today.year, 1, 1), today
    if pattern is _AGO:
        days = _number(match["n"]) * _UNITS[match["unit"].lower()]
        spread = max(1, _UNITS[match["unit"].lower()] // 2)
        center = today - _dt.timedelta(days=days)
        return center - _dt.timedelta(days=spread), min(today, center + _dt.timedelta(days=spread))
    if pattern is _IN_LAST:
        days = _number(match["n"]) * _UNITS[match["unit"].lower()]
        return today - _dt.timedelta(days=days), today
    if pattern is _WEEKDAY:
        back = (today.weekday() - _WEEKDAYS[match["day"].lower()]) % 7 or 7
        day = today - _dt.timedelta(days=back)
        return day, day
    if pattern is _MONTH:
        month = _MONTHS[match["month"].lower()]
        if match["year"]:
            return _month_days(int(match["year"]), month)
        year = today.year if month <= today.month else today.year - 1
        first, last = _month_days(year, month)
        return (first, today) if match.group(0).lower().startswith("since") else (first, last)
    if pattern is _YEAR:
        year = int(match["year"])
        return _dt.date(year, 1, 1), _dt.date(year, 12, 31)
    return None


def _without(text: str, start: int, end: int) -> str:
    return " ".join((text[:start] + " " + text[end:]).split())


def time_window(query: str, asked_at: Instant) -> TimeWindow | None:
    """The window of knowledge time ``query`` asks about, read at ``asked_at``; ``None`` when
    it names no time. The first phrase found wins (a query rarely names two)."""
    today = asked_at.datetime.astimezone(_dt.UTC).date()
    for mention in find_dates(query, partial=False):
        if mention.problem is None and mention.date is not None:
            first, last = _days(mention.date, mention.date)
            start: int | None = first
            end: int | None = last
            before = query[:mention.start].rstrip().lower()
            if before.endswith("before"):
                start, end = None, first - 1
            elif before.endswith(("after", "since")):
                start, end = last + 1, None
            cue = _CUE_BEFORE.search(query[:mention.start])
            begin = mention.start if cue is None else cue.start()
            return TimeWindow(start, end, query[begin:mention.end],
                              _without(query, begin, mention.end))
    for pattern in (_TODAY, _YESTERDAY, _IN_LAST, _AGO, _LAST_UNIT, _THIS_UNIT, _MONTH, _YEAR,
                    _WEEKDAY):
        match = pattern.search(query)
        if match is None:
            continue
        days = _window(match, today)
        if days is None:
            continue
        first, last = _days(*days)
        return TimeWindow(first, min(last, asked_at.micros), match.group(0),
                          _without(query, match.start(), match.end()))
    anchor = _ANCHOR.search(query)
    if anchor is not None:
        side = "before" if anchor["side"].lower() == "before" else "after"
        return TimeWindow(None, None, anchor.group(0),
                          _without(query, anchor.start(), anchor.end()), side,
                          anchor["event"].strip())
    return None
