"""Instants outside the years 1–9999 in UTC (issue 21, item 2): refused at parsing on every
surface, and, in a store written before that rule, found and repaired by ``vigente check``
without changing any answer inside the range. On every backend."""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from vigente import Vigente
from vigente.cli import cli
from vigente.errors import InvalidTime
from vigente.time import MAX_MICROS, parse_instant

NOW = "2026-12-01"
BEYOND = "9999-12-31T23:59:59-14:00"  # inside the range in its offset, the year 10000 in UTC


def _corrupt(vg: Vigente, store_url: str, version_id: str) -> None:
    """Write the value an older vigente accepted, the way it stored it: raw SQL."""
    if store_url.startswith("postgresql"):
        with psycopg.connect(store_url, autocommit=True) as conn:
            conn.execute("UPDATE versions SET valid = tstzrange(lower(valid), "
                         "%s::timestamptz, '[)') WHERE version_id = %s", (BEYOND, version_id))
            conn.execute("UPDATE writes SET valid = tstzrange(lower(valid), %s::timestamptz, "
                         "'[)')", (BEYOND,))
        return
    beyond = MAX_MICROS + 14 * 3_600_000_000
    conn = vg.store._conn  # type: ignore[attr-defined]
    with conn:
        conn.execute("UPDATE versions SET valid_to = ? WHERE version_id = ?",
                     (beyond, version_id))
        conn.execute("UPDATE writes SET valid_to = ?", (beyond,))


def _answer(vg: Vigente) -> tuple[Any, ...]:
    """What a question inside the range is told: its status and the values it may use (the
    wording names the end, which the repair opens)."""
    e = vg.evidence("limit", valid_at="2026-06-01", known_at="2026-03-01", now=NOW).as_dict()
    return e["status"], [(a["version_id"], a["value"]) for a in e["admitted"]]


@pytest.mark.parametrize("surface", ["record", "evidence", "cli"])
def test_a_timestamp_beyond_the_year_9999_in_utc_is_refused(vg: Vigente, surface: str) -> None:
    """It was stored, and then `history` answered 500 for that lineage for good."""
    if surface == "record":
        with pytest.raises(InvalidTime, match="outside the years 1 to 9999"):
            vg.record("limit", 1, valid_from=BEYOND, known_at="2026-01-01", source="policy",
                      now=NOW)
    elif surface == "evidence":
        with pytest.raises(InvalidTime, match="outside the years 1 to 9999"):
            vg.evidence("limit", valid_at=BEYOND, now=NOW)
    else:
        result = CliRunner().invoke(cli, ["--db", ":memory:", "record", "limit", "1",
                                          "--valid-from", BEYOND, "--source", "p", "--now", NOW])
        assert result.exit_code == 1 and "outside the years 1 to 9999" in result.output
    assert vg.lineages() == []  # nothing half-written


@pytest.mark.parametrize("text", ["2026-01-01\n", " 2026-01-01", "2026-01-01T08:00:00Z\n"])
def test_a_date_with_a_line_break_is_refused(text: str) -> None:
    with pytest.raises(InvalidTime, match="spaces or a line break"):
        parse_instant(text)


@settings(max_examples=300, deadline=None)
@given(st.datetimes(), st.integers(min_value=-14 * 60, max_value=14 * 60))
def test_every_accepted_timestamp_is_inside_the_range(naive: dt.datetime, minutes: int) -> None:
    """For any RFC 3339 timestamp, parsing either refuses it or gives an instant that reads
    back as the same moment."""
    moment = naive.replace(tzinfo=dt.timezone(dt.timedelta(minutes=minutes)))
    text = moment.isoformat()
    try:
        instant = parse_instant(text)
    except InvalidTime as exc:
        assert "outside the years 1 to 9999" in str(exc)
        return
    assert instant.datetime == moment  # readable: the same moment


def test_check_finds_and_repairs_a_stored_unreadable_instant(vg: Vigente, store_url: str) -> None:
    vg.record("limit", {"mb": 50}, valid_from="2026-01-01", valid_to="9999-12-31",
              known_at="2026-02-01", source="policy", now=NOW)
    v = vg.history("limit")[0]
    before = _answer(vg)
    _corrupt(vg, store_url, v.version_id)
    with pytest.raises(Exception):  # noqa: B017 - what breaks depends on the backend's driver
        [str(x.valid_to) for x in vg.history("limit")]  # as every surface prints it
    found = vg.check()
    assert {(f.table, f.row) for f in found} >= {("versions", v.version_id)}
    assert all(f.repaired_to is None for f in found)

    repaired = vg.check(repair=True)
    assert [f.table for f in repaired] == [f.table for f in found]
    assert all(f.repaired_to == "open end" for f in repaired)
    assert vg.check() == []
    assert vg.history("limit")[0].valid_to is None  # an end beyond the range: an open end
    assert _answer(vg) == before  # no answer inside the range changed
    decisions = [d for d in vg.store.decisions(10) if d.kind == "store_repair"]
    assert len(decisions) == 1 and len(decisions[0].payload["repaired"]) == len(repaired)


def test_the_check_command_exits_1_until_repaired(vg: Vigente, store_url: str) -> None:
    vg.record("limit", 1, valid_from="2026-01-01", valid_to="2030-01-01", known_at="2026-02-01",
              source="policy", now=NOW)
    v = vg.history("limit")[0]
    runner = CliRunner()
    clean = runner.invoke(cli, ["--db", store_url, "check"])
    assert clean.exit_code == 0 and "no unreadable instants" in clean.output
    _corrupt(vg, store_url, v.version_id)
    found = runner.invoke(cli, ["--db", store_url, "check"])
    assert found.exit_code == 1, found.output
    assert v.version_id in found.output and "vigente check --repair" in found.output
    repaired = runner.invoke(cli, ["--db", store_url, "check", "--repair"])
    assert repaired.exit_code == 0 and "open end" in repaired.output
    assert runner.invoke(cli, ["--db", store_url, "history", "limit"]).exit_code == 0
