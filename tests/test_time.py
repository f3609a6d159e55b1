"""Instants and intervals: parsing, precision, half-open containment."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vigente import Instant, Interval, InvalidInterval, InvalidTime, parse_instant


def test_a_date_is_midnight_utc_and_prints_back_as_a_date() -> None:
    d = parse_instant("2026-09-01")
    assert d.is_date and d.isoformat() == "2026-09-01"
    assert d == parse_instant("2026-09-01T00:00:00Z")


def test_timestamps_are_normalised_to_utc() -> None:
    assert parse_instant("2026-09-01T10:30:00+02:00").isoformat() == "2026-09-01T08:30:00Z"
    assert parse_instant("2026-09-01t08:30:00.25z").isoformat() == "2026-09-01T08:30:00.250000Z"


@pytest.mark.parametrize("text", ["2026-09-01T08:00:00", "2026-09-01 08:00"])
def test_a_naive_timestamp_is_refused(text: str) -> None:
    with pytest.raises(InvalidTime, match="offset|not a date"):
        parse_instant(text)


def test_a_naive_timestamp_is_read_in_the_default_zone_when_given() -> None:
    assert (
        parse_instant("2026-01-15T10:00:00", default_zone="Europe/Rome").isoformat()
        == "2026-01-15T09:00:00Z"
    )
    with pytest.raises(InvalidTime, match="unknown time zone"):
        parse_instant("2026-01-15T10:00:00", default_zone="Mars/Olympus")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "2026-02-30",
        "2026-13-01",
        "99999-01-01",
        "2026-09-01T25:00:00Z",
        "2026-09-01'; DROP TABLE versions;--",
    ],
)
def test_garbage_is_a_clear_error(text: str) -> None:
    with pytest.raises(InvalidTime):
        parse_instant(text)


def test_nanoseconds_are_truncated_to_microseconds() -> None:
    assert parse_instant("2026-09-01T00:00:00.123456789Z").micros % 1_000_000 == 123456


def test_same_moment_compares_dates_as_days() -> None:
    assert parse_instant("2026-09-29").same_moment(parse_instant("2026-09-29T18:00:00Z"))
    assert not parse_instant("2026-09-29T00:00:00Z").same_moment(
        parse_instant("2026-09-29T18:00:00Z")
    )


def test_intervals_are_half_open() -> None:
    old = Interval(parse_instant("2026-01-01"), parse_instant("2026-09-01"))
    new = Interval(parse_instant("2026-09-01"))
    boundary = parse_instant("2026-09-01")
    assert not old.contains(boundary) and new.contains(boundary)
    assert not old.overlaps(new)
    with pytest.raises(InvalidInterval):
        Interval(boundary, boundary)


@given(
    st.datetimes(
        min_value=dt.datetime(1, 1, 2),
        max_value=dt.datetime(9999, 12, 30),
        timezones=st.just(dt.UTC),
    )
)
def test_round_trip_through_text(value: dt.datetime) -> None:
    instant = Instant.from_datetime(value)
    assert parse_instant(instant.isoformat()) == instant
    assert instant.datetime == value


@given(st.dates(min_value=dt.date(1, 1, 2), max_value=dt.date(9999, 12, 30)))
def test_dates_round_trip(value: dt.date) -> None:
    instant = Instant.from_date(value)
    assert parse_instant(instant.isoformat()) == instant and instant.date == value
