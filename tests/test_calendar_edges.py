"""No date crashes anything (issue 35, item 7; docs/guarantees.md "No date crashes anything").

A date or a relative phrase at the calendar's edges ("on 31 December 9999", "in December 9999",
"last week" as known on 0001-01-03, "December 0000") is read inside the years 1 to 9999 or
refused with vigente's own error, wherever it is read: recall (the Python API, HTTP, the CLI,
MCP), an assembly's default query (the latest user message), ``search --date-from-query`` and
the inspector's pages, a document's proposed dates and a corpus's inclusive end dates. Property
tests draw phrases and knowledge times K over the whole range, extremes included; the store
tests run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import calendar
import datetime as dt
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp.client import Client

from tests.http_server import Tenant, service_root, serving_tenant, tool_text, with_mcp
from tests.test_legalize_ee import MAPPING, row
from vigente import Vigente
from vigente.cli import cli
from vigente.corpus import map_lineage
from vigente.errors import InvalidInput, StoreError, VigenteError
from vigente.evidence.documents import NewVersion
from vigente.evidence.lineage_fields import extract
from vigente.retrieval.dates import date_from_query
from vigente.runtime.recall_time import time_window
from vigente.time import (
    MAX_MICROS,
    MIN_MICROS,
    Instant,
    calendar_day,
    clamp_micros,
    day_end_micros,
    day_number,
    day_span_micros,
    day_start_micros,
    parse_instant,
    shift_days,
)

# -- what a hostile client or a user writes --------------------------------------------------
_EN = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
       "October", "November", "December"]
_IT = ["gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
       "settembre", "ottobre", "novembre", "dicembre"]
_ET = ["jaanuar", "veebruar", "märts", "aprill", "mai", "juuni", "juuli", "august", "september",
       "oktoober", "november", "detsember"]
_EDGE_DAYS = [dt.date.min, dt.date.max, dt.date(1, 1, 2), dt.date(1, 1, 7), dt.date(1, 2, 28),
              dt.date(1, 3, 1), dt.date(1, 12, 31), dt.date(9999, 12, 1), dt.date(9999, 12, 30),
              dt.date(2024, 2, 29)]
days = st.one_of(st.sampled_from(_EDGE_DAYS), st.dates())


def _written(day: dt.date) -> st.SearchStrategy[str]:
    """``day`` as people write it, in every form the readers know."""
    y, m, d = f"{day.year:04d}", day.month, day.day
    return st.sampled_from([
        day.isoformat(), f"{d} {_EN[m - 1]} {y}", f"{_EN[m - 1]} {d}, {y}", f"{d:02d}/{m:02d}/{y}",
        f"{d} {_IT[m - 1]} {y}", f"{d}° {_IT[m - 1]} {y}", f"{d}. {_ET[m - 1]} {y}",
        f"{_EN[m - 1]} {y}", f"{_IT[m - 1]} {y}", f"{_ET[m - 1]} {y}", y,
    ])


#: Shapes of dates no calendar of years 1 to 9999 holds.
IMPOSSIBLE = ["0000-01-01", "10000-01-01", "December 0000", "31 dicembre 0000",
              "31. detsember 0000", "the year 10000", "year 0", "in 0000", "January 10000",
              "29 February 9999", "30 febbraio 2024", "9999-12-32", "00/00/0000",
              "31 December 99999", "0 January 2026"]
#: Relative phrases, read against K.
RELATIVE = ["last week", "last month", "last year", "last day", "this week", "this month",
            "this year", "yesterday", "today", "this morning", "tomorrow", "next year",
            "on monday", "last sunday", "in may", "since january", "in december", "back in 1999",
            "in 2099", "a few weeks ago", "a couple of months ago", "before the move",
            "after my trip to Rome"]
_UNITS = st.sampled_from(["day", "week", "month", "year"])
relative = st.one_of(
    st.sampled_from(RELATIVE),
    st.builds(lambda n, u: f"{n} {u}s ago", st.integers(0, 999), _UNITS),
    st.builds(lambda n, u: f"in the last {n} {u}s", st.integers(0, 999), _UNITS),
)
cues = st.sampled_from(["", "on ", "in ", "before ", "after ", "since ", "as of ", "until ",
                        "during ", "in vigore al ", "nel ", "dal ", "seisuga ", "by "])
phrases = st.one_of(
    st.tuples(cues, days.flatmap(_written)).map("".join),
    st.tuples(cues, st.sampled_from(IMPOSSIBLE)).map("".join),
    relative,
)
queries = st.one_of(
    phrases.map(lambda p: f"what did we say about trains {p}"),
    st.lists(phrases, min_size=1, max_size=3).map(" and ".join),
    st.tuples(st.text(max_size=24), phrases, st.text(max_size=12)).map(" ".join),
).filter(lambda q: q.strip() != "")

#: Knowledge times over the whole range, its first and last instants drawn often.
_EDGE_K = [MIN_MICROS, MIN_MICROS + 1, day_start_micros(dt.date(1, 1, 3)),
           day_start_micros(dt.date(1, 3, 1)), MAX_MICROS, day_start_micros(dt.date.max)]
any_k = st.one_of(st.sampled_from(_EDGE_K), st.integers(MIN_MICROS, MAX_MICROS)).map(Instant)
#: Knowledge times up to 2026-01-01 (a K later than the store's clock is the clock rule's).
_PRESENT = day_start_micros(dt.date(2026, 1, 1))
past_k = st.one_of(st.sampled_from(_EDGE_K[:4]), st.integers(MIN_MICROS, _PRESENT)).map(Instant)


def _k_text(k: Instant) -> str:
    """K as a client sends it: a date when it is a midnight, else a timestamp."""
    return k.date.isoformat() if k.micros % 86_400_000_000 == 0 else k.isoformat()


def _clean(exc: BaseException) -> bool:
    """vigente's own refusal of what it was given (not a broken store)."""
    return isinstance(exc, VigenteError) and not isinstance(exc, StoreError)


# -- the arithmetic ----------------------------------------------------------------------------
@given(days, st.integers(-4_000_000, 4_000_000))
def test_calendar_arithmetic_stays_inside_the_years_1_to_9999(day: dt.date, n: int) -> None:
    moved = shift_days(day, n)
    try:
        exact = day + dt.timedelta(days=n)
    except OverflowError:
        exact = dt.date.min if n < 0 else dt.date.max
    assert moved == exact
    assert MIN_MICROS <= day_start_micros(day) <= day_end_micros(day) <= MAX_MICROS
    assert Instant(day_start_micros(day)) == Instant.from_date(day)
    assert day_end_micros(day) + 1 == day_start_micros(day) + 86_400_000_000
    assert clamp_micros(day_start_micros(day) + n * 86_400_000_000) in range(MIN_MICROS,
                                                                            MAX_MICROS + 1)


@given(st.integers(-20_000, 30_000), st.integers(1, 12), st.integers(1, 28),
       st.integers(-1_000, 1_000))
def test_day_numbers_run_on_past_the_calendar_and_are_cut_back_to_it(year: int, month: int,
                                                                       day: int,
                                                                       length: int) -> None:
    number = day_number(year, month, day)
    if 1 <= year <= 9999:
        assert number == dt.date(year, month, day).toordinal()
    assert day_number(year + 400, month, day) - number == 146_097  # 400 years, any year
    month_length = day_number(year, month + 1) - day_number(year, month)
    assert month_length == calendar.monthrange(2000 + year % 400, month)[1]  # leap years too
    span = day_span_micros(number, number + length)
    inside = [n for n in range(number, number + length + 1) if 1 <= n <= dt.date.max.toordinal()]
    if not inside:
        assert span is None
    else:
        assert span == (day_start_micros(dt.date.fromordinal(inside[0])),
                        day_end_micros(dt.date.fromordinal(inside[-1])))


def test_calendar_edges() -> None:
    assert day_end_micros(dt.date.max) == MAX_MICROS and day_start_micros(dt.date.min) == MIN_MICROS
    assert calendar_day(0, 12, 31) is None and calendar_day(10000) is None
    assert calendar_day(2024, 2, 30) is None and calendar_day(2024, 13) is None
    assert calendar_day(9999, 12, 31) == dt.date.max
    assert (day_number(0, 12, 31), day_number(0, 1, 1), day_number(10000, 1, 1)) == (
        0, -365, dt.date.max.toordinal() + 1)


# -- recall's time phrases ---------------------------------------------------------------------
@settings(max_examples=500, deadline=None)
@given(queries, any_k)
@example("what did we say on 31 December 9999", Instant(day_start_micros(dt.date(2026, 1, 1))))
@example("in December 9999", Instant(MAX_MICROS))
@example("last week", Instant(MIN_MICROS))
@example("after 9999-12-31", Instant(MAX_MICROS))
@example("before 0001-01-01", Instant(MIN_MICROS))
def test_a_recall_phrase_reads_a_window_inside_the_calendar_at_any_k(query: str,
                                                                    k: Instant) -> None:
    window = time_window(query, k)
    if window is None:
        return
    for edge in (window.start, window.end):
        assert edge is None or MIN_MICROS <= edge <= MAX_MICROS, window
    note = window.describe()
    if window.outside is not None:
        assert (window.start, window.end) == (None, None)
        assert "names no day within the years 1 to 9999" in note and "ranked without" in note


def _datetime_window(query: str, asked_at: Instant) -> tuple[int | None, int | None, str] | None:
    """The reference: the window as plain ``datetime`` arithmetic reads it (what recall did
    before the calendar's edges were handled; it raises past them)."""
    from vigente.evidence.dates import find_dates
    from vigente.runtime import recall_time as rt

    def start_of(day: dt.date) -> int:
        return Instant.from_date(day).micros

    today = asked_at.date
    for mention in find_dates(query, partial=False):
        if mention.problem is None and mention.date is not None:
            first, last = start_of(mention.date), start_of(mention.date + dt.timedelta(1)) - 1
            before = query[:mention.start].rstrip().lower()
            cue = rt._CUE_BEFORE.search(query[:mention.start])
            phrase = query[mention.start if cue is None else cue.start():mention.end]
            if before.endswith("before"):
                return None, first - 1, phrase
            if before.endswith(("after", "since")):
                return last + 1, None, phrase
            return first, last, phrase
    one = dt.timedelta(days=1)
    for pattern in (rt._TODAY, rt._YESTERDAY, rt._IN_LAST, rt._AGO, rt._LAST_UNIT, rt._THIS_UNIT,
                    rt._MONTH, rt._YEAR, rt._WEEKDAY):
        m = pattern.search(query)
        if m is None:
            continue
        unit = (m.groupdict().get("unit") or "").lower()
        span = {"day": 1, "week": 7, "month": 30, "year": 365}.get(unit, 0)
        if pattern is rt._TODAY:
            a, b = today, today
        elif pattern is rt._YESTERDAY:
            a = b = today - one
        elif pattern is rt._LAST_UNIT:
            b = today
            a = {"day": today - one, "week": today - (today.weekday() + 7) * one,
                 "month": (today.replace(day=1) - one).replace(day=1)}.get(unit) or dt.date(
                     today.year - 1, 1, 1)
        elif pattern is rt._THIS_UNIT:
            b = today
            a = {"week": today - today.weekday() * one, "month": today.replace(day=1)}.get(
                unit) or dt.date(today.year, 1, 1)
        elif pattern is rt._AGO:
            center = today - rt._number(m["n"]) * span * one
            a, b = center - max(1, span // 2) * one, min(today, center + max(1, span // 2) * one)
        elif pattern is rt._IN_LAST:
            a, b = today - rt._number(m["n"]) * span * one, today
        elif pattern is rt._WEEKDAY:
            a = b = today - ((today.weekday() - rt._WEEKDAYS[m["day"].lower()]) % 7 or 7) * one
        elif pattern is rt._MONTH:
            month = rt._MONTHS[m["month"].lower()]
            year = int(m["year"]) if m["year"] else (
                today.year if month <= today.month else today.year - 1)
            a = dt.date(year, month, 1)
            b = dt.date(year, month, calendar.monthrange(year, month)[1])
            if not m["year"] and m.group(0).lower().startswith("since"):
                b = today
        else:
            a, b = dt.date(int(m["year"]), 1, 1), dt.date(int(m["year"]), 12, 31)
        return start_of(a), min(start_of(b + one) - 1, asked_at.micros), m.group(0)
    return None


@settings(max_examples=500, deadline=None)
@given(queries, any_k)
def test_inside_the_calendar_a_window_is_what_datetime_arithmetic_reads(query: str,
                                                                       k: Instant) -> None:
    try:
        expected = _datetime_window(query, k)
    except (OverflowError, ValueError):
        return  # past an edge: the tests above say what it reads then
    if expected is not None and any(e is not None and not MIN_MICROS <= e <= MAX_MICROS
                                    for e in expected[:2]):
        return  # read past an edge without raising ("before 0001-01-01")
    window = time_window(query, k)
    if expected is None or window is None or window.event is not None:
        assert (expected is None) == (window is None or window.event is not None)
        return
    assert (window.start, window.end, window.phrase) == expected


@pytest.mark.parametrize(("query", "k", "start", "end"), [
    # inside the calendar the windows are as they always were
    ("3 days ago", "2026-03-15", "2026-03-11T00:00:00Z", "2026-03-13T23:59:59.999999Z"),
    ("last month", "2026-03-15", "2026-02-01T00:00:00Z", "2026-03-15T00:00:00Z"),
    ("before 3 March 2025", "2026-01-01", None, "2025-03-02T23:59:59.999999Z"),
    ("on 31 December 9999", "2026-01-01", "9999-12-31T00:00:00Z",
     "9999-12-31T23:59:59.999999Z"),
    ("in December 9999", "9999-12-31T23:59:59Z", "9999-12-01T00:00:00Z", "9999-12-31T23:59:59Z"),
    # cut to the calendar: what lies before year 1 is left out
    ("last week", "0001-01-03", "0001-01-01T00:00:00Z", "0001-01-03T00:00:00Z"),
    ("last year", "0001-06-01", "0001-01-01T00:00:00Z", "0001-06-01T00:00:00Z"),
    ("in the last 999 years", "0500-01-01", "0001-01-01T00:00:00Z", "0500-01-01T00:00:00Z"),
])
def test_a_window_partly_outside_the_calendar_keeps_its_inside(query: str, k: str,
                                                               start: str | None,
                                                               end: str) -> None:
    window = time_window(query, parse_instant(k))
    assert window is not None
    assert (None if window.start is None else Instant(window.start).isoformat()) == start
    assert window.end is not None and Instant(window.end).isoformat() == end


@pytest.mark.parametrize(("query", "k", "edge"), [
    ("in may", "0001-03-01", "ends before 0001-01-01"),
    ("on monday", "0001-01-01", "ends before 0001-01-01"),
    ("999 years ago", "0001-06-01", "ends before 0001-01-01"),
    ("after 9999-12-31", "2026-01-01", "starts after 9999-12-31"),
    ("before 0001-01-01", "2026-01-01", "ends before 0001-01-01"),
    ("in January 0000", "2026-01-01", "ends before 0001-01-01"),
])
def test_a_window_wholly_outside_the_calendar_names_no_day(query: str, k: str,
                                                           edge: str) -> None:
    window = time_window(query, parse_instant(k))
    assert window is not None and window.outside is not None and edge in window.outside
    assert (window.start, window.end) == (None, None)


# -- the date a question names -----------------------------------------------------------------
@settings(max_examples=500, deadline=None)
@given(queries)
@example("in vigore al 31 dicembre 9999")
@example("as of December 0000")
@example("seisuga 31. detsember 0000")
def test_a_question_names_a_day_of_the_calendar_or_is_refused(query: str) -> None:
    try:
        found = date_from_query(query)
    except InvalidInput as exc:
        assert "valid_at" in str(exc)  # says how to give the date instead
        return
    assert found is None or MIN_MICROS <= found.valid_at.micros <= MAX_MICROS


# -- documents and corpora ---------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(days.flatmap(_written), days.flatmap(_written),
       st.sampled_from(["until", "valid until", "in vigore fino al", "through"]))
@example("3 March 2025", "31 December 9999", "until")
@example("1 gennaio 0001", "31 dicembre 9999", "in vigore fino al")
def test_a_documents_dates_are_proposed_inside_the_calendar(start: str, end: str,
                                                            cue: str) -> None:
    proposal = extract(f"Circular 1/2026 on archives. In force from {start}, {cue} {end}.")
    for name in ("valid_from", "valid_to"):
        if name in proposal.fields:
            assert calendar_day(*map(int, proposal.fields[name].value.split("-"))) is not None


def test_in_force_through_the_last_day_of_the_calendar_is_an_open_end() -> None:
    proposal = extract("Circular 1/2026 on archives. In force from 3 March 2025 "
                       "until 31 December 9999.")
    assert proposal.fields["valid_from"].value == "2025-03-03"
    assert "valid_to" not in proposal.fields
    assert [p.code for p in proposal.problems if p.field == "valid_to"] == ["open_end"]
    imported = map_lineage("x", [(1, row("x", "v1", "2020-01-01", "9999-12-31"))], MAPPING,
                           as_of="2026-01-01")
    (version,) = imported.versions
    assert version.valid_to is None and not imported.excluded


# -- the store: recall, search and assembly, on both backends ------------------------------------
C = "edge"


def _year_one(conversation: str = C) -> list[dict[str, Any]]:
    """A conversation held since the first minute of the calendar (its clock was near
    year 1), with more history than a small budget takes."""
    at = "0001-01-01T00:{:02d}:00Z".format
    events: list[dict[str, Any]] = [
        dict(event="conversation", id=conversation, account="acct", at=at(0)),
        dict(event="participant", id="agent", model="m", provider="openai"),
        dict(event="branch", id="main"),
    ]
    for i in range(6):
        events.append(dict(event="message", id=f"m{i}", branch="main", role="user", at=at(i + 1),
                           content=f"Trains from Turin to Milan, option {i}, leave at 07:1{i}."))
    return [e if e["event"] == "conversation" else dict(e, conversation=conversation)
            for e in events]


def _import(vg: Vigente, events: list[dict[str, Any]]) -> None:
    vg.runtime.import_events([json.dumps(e) for e in events])


def _circular(vg: Vigente) -> None:
    vg.documents.add(NewVersion.from_dict({
        "lineage_id": "cdd", "reference": "Circular 7/2023", "valid_from": "2023-06-01",
        "published": "2023-05-12",
        "text": "Circular 7/2023. Customer due diligence: verify identity documents."}))


@pytest.fixture
def edge_vg(vg: Vigente) -> Vigente:
    """A store holding the year-1 conversation and a circular."""
    _import(vg, _year_one())
    _circular(vg)
    return vg


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(queries, any_k)
@example("what did we say on 31 December 9999", Instant(MIN_MICROS))
@example("in December 9999", Instant(day_start_micros(dt.date(1, 1, 3))))
@example("last week", Instant(day_start_micros(dt.date(1, 1, 3))))
def test_recall_at_any_k_answers_or_refuses_cleanly(edge_vg: Vigente, query: str,
                                                    k: Instant) -> None:
    try:
        result = edge_vg.runtime.recall(query, conversation=C, known_at=k, mode="lexical")
    except Exception as exc:  # the property: nothing but vigente's own refusals
        assert _clean(exc), repr(exc)
        return
    assert all(h.at <= result.known_at for h in result.hits)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(queries, past_k, st.sampled_from([None, "2025-01-01"]))
@example("as of December 0000", Instant(MIN_MICROS), None)
@example("in vigore al 31 dicembre 9999", Instant(MIN_MICROS), None)
def test_search_with_the_date_from_the_query_answers_or_refuses_cleanly(
    edge_vg: Vigente, query: str, k: Instant, valid_at: str | None
) -> None:
    try:
        result = edge_vg.retrieval.search(query, valid_at=valid_at, known_at=k, mode="lexical",
                                     date_from_query=True)
    except InvalidInput:
        return
    assert MIN_MICROS <= result.valid_at.micros <= MAX_MICROS


_minutes = itertools.count(10)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(queries)
@example("what did I say last week")
@example("what did we say on 31 December 9999")
@example("in December 9999")
def test_an_assembly_over_budget_never_fails_on_what_the_last_user_message_says(
    edge_vg: Vigente, message: str
) -> None:
    minute = next(_minutes)
    at = f"0001-01-01T{minute // 60:02d}:{minute % 60:02d}:00Z"
    _import(edge_vg, [dict(event="message", conversation=C, id=f"u{minute}", branch="main",
                           role="user", content=message, at=at)])
    for as_of in (at, None):  # as known then (K in year 1), and as known now
        assembly = edge_vg.assembly.assemble(C, "main", "agent", budget=60, as_of=as_of)
        recall = assembly.record["recall"]
        assert recall is not None and recall["query"] == message[:10_000]


def test_a_user_message_longer_than_a_recall_reads_never_fails_its_assembly(
    edge_vg: Vigente,
) -> None:
    long = "what did I say about trains last week? " * 600  # 24,000 characters
    _import(edge_vg, [dict(event="message", conversation=C, id="long", branch="main",
                           role="user", content=long, at="0001-01-01T00:30:00Z")])
    assembly = edge_vg.assembly.assemble(C, "main", "agent", budget=60,
                                         as_of="0001-01-02")
    assert assembly.record["recall"]["query"] == long[:10_000]


# -- the surfaces: HTTP and the inspector, MCP, the CLI ------------------------------------------
ADMIN_KEY = "calendar-admin-key-0123456789abcdef"


def _seed(store: str) -> None:
    vg = Vigente.open(store)
    try:
        _import(vg, _year_one())
        _circular(vg)
    finally:
        vg.close()


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tenant]:
    with serving_tenant(service_root(request, tmp_path), ADMIN_KEY, _seed) as tenant:
        yield tenant


def _no_5xx(response: httpx.Response, what: str) -> None:
    assert response.status_code < 500, f"{what}: {response.status_code} {response.text[:300]}"
    if response.status_code >= 400 and response.headers.get("content-type", "").startswith(
            "application/json"):
        assert set(response.json()) == {"error"}, response.text


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(queries, any_k)
@example("what did we say on 31 December 9999", Instant(MIN_MICROS))
@example("in December 9999", Instant(day_start_micros(dt.date(1, 1, 3))))
@example("what did I say last week", Instant(day_start_micros(dt.date(1, 1, 3))))
@example("as of December 0000", Instant(MIN_MICROS))
def test_no_date_is_a_5xx_over_http(served: Tenant, query: str, k: Instant) -> None:
    """The cheap form of the date fuzz: each drawn query at each drawn K through every
    surface that reads a date out of text."""
    c, key, when = served.client, served.key, _k_text(k)
    _no_5xx(c.post("/v1/recall", json={"query": query, "conversation": C, "known_at": when,
                                       "mode": "lexical"}, headers=key), "recall")
    past = when if k.micros <= _PRESENT else None
    search: dict[str, Any] = {"query": query, "date_from_query": True, "mode": "lexical",
                              "valid_at": "2025-01-01"}
    if past is not None:
        search["known_at"] = past
    _no_5xx(c.post("/v1/search", json=search, headers=key), "search")
    assemble: dict[str, Any] = {"conversation": C, "branch": "main", "participant": "agent",
                                "budget": 60, "query": query}
    if past is not None:
        assemble["as_of"] = past
    _no_5xx(c.post("/v1/assemble", json=assemble, headers=key), "assemble")
    cookie = {"Cookie": f"vigente_key={served.token}"}
    _no_5xx(c.get("/search", params={"q": query, "date_from_query": "1", "mode": "lexical"},
                  headers=cookie), "inspector search")
    _no_5xx(c.get("/runtime/conversation", params={"id": C, "k": when}, headers=cookie),
            "inspector conversation")
    _no_5xx(c.get("/lineage", params={"name": "cdd", "t": when, **({"k": past} if past else {})},
                  headers=cookie), "inspector timeline")


def test_a_date_the_client_gives_that_no_calendar_holds_is_a_400(served: Tenant) -> None:
    c, key = served.client, served.key
    for when in ("0000-01-01", "10000-01-01", "9999-12-31T23:59:59-14:00",
                 "0001-01-01T00:00:00+01:00"):
        r = c.post("/v1/recall", json={"query": "trains", "conversation": C, "known_at": when},
                   headers=key)
        assert 400 <= r.status_code < 500 and "error" in r.json(), r.text
        r = c.post("/v1/search", json={"query": "trains", "valid_at": when}, headers=key)
        assert 400 <= r.status_code < 500 and "error" in r.json(), r.text
    refused = c.post("/v1/search", json={"query": "limits as of December 0000",
                                         "date_from_query": True}, headers=key)
    assert refused.status_code == 400 and "years 1 to 9999" in refused.json()["error"]["message"]


_MCP_CASES = [("what did we say on 31 December 9999", "0001-01-03"),
              ("in December 9999", "0001-01-03"), ("what did I say last week", "0001-01-03"),
              ("on 9999-12-31", "2025-06-01"), ("after 9999-12-31", "0001-01-01"),
              ("limits as of December 0000", "2025-06-01"),
              ("in vigore al 31 dicembre 9999", "0001-01-01")]


def test_no_date_fails_an_mcp_tool(served: Tenant) -> None:
    """The real MCP client over ``/mcp``: a recall or a search naming an edge date answers,
    or is a tool error that says what to change (never a crash)."""
    outcomes: list[tuple[str, bool, str]] = []

    async def session(client: Client) -> None:
        for query, k in _MCP_CASES:
            recalled = await client.call_tool("recall_memory", {
                "query": query, "conversation": C, "known_at": k})
            outcomes.append(("recall_memory", recalled.is_error, tool_text(recalled)))
            found = await client.call_tool("search", {
                "query": query, "date_from_query": True, "known_at": k})
            outcomes.append(("search", found.is_error, tool_text(found)))

    with_mcp(served, session)
    for tool, failed, text in outcomes:
        assert not failed or "valid_at" in text, (tool, text)
    assert not any(failed for tool, failed, _ in outcomes if tool == "recall_memory")


@pytest.mark.parametrize(("query", "k"), _MCP_CASES)
def test_no_date_is_a_traceback_on_the_cli(store_url: str, query: str, k: str) -> None:
    vg = Vigente.open(store_url)
    try:
        _import(vg, _year_one())
    finally:
        vg.close()
    runner = CliRunner()
    for args in (
        ["recall", query, "--conversation", C, "--known-at", k, "--mode", "lexical"],
        ["search", query, "--date-from-query", "--known-at", k, "--mode", "lexical"],
        ["assemble", "--conversation", C, "--branch", "main", "--participant", "agent",
         "--budget", "60", "--known-at", k, "--query", query],
    ):
        result = runner.invoke(cli, ["--db", store_url, *args])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            args, repr(result.exception))
        assert result.exit_code in (0, 1), (args, result.output)
        if result.exit_code == 1:
            assert result.output.startswith("Error: ") or "Error: " in result.output, (
                args, result.output)
