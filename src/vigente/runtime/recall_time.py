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

import datetime as _dt
import re
from dataclasses import dataclass

from vigente.evidence.dates import find_dates
from vigente.time import Instant, clamp_micros, day_number, day_span_micros

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
    ``event``: the window is found by the recall). ``outside`` says why a phrase names no
    time the calendar holds ("in May" asked in March of year 1): the recall then ranks
    without a window, and says so."""

    start: int | None
    end: int | None
    phrase: str
    text: str
    side: str | None = None
    event: str | None = None
    outside: str | None = None

    def holds(self, micros: int) -> bool:
        return ((self.start is None or micros >= self.start)
                and (self.end is None or micros <= self.end))

    def describe(self) -> str:
        if self.outside is not None:
            return (f"{self.phrase!r} names no day within the years 1 to 9999 "
                    f"({self.outside}): ranked without a time window")
        if self.event is not None:
            return f"{self.phrase!r}: records {self.side} {self.event!r} was said"
        # an anchored window may start a microsecond past the calendar's edge: print the edge
        start = "…" if self.start is None else Instant(clamp_micros(self.start)).isoformat()
        end = "…" if self.end is None else Instant(clamp_micros(self.end)).isoformat()
        return f"{self.phrase!r} read as {start} to {end}"


# Windows are computed on day numbers (vigente.time.day_number) that may fall outside the
# years 1 to 9999 ("last week" asked on 0001-01-03), then cut to the calendar: a window partly
# outside it keeps its inside, one wholly outside names no day.
_FIRST_DAY = _dt.date.min.toordinal()
_LAST_DAY = _dt.date.max.toordinal()
_Days = tuple[int, int]


def _month_days(year: int, month: int) -> _Days:
    return day_number(year, month), day_number(year, month + 1) - 1


def _number(text: str) -> int:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _NUMBERS[text]


def _window(match: re.Match[str], today: _dt.date) -> _Days:
    """The first and last day (day numbers, maybe outside the calendar) ``match`` names."""
    pattern = match.re
    now = today.toordinal()
    if pattern is _TODAY:
        return now, now
    if pattern is _YESTERDAY:
        return now - 1, now - 1
    if pattern is _LAST_UNIT:
        unit = match["unit"].lower()
        if unit == "day":
            return now - 1, now
        if unit == "week":  # the previous calendar week and this one so far
            return now - today.weekday() - 7, now
        if unit == "month":
            year, month = (today.year, today.month - 1) if today.month > 1 else (
                today.year - 1, 12)
            return day_number(year, month), now
        return day_number(today.year - 1, 1), now
    if pattern is _THIS_UNIT:
        unit = match["unit"].lower()
        if unit == "week":
            return now - today.weekday(), now
        if unit == "month":
            return day_number(today.year, today.month), now
        return day_number(today.year, 1), now
    if pattern is _AGO:
        days = _number(match["n"]) * _UNITS[match["unit"].lower()]
        spread = max(1, _UNITS[match["unit"].lower()] // 2)
        center = now - days
        return center - spread, min(now, center + spread)
    if pattern is _IN_LAST:
        return now - _number(match["n"]) * _UNITS[match["unit"].lower()], now
    if pattern is _WEEKDAY:
        back = (today.weekday() - _WEEKDAYS[match["day"].lower()]) % 7 or 7
        return now - back, now - back
    if pattern is _MONTH:
        month = _MONTHS[match["month"].lower()]
        if match["year"]:
            return _month_days(int(match["year"]), month)
        year = today.year if month <= today.month else today.year - 1
        first, last = _month_days(year, month)
        return (first, now) if match.group(0).lower().startswith("since") else (first, last)
    assert pattern is _YEAR
    year = int(match["year"])
    return day_number(year, 1), day_number(year, 12, 31)


def _edge(days: _Days) -> str:
    """Which edge of the calendar a window wholly outside it lies beyond."""
    return "it ends before 0001-01-01" if days[1] < _FIRST_DAY else (
        "it starts after 9999-12-31")


def _without(text: str, start: int, end: int) -> str:
    return " ".join((text[:start] + " " + text[end:]).split())


def time_window(query: str, asked_at: Instant) -> TimeWindow | None:
    """The window of knowledge time ``query`` asks about, read at ``asked_at``; ``None`` when
    it names no time. The first phrase found wins (a query rarely names two). A phrase whose
    window lies wholly outside the years 1 to 9999 ("after 31 December 9999", "last Monday"
    asked on 0001-01-01) gives a window with ``outside`` set, which raises no record."""
    today = asked_at.datetime.astimezone(_dt.UTC).date()
    for mention in find_dates(query, partial=False):
        if mention.problem is None and mention.date is not None:
            day = mention.date.toordinal()
            days = (day, day)
            before = query[:mention.start].rstrip().lower()
            if before.endswith("before"):
                days = (_FIRST_DAY - 1, day - 1)
            elif before.endswith(("after", "since")):
                days = (day + 1, _LAST_DAY + 1)
            cue = _CUE_BEFORE.search(query[:mention.start])
            begin = mention.start if cue is None else cue.start()
            phrase, text = query[begin:mention.end], _without(query, begin, mention.end)
            span = day_span_micros(*days)
            if span is None:
                return TimeWindow(None, None, phrase, text, outside=_edge(days))
            # an open side stays open: "before 3 March 2025" reaches back to the first record
            return TimeWindow(None if days[0] < _FIRST_DAY else span[0],
                              None if days[1] > _LAST_DAY else span[1], phrase, text)
    for pattern in (_TODAY, _YESTERDAY, _IN_LAST, _AGO, _LAST_UNIT, _THIS_UNIT, _MONTH, _YEAR,
                    _WEEKDAY):
        match = pattern.search(query)
        if match is None:
            continue
        phrase = match.group(0)
        text = _without(query, match.start(), match.end())
        days = _window(match, today)
        span = day_span_micros(*days)
        if span is None:
            return TimeWindow(None, None, phrase, text,
                              outside=f"as known at {asked_at.isoformat()}, {_edge(days)}")
        return TimeWindow(span[0], min(span[1], asked_at.micros), phrase, text)
    anchor = _ANCHOR.search(query)
    if anchor is not None:
        side = "before" if anchor["side"].lower() == "before" else "after"
        return TimeWindow(None, None, anchor.group(0),
                          _without(query, anchor.start(), anchor.end()), side,
                          anchor["event"].strip())
    return None
