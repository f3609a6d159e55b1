"""Bulk writes: the Store's batched methods, and statements applied in rounds, on every backend.

An import reads the open snapshots of every timeline a round of statements touches at once,
plans the bitemporal split of each statement in memory and writes the round together
(``kernel.ledger.apply_writes``). These tests hold each batched Store method to the answer of its
one-at-a-time counterpart, and the rounds to the split as it was made statement by statement
before (``split_one_by_one`` below, the kernel's algorithm of commit 9ef03e8): the same version
ids, intervals, closings, journal and refusals.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vigente import HistoryRewriteError, ImportFileError, Vigente
from vigente.kernel.ledger import StatementRefused, WriteResult, apply_writes
from vigente.records.values import Scope
from vigente.records.versions import Version
from vigente.store.base import Store, Timeline, Write
from vigente.time import Instant, Interval, parse_instant

NOW = "2026-09-29"
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
PROD = Scope.of({"env": "prod"})


def at(text: str) -> Instant:
    return parse_instant(text)


def write(
    lineage: str,
    value: object,
    start: str,
    end: str | None = None,
    known: str = "2026-01-01",
    source: str = "s",
    scope: Scope | None = None,
) -> Write:
    return Write(
        "record" if value is not None else "retract",
        lineage,
        scope or Scope(),
        source,
        None if value is None else json.dumps(value),
        at(start),
        None if end is None else at(end),
        at(known),
    )


# -- the batched Store methods ----------------------------------------------------------------
def test_append_writes_gives_increasing_ids_in_statement_order(vg: Vigente) -> None:
    store = vg.store
    writes = [
        write("a", 1, "2026-01-01", known="2026-01-02"),
        write("b", 2, "2026-01-01", known="2026-01-01T10:00:00Z", scope=PROD),
        write("a", None, "2026-03-01", known="2026-01-03"),
        write("a", 3, "2026-02-01", "2026-02-05", known="2026-01-03", source="t"),
    ]
    with store.transaction():
        (first,) = store.append_writes(writes[:1])
        ids = store.append_writes(writes[1:])
        (last,) = store.append_writes(writes[:1])
    assert first < ids[0] < ids[1] < ids[2] < last
    # each id is that of its own statement: the latest knowledge of each timeline follows it
    latest = store.latest_knowledge_many(
        [Timeline("a", Scope(), "s"), Timeline("b", PROD, "s"), Timeline("a", Scope(), "t")]
    )
    assert [(k.micros, k.is_date) if k else None for k in latest] == [
        (at("2026-01-03").micros, True),
        (at("2026-01-01T10:00:00Z").micros, False),
        (at("2026-01-03").micros, True),
    ]
    assert [name for name, _ in store.lineages()] == ["a", "b"]


def test_latest_knowledge_many_answers_as_latest_knowledge_one_by_one(vg: Vigente) -> None:
    store = vg.store
    with store.transaction():
        store.append_writes([
            write("a", 1, "2026-01-01", known="2026-02-01"),
            # the same moment, given as a timestamp: on a tie the newest statement is the latest
            write("a", 2, "2026-01-01", known="2026-02-01T00:00:00Z"),
            write("b", 1, "2026-01-01", known="2026-03-01", scope=PROD),
            write("b", 1, "2026-01-01", known="2026-01-01", scope=PROD),
        ])  # fmt: skip
    timelines = [
        Timeline("b", PROD, "s"),
        Timeline("a", Scope(), "s"),
        Timeline("never", Scope(), "s"),
        Timeline("a", PROD, "s"),  # the lineage in another scope
        Timeline("a", Scope(), "other"),  # another source
        Timeline("a", Scope(), "s"),  # asked twice
    ]

    def shown(k: Instant | None) -> tuple[int, bool] | None:
        return None if k is None else (k.micros, k.is_date)

    one_by_one = [shown(store.latest_knowledge(*t)) for t in timelines]
    assert one_by_one == [
        (at("2026-03-01").micros, True),
        (at("2026-02-01").micros, False),
        None,
        None,
        None,
        (at("2026-02-01").micros, False),
    ]
    assert [shown(k) for k in store.latest_knowledge_many(timelines)] == one_by_one
    with store.transaction():  # inside a write transaction, with the timelines locked
        store.lock_timelines(sorted(set(timelines), key=Timeline.order))
        assert [shown(k) for k in store.latest_knowledge_many(timelines)] == one_by_one


@pytest.fixture
def stored(vg: Vigente) -> Vigente:
    """Two timelines of one lineage (two sources), one in another scope, with closed and open
    snapshots, dates and timestamps."""
    day = {"known_at": "2026-01-01", "now": NOW}
    vg.record("l", 1, valid_from="2026-01-01", source="s", **day)
    vg.record("l", 2, valid_from="2026-03-01", valid_to="2026-04-01", source="s", **day)
    vg.record("l", 3, valid_from="2026-05-01T12:00:00Z", source="s", **day)
    vg.record("l", 4, valid_from="2026-02-01", source="t", **day)
    vg.record("l", 5, valid_from="2026-01-01", source="s", scope=PROD, **day)
    return vg


def test_current_versions_overlapping_many_answers_request_by_request(stored: Vigente) -> None:
    store = stored.store
    requests = [
        (Timeline("l", Scope(), "s"), Interval(at("2026-03-15"), at("2026-05-02"))),
        (Timeline("l", Scope(), "t"), Interval(at("2026-01-01"), at("2026-02-01"))),  # touches
        (Timeline("nobody", Scope(), "s"), Interval(at("2026-01-01"), None)),  # nothing
        (Timeline("l", PROD, "s"), Interval(at("2020-01-01"), None)),
        (Timeline("l", Scope(), "s"), Interval(at("2026-01-01"), None)),  # asked again, wider
        (Timeline("l", Scope(), "s"), Interval(at("2026-04-01"), at("2026-05-01T12:00:00Z"))),
    ]
    one_by_one = [store.current_versions_overlapping(t.lineage, t.scope, t.source, valid)
                  for t, valid in requests]  # fmt: skip
    assert [len(found) for found in one_by_one] == [3, 0, 0, 1, 4, 1]
    assert store.current_versions_overlapping_many(requests) == one_by_one
    assert store.current_versions_overlapping_many(requests[:1]) == one_by_one[:1]
    assert store.current_versions_overlapping_many([]) == []


def test_close_versions_at_closes_each_at_its_own_knowledge_date(stored: Vigente) -> None:
    store = stored.store
    open_rows = store.current_versions("l", Scope(), "s")
    assert len(open_rows) == 4
    closes = [
        (open_rows[2].version_id, at("2026-06-01")),
        (open_rows[0].version_id, at("2026-06-01T08:30:00+02:00")),
        (open_rows[3].version_id, at("2026-06-01T00:00:00Z")),  # the same moment, not a date
    ]
    with store.transaction():
        store.close_versions_at(closes)
        store.close_versions_at([(open_rows[0].version_id, at("2026-07-01"))])  # closed already
        store.close_versions_at([])
    by_id = {v.version_id: v for v in store.history("l")}
    for version_id, known_to in closes:
        closed = by_id[version_id].known_to
        assert closed is not None
        assert (closed.micros, closed.is_date) == (known_to.micros, known_to.is_date)
    assert by_id[open_rows[1].version_id].known_to is None
    assert [v.version_id for v in store.current_versions("l", Scope(), "s")] == [
        open_rows[1].version_id
    ]


def test_lock_timelines_inside_a_transaction_then_writes(vg: Vigente) -> None:
    timelines = sorted(
        {Timeline("b", PROD, "s"), Timeline("a", Scope(), "s"), Timeline("a", Scope(), "t")},
        key=Timeline.order,
    )
    assert [t.order()[0] for t in timelines] == ["a", "a", "b"]
    with vg.store.transaction():
        vg.store.lock_timelines(timelines)
        vg.store.lock_timelines(timelines[:1])  # taken already: nothing changes
        vg.record("a", 1, valid_from="2026-01-01", known_at="2026-01-01", source="s", now=NOW)
    assert [v.value for v in vg.history("a")] == [1]


# -- rounds against the split statement by statement ------------------------------------------
def split_one_by_one(store: Store, w: Write) -> WriteResult:
    """The kernel's write before rounds (commit 9ef03e8): read, split and write one statement."""
    period = Interval(w.valid_from, w.valid_to)
    with store.transaction():
        store.lock_timeline(w.lineage, w.scope, w.source)
        latest = store.latest_knowledge(w.lineage, w.scope, w.source)
        if latest is not None and w.known_at < latest:
            raise HistoryRewriteError(f"{latest}")
        touched = store.current_versions_overlapping(w.lineage, w.scope, w.source, period)
        if (
            w.op == "record"
            and len(touched) == 1
            and (touched[0].value_json, touched[0].valid_from, touched[0].valid_to)
            == (w.value_json, period.start, period.end)
        ):
            return WriteResult(None, (), ())
        if w.op == "retract" and not touched:
            return WriteResult(None, (), ())
        write_id = store.append_write(w)
        appended: list[Version] = []

        def new(value_json: str, valid: Interval) -> Version:
            return Version(f"{write_id}.{len(appended) + 1}", w.lineage, w.scope, w.source,
                           value_json, valid.start, valid.end, w.known_at, None)  # fmt: skip

        for old in touched:
            if old.valid_from < period.start:
                appended.append(new(old.value_json, Interval(old.valid_from, period.start)))
            if period.end is not None and (old.valid_to is None or period.end < old.valid_to):
                appended.append(new(old.value_json, Interval(period.end, old.valid_to)))
        if w.op == "record":
            assert w.value_json is not None
            appended.append(new(w.value_json, period))
        store.close_versions([v.version_id for v in touched], w.known_at)
        store.append_versions(appended)
    closed = tuple(replace(v, known_to=w.known_at) for v in touched)
    return WriteResult(write_id, closed, tuple(appended))


@pytest.fixture
def two(store_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[
    tuple[Vigente, Vigente]
]:  # fmt: skip
    """Two empty stores of the same backend: one written in rounds, one statement by statement."""
    if not store_url.startswith("postgresql"):
        with Vigente.open(store_url) as rounds, Vigente.open(tmp_path / "single.db") as single:
            yield rounds, single
        return
    server = request.getfixturevalue("postgres_server")
    name = f"t_{uuid.uuid4().hex}"
    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')  # a generated name, never input
    try:
        with Vigente.open(store_url) as rounds, Vigente.open(server.get_uri(name)) as single:
            yield rounds, single
    finally:
        with psycopg.connect(server.get_uri(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def instant(day: int, micros: int | None) -> Instant:
    if micros is None:
        return parse_instant((EPOCH + dt.timedelta(days=day)).date().isoformat())
    return parse_instant((EPOCH + dt.timedelta(days=day, microseconds=micros)).isoformat())


@st.composite
def batches(draw: st.DrawFn) -> list[Write]:
    """Statements on a few timelines: overlapping periods, repeats, retractions, ties and (now
    and then) knowledge going backwards."""
    known = 0
    result = []
    for _ in range(draw(st.integers(1, 24))):
        known = max(0, known + draw(st.sampled_from([0, 0, 1, 2, -1])))
        start = draw(st.integers(0, 12))
        end = draw(st.one_of(st.none(), st.integers(start + 1, 14)))
        op = draw(st.sampled_from(["record", "record", "record", "retract"]))
        result.append(
            Write(
                op,
                draw(st.sampled_from(["x", "y"])),
                draw(st.sampled_from([Scope(), PROD])),
                draw(st.sampled_from(["a", "b"])),
                json.dumps(draw(st.integers(0, 2))) if op == "record" else None,
                instant(start, draw(st.sampled_from([None, 0, 5]))),
                None if end is None else instant(end, None),
                instant(known, draw(st.sampled_from([None, None, 0]))),
            )
        )
    return result


def shown(results: list[WriteResult], history: list[Version]) -> tuple[list[Any], list[Any]]:
    """Results and stored snapshots with journal ids renumbered in order (0, 1, …): a refused
    transaction leaves a gap in PostgreSQL's identity sequence (never in SQLite's), of a size
    that depends on how much was written before the refusal."""
    ids = sorted({r.write_id for r in results if r.write_id is not None}
                 | {int(v.version_id.split(".")[0]) for v in history})  # fmt: skip
    rank = {str(write_id): str(n) for n, write_id in enumerate(ids)}

    def version(v: Version) -> tuple[Any, ...]:
        write_id, n = v.version_id.split(".")
        known_to = None if v.known_to is None else (v.known_to.micros, v.known_to.is_date)
        return (v.lineage, rank[write_id], n, v.scope.key, v.source, v.value_json, str(v.valid),
                v.known_from.micros, v.known_from.is_date, known_to)  # fmt: skip

    return [
        (None if r.write_id is None else rank[str(r.write_id)],
         [version(v) for v in r.closed], [version(v) for v in r.appended])
        for r in results
    ], [version(v) for v in history]  # fmt: skip


def test_rounds_give_the_split_made_statement_by_statement(
    two: tuple[Vigente, Vigente],
) -> None:
    rounds, single = two
    rounds.store.write_round = 5  # several rounds in one transaction
    counter = iter(range(10**6))

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(batches())
    def check(writes: list[Write]) -> None:
        prefix = f"b{next(counter)}/"
        writes = [replace(w, lineage=prefix + w.lineage) for w in writes]
        refused_at = None
        try:
            got = apply_writes(rounds.store, writes)
        except StatementRefused as refused:
            refused_at, got = refused.index, []
        expected: list[WriteResult] = []
        try:
            with single.store.transaction():
                for index, w in enumerate(writes):
                    try:
                        expected.append(split_one_by_one(single.store, w))
                    except HistoryRewriteError:
                        assert refused_at == index  # the same statement is refused
                        raise
        except HistoryRewriteError:
            expected = []
        else:
            assert refused_at is None
        lineages = (prefix + "x", prefix + "y")
        assert shown(got, [v for name in lineages for v in rounds.history(name)]) == shown(
            expected, [v for name in lineages for v in single.history(name)]
        )
        assert rounds.lineages() == single.lineages()

    check()


def test_an_import_in_rounds_is_one_transaction(
    vg: Vigente,
) -> None:
    """A refusal in a later round leaves nothing of the earlier rounds, and names its line."""
    vg.store.write_round = 3
    lines = [
        json.dumps({"op": "record", "lineage": f"r/{i % 4}", "value": i, "source": "s",
                    "valid_from": f"2026-01-{i + 1:02d}", "known_at": f"2026-02-{i + 1:02d}"})
        for i in range(10)
    ]  # fmt: skip
    backwards = json.loads(lines[1]) | {"known_at": "2026-02-01", "value": "late"}
    with pytest.raises(ImportFileError, match=r"^line 11: .*already has knowledge recorded on "
                                              r"2026-02-10.*--known-at 2026-02-10"):  # fmt: skip
        vg.import_lines([*lines, json.dumps(backwards)], now=NOW)
    assert vg.lineages() == []
    report = vg.import_lines(lines, now=NOW)
    assert (report.statements, report.applied) == (10, 10)
    assert report.versions_appended == 10 + 6 and report.versions_closed == 6
    assert [len(vg.history(f"r/{k}")) for k in range(4)] == [5, 5, 3, 3]
