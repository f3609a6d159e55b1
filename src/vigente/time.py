"""Instants and half-open intervals on either time axis.

An :class:`Instant` is a point in UTC at microsecond precision that remembers whether it was
given as a calendar date (``YYYY-MM-DD``, midnight UTC) or as a timestamp, so that answers print
it back the way it was given and compare "today" at day precision. Intervals are half-open:
``[start, end)``, with ``end=None`` for an open end (no 9999 sentinel in the API).

Calendar arithmetic (a day before, a week back, the last day of a month) goes through the
helpers at the end of this module, which stay inside the years 1 to 9999: ``datetime`` raises
``OverflowError`` one day past them, and a date a user writes or a clock near year 1 must never
turn into a crash.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from vigente.errors import ClockAheadError, InvalidInterval, InvalidTime

__all__ = [
    "CLOCK_SKEW_SECONDS",
    "MAX_MICROS",
    "MIN_MICROS",
    "Instant",
    "Interval",
    "TimeLike",
    "calendar_day",
    "check_not_ahead",
    "clamp_micros",
    "current_instant",
    "day_end_micros",
    "day_number",
    "day_span_micros",
    "day_start_micros",
    "shift_days",
    "parse_instant",
    "to_instant",
    "today",
]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MICROS_PER_DAY = 86_400_000_000
# Dates print in every statement and JSON answer, and a store holds few distinct ones: their
# text is kept (a bounded cache, emptied when full).
_DATE_TEXTS: dict[int, str] = {}
_DATE_TEXTS_LIMIT = 1 << 16
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
# RFC 3339: date, "T" or space, time, optional fraction, then "Z" or a numeric offset.
_TIMESTAMP_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?"
)
#: The instants every surface can print and every store can read back: years 1 to 9999 in
#: UTC. A timestamp inside them in its own offset may fall outside them in UTC
#: (9999-12-31T23:59:59-14:00 is in the year 10000): it is refused when parsed.
MIN_MICROS = (_dt.datetime(1, 1, 1, tzinfo=_dt.UTC) - _EPOCH) // _dt.timedelta(microseconds=1)
MAX_MICROS = (
    _dt.datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=_dt.UTC) - _EPOCH
) // _dt.timedelta(microseconds=1)


@dataclass(frozen=True, eq=False, slots=True)
class Instant:
    """A point in time, in microseconds since 1970-01-01T00:00:00Z.

    ``is_date`` records that the instant was given as a calendar date; it changes how the
    instant is printed and how it compares with "now" (at day precision), never its position.
    """

    micros: int
    is_date: bool = False

    @classmethod
    def from_datetime(cls, value: _dt.datetime) -> Instant:
        if value.tzinfo is None or value.utcoffset() is None:
            raise InvalidTime(
                f"naive timestamp {value.isoformat()!r}: give an offset such as 'Z' or '+02:00'"
            )
        delta = value - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        if not MIN_MICROS <= micros <= MAX_MICROS:
            raise InvalidTime(
                f"{value.isoformat()!r} falls outside the years 1 to 9999 in UTC: give a "
                "moment inside them (for an open end, leave the end out)"
            )
        return cls(micros)

    @classmethod
    def from_date(cls, value: _dt.date) -> Instant:
        return cls((value - _EPOCH.date()).days * _MICROS_PER_DAY, is_date=True)

    @property
    def datetime(self) -> _dt.datetime:
        return _EPOCH + _dt.timedelta(microseconds=self.micros)

    @property
    def date(self) -> _dt.date:
        return self.datetime.date()

    @property
    def day(self) -> int:
        """Days since the epoch (floor), for comparisons at day precision."""
        return self.micros // _MICROS_PER_DAY

    def isoformat(self) -> str:
        """``YYYY-MM-DD`` when given as a date, else RFC 3339 in UTC with a ``Z``."""
        if self.is_date:
            text = _DATE_TEXTS.get(self.micros)
            if text is None:
                if len(_DATE_TEXTS) >= _DATE_TEXTS_LIMIT:
                    _DATE_TEXTS.clear()
                text = _DATE_TEXTS[self.micros] = self.date.isoformat()
            return text
        moment = self.datetime.replace(tzinfo=None)
        spec = "microseconds" if moment.microsecond else "seconds"
        return moment.isoformat(timespec=spec) + "Z"

    def same_moment(self, other: Instant) -> bool:
        """Equal at the coarser of the two precisions: a date equals any instant on that day."""
        if self.is_date or other.is_date:
            return self.day == other.day
        return self.micros == other.micros

    def __str__(self) -> str:
        return self.isoformat()

    def __repr__(self) -> str:
        return f"Instant({self.isoformat()!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instant):
            return NotImplemented
        return self.micros == other.micros

    # The four orderings written out (not functools.total_ordering, which derives three of
    # them through an extra call): instants are compared on every row of every lookup.
    def __lt__(self, other: Instant) -> bool:
        return self.micros < other.micros

    def __le__(self, other: Instant) -> bool:
        return self.micros <= other.micros

    def __gt__(self, other: Instant) -> bool:
        return self.micros > other.micros

    def __ge__(self, other: Instant) -> bool:
        return self.micros >= other.micros

    def __hash__(self) -> int:
        return hash(self.micros)


TimeLike = Instant | _dt.datetime | _dt.date | str


def parse_instant(text: str, *, default_zone: str | None = None) -> Instant:
    """Parse ``YYYY-MM-DD`` (midnight UTC) or an RFC 3339 timestamp with an offset.

    A timestamp without an offset is refused unless ``default_zone`` (an IANA zone name such as
    ``"Europe/Rome"``) says how to read it.
    """
    if not isinstance(text, str):
        raise InvalidTime(f"expected a date string, got {type(text).__name__}")
    if text != text.strip():
        raise InvalidTime(
            f"{text[:64]!r} has spaces or a line break around it: send the date alone, "
            "e.g. 2026-09-01"
        )
    if _DATE_RE.fullmatch(text):
        try:
            return Instant.from_date(_dt.date.fromisoformat(text))
        except ValueError:
            raise InvalidTime(f"{text!r} is not a calendar date: use YYYY-MM-DD") from None
    match = _TIMESTAMP_RE.fullmatch(text)
    if not match:
        raise InvalidTime(
            f"{text[:64]!r} is not a date: use YYYY-MM-DD or an RFC 3339 timestamp with an "
            "offset, e.g. 2026-09-01T08:00:00Z"
        )
    fraction = match.group(1)
    if fraction and len(fraction) > 7:  # more than microseconds: truncate to the stored precision
        text = text.replace(fraction, fraction[:7], 1)
    try:
        value = _dt.datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise InvalidTime(f"{text!r} is not a valid timestamp") from None
    if value.tzinfo is None:
        if default_zone is None:
            raise InvalidTime(
                f"naive timestamp {text!r}: add an offset such as 'Z' or '+02:00', "
                "or set a default zone"
            )
        try:
            value = value.replace(tzinfo=ZoneInfo(default_zone))
        except (ZoneInfoNotFoundError, ValueError):
            raise InvalidTime(f"unknown time zone {default_zone!r}: use an IANA name") from None
    return Instant.from_datetime(value)


def to_instant(value: TimeLike, *, default_zone: str | None = None) -> Instant:
    """Accept an :class:`Instant`, an aware ``datetime``, a ``date`` or a string."""
    if isinstance(value, Instant):
        return value
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None and default_zone is not None:
            value = value.replace(tzinfo=ZoneInfo(default_zone))
        return Instant.from_datetime(value)
    if isinstance(value, _dt.date):
        return Instant.from_date(value)
    return parse_instant(value, default_zone=default_zone)


def current_instant() -> Instant:
    """The current moment in UTC (what "as known now" means when no date is given)."""
    return Instant.from_datetime(_dt.datetime.now(_dt.UTC))


#: How far a caller's clock may run ahead of the store's (:func:`check_not_ahead`): hosts whose
#: clocks are kept by NTP agree to well under a second; a few seconds more absorb a slow request.
CLOCK_SKEW_SECONDS = 5
_CLOCK_SKEW_MICROS = CLOCK_SKEW_SECONDS * 1_000_000


def check_not_ahead(value: Instant, what: str, clock: Instant | None = None) -> Instant:
    """``value`` when it is not after the store's clock (``clock``, default this moment) by more
    than :data:`CLOCK_SKEW_SECONDS`; else :class:`ClockAheadError`, naming ``what``. A date
    compares at day precision: today is never ahead.

    Every moment a caller gives as its present or as a knowledge time passes here: a future
    ``now`` would date writes after every later real one (freezing a lineage), and a future
    ``known_at`` would fix the answered horizon beyond the clock."""
    current = current_instant() if clock is None else clock
    if value.micros - current.micros <= _CLOCK_SKEW_MICROS or value.same_moment(current):
        return value
    raise ClockAheadError(
        f"{what} {value} is after the store's clock ({current}) by more than "
        f"{CLOCK_SKEW_SECONDS} s: nothing can be known from the future, and a caller's clock "
        f"may not run ahead of the store's. Omit {what} to use the store's clock, or give a "
        "moment up to now"
    )


def today() -> Instant:
    """The current UTC date, as a date instant."""
    return Instant.from_date(_dt.datetime.now(_dt.UTC).date())


@dataclass(frozen=True, slots=True)
class Interval:
    """A half-open interval ``[start, end)``; ``end=None`` means no known end."""

    start: Instant
    end: Instant | None = None

    def __post_init__(self) -> None:
        if self.end is not None and self.end <= self.start:
            raise InvalidInterval(
                f"interval end {self.end} is not after its start {self.start}: "
                "the end is exclusive and must be later than the start"
            )

    def contains(self, at: Instant) -> bool:
        return self.start <= at and (self.end is None or at < self.end)

    def overlaps(self, other: Interval) -> bool:
        return (other.end is None or self.start < other.end) and (
            self.end is None or other.start < self.end
        )

    def __str__(self) -> str:
        return f"[{self.start}, {self.end if self.end is not None else '∞'})"


# -- calendar arithmetic inside the years 1 to 9999 ----------------------------------------
_EPOCH_ORDINAL = _EPOCH.date().toordinal()
_LAST_ORDINAL = _dt.date.max.toordinal()


def shift_days(day: _dt.date, days: int) -> _dt.date:
    """``day`` moved by ``days`` (back when negative), held at 0001-01-01 or 9999-12-31 when
    the move would leave the calendar: "a week before" the first day is the first day."""
    return _dt.date.fromordinal(min(max(day.toordinal() + days, 1), _LAST_ORDINAL))


def calendar_day(year: int, month: int = 1, day: int = 1) -> _dt.date | None:
    """The day ``year``-``month``-``day``, or ``None`` when it is not one of the calendar's
    (a year outside 1 to 9999, a month outside 1 to 12, a day its month lacks)."""
    try:
        return _dt.date(year, month, day)
    except (ValueError, OverflowError):
        return None


def day_start_micros(day: _dt.date) -> int:
    """The first microsecond of ``day`` (midnight UTC)."""
    return (day.toordinal() - _EPOCH_ORDINAL) * _MICROS_PER_DAY


def day_end_micros(day: _dt.date) -> int:
    """The last microsecond of ``day``: :data:`MAX_MICROS` for 9999-12-31, never past it."""
    return day_start_micros(day) + _MICROS_PER_DAY - 1


_CYCLE_DAYS = 146_097  # the Gregorian calendar repeats every 400 years, of this many days


def day_number(year: int, month: int, day: int = 1) -> int:
    """The proleptic Gregorian day number of ``year-month-day`` (0001-01-01 is 1), also for a
    year outside 1 to 9999 ("last week" asked on 0001-01-03 starts on day -4), so that a span
    can be computed first and cut to the calendar after (:func:`day_span_micros`). A
    month's last day is the day before the next month's first."""
    if month > 12:
        year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    cycles = 0
    if year < 1:
        cycles = (400 - year) // 400
    elif year > 9999:
        cycles = -((year - 9999 + 399) // 400)
    return _dt.date(year + 400 * cycles, month, day).toordinal() - _CYCLE_DAYS * cycles


def day_span_micros(first: int, last: int) -> tuple[int, int] | None:
    """The first and last microsecond of the days ``first`` to ``last`` (day numbers) that
    lie in the years 1 to 9999; ``None`` when none of them does."""
    first, last = max(first, 1), min(last, _LAST_ORDINAL)
    if first > last:
        return None
    return ((first - _EPOCH_ORDINAL) * _MICROS_PER_DAY,
            (last + 1 - _EPOCH_ORDINAL) * _MICROS_PER_DAY - 1)


def clamp_micros(micros: int) -> int:
    """``micros`` held inside the instants every surface can print and every store can read
    back (:data:`MIN_MICROS` to :data:`MAX_MICROS`)."""
    return min(max(micros, MIN_MICROS), MAX_MICROS)
