"""The kernel ledger on PostgreSQL: the journal, the versions and the precedence rules.

Valid and known intervals are ``tstzrange`` columns, half-open ``[)``, an open end being an
unbounded upper bound. A snapshot closed at the instant it was written has an empty known
interval, and an empty range forgets its bounds, so ``known_from``/``known_to`` are stored as
``timestamptz`` and the ``known`` range is generated from them. GiST indexes (``btree_gist``)
cover (subject, range) on both axes. ``date_flags`` remembers which instants were given as
calendar dates, so that they print back as dates. Text that is compared or sorted uses the
``"C"`` collation, so that ordering matches Python's and SQLite's whatever the database locale.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
from collections.abc import Sequence
from typing import Any

from vigente.records.values import Scope
from vigente.records.versions import PrecedenceRule, Version, build_version
from vigente.store.base import Timeline, Write
from vigente.store.contracts import PrecedenceRules, VersionLedger
from vigente.store.postgres.connection import (
    LOCK,
    LOCK_MANY,
    PostgresConnection,
    Row,
    _lock_key,
)
from vigente.time import Instant, Interval

__all__ = ["PostgresLedger"]


# Bits of date_flags: which instants were given as calendar dates (as in the SQLite backend).
_VF, _VT, _KF, _KT = 1, 2, 4, 8

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_NAIVE_EPOCH = _dt.datetime(1970, 1, 1)  # for timestamps read at UTC
_MICROSECOND = _dt.timedelta(microseconds=1)
_INSTANTS_LIMIT = 1 << 16  # instants a store keeps for lookups before the cache is emptied
_VERSION_COLUMNS = """v.version_id, s.lineage, s.scope_key, v.source, v.value,
    lower(v.valid), upper(v.valid), v.known_from, v.known_to, v.date_flags"""

SELECT_SUBJECT = "SELECT subject_id FROM subjects WHERE lineage = %s AND scope_key = %s"
INSERT_SUBJECT = """INSERT INTO subjects (lineage, scope_key) VALUES (%s, %s)
    ON CONFLICT (lineage, scope_key) DO NOTHING RETURNING subject_id"""

INSERT_WRITE = """INSERT INTO writes (subject_id, op, source, value, valid, known_at, date_flags)
    VALUES (%s, %s, %s, %s, tstzrange(%s::timestamptz, %s::timestamptz, '[)'), %s, %s)
    RETURNING write_id"""

SELECT_LATEST_KNOWLEDGE = """SELECT w.known_at, w.date_flags
    FROM writes w JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s AND s.scope_key = %s AND w.source = %s
    ORDER BY w.known_at DESC, w.write_id DESC LIMIT 1"""

SELECT_CURRENT = f"""SELECT {_VERSION_COLUMNS} FROM versions v JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s AND s.scope_key = %s AND v.source = %s AND v.known_to IS NULL
    ORDER BY v.seq"""

SELECT_CURRENT_OVERLAPPING = f"""SELECT {_VERSION_COLUMNS} FROM versions v
    JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s AND s.scope_key = %s AND v.source = %s AND v.known_to IS NULL
      AND v.valid && tstzrange(%s::timestamptz, %s::timestamptz, '[)')
    ORDER BY v.seq"""

INSERT_VERSION = """INSERT INTO versions
    (version_id, subject_id, source, value, valid, known_from, known_to, date_flags)
    VALUES (%s, %s, %s, %s, tstzrange(%s::timestamptz, %s::timestamptz, '[)'), %s, %s, %s)"""

CLOSE_VERSIONS = f"""UPDATE versions SET known_to = %s, date_flags = (date_flags & ~{_KT}) | %s
    WHERE version_id = ANY(%s) AND known_to IS NULL"""


def _from_micros(column: str) -> str:
    return (
        f"(timestamp 'epoch' + ({column} / 86400000000) * interval '1 day'"
        f" + ({column} %% 86400000000) * interval '1 microsecond') AT TIME ZONE 'UTC'"
    )


def _to_micros(value: str) -> str:
    # Whole days since the epoch, and the microseconds of the time of day (a time's epoch is
    # below 86,400 s: exact once rounded, whatever the server's type for it).
    utc = f"(({value}) AT TIME ZONE 'UTC')"
    return (
        f"({utc}::date - date '1970-01-01')::bigint * 86400000000"
        f" + round(extract(epoch FROM {utc}::time) * 1000000)::bigint"
    )

# A bulk read goes request by request through the indexes. Inside a long import the planner's
# statistics are those of the tables before it (autovacuum cannot see uncommitted rows), and
# it may hash-join every request with every open snapshot instead (minutes for a round of
# 5,000 requests on 20,000 fresh timelines): nested loops and index scans for that statement.
INDEXED_JOINS = [
    "SET LOCAL enable_hashjoin = off",
    "SET LOCAL enable_mergejoin = off",
    "SET LOCAL enable_seqscan = off",
]

DEFAULT_JOINS = [
    "SET LOCAL enable_hashjoin TO DEFAULT",
    "SET LOCAL enable_mergejoin TO DEFAULT",
    "SET LOCAL enable_seqscan TO DEFAULT",
]

SELECT_SUBJECTS = """SELECT r.i, s.subject_id
    FROM unnest(%b::text[], %b::text[]) WITH ORDINALITY AS r(lineage, scope_key, i)
    JOIN subjects s ON s.lineage = r.lineage AND s.scope_key = r.scope_key"""

INSERT_SUBJECTS = """INSERT INTO subjects (lineage, scope_key)
    SELECT lineage, scope_key
      FROM unnest(%b::text[], %b::text[]) WITH ORDINALITY AS r(lineage, scope_key, i) ORDER BY i
    ON CONFLICT (lineage, scope_key) DO NOTHING"""

INSERT_WRITES = f"""INSERT INTO writes (subject_id, op, source, value, valid, known_at, date_flags)
    SELECT subject_id, op, source, value,
           tstzrange({_from_micros("valid_from")}, {_from_micros("valid_to")}, '[)'),
           {_from_micros("known_at")}, flags
      FROM unnest(%b::bigint[], %b::text[], %b::text[], %b::text[], %b::bigint[], %b::bigint[],
                  %b::bigint[], %b::smallint[]) WITH ORDINALITY
           AS r(subject_id, op, source, value, valid_from, valid_to, known_at, flags, i)
     ORDER BY i
    RETURNING write_id"""

# The latest knowledge of each timeline: its newest journal entry (writes_timeline).
SELECT_LATEST_KNOWLEDGE_MANY = """SELECT r.i, w.known_at, w.date_flags
    FROM unnest(%b::text[], %b::text[], %b::text[]) WITH ORDINALITY
         AS r(lineage, scope_key, source, i)
    JOIN subjects s ON s.lineage = r.lineage AND s.scope_key = r.scope_key
    CROSS JOIN LATERAL (
        SELECT known_at, date_flags FROM writes
         WHERE subject_id = s.subject_id AND source = r.source
         ORDER BY known_at DESC, write_id DESC LIMIT 1) w"""

# The open snapshots of each timeline over each period (versions_open), request by request,
# their instants as microseconds (cheaper to read than timestamps).
SELECT_CURRENT_OVERLAPPING_MANY = f"""SELECT r.i, v.version_id, s.lineage, s.scope_key, v.source,
           v.value, {_to_micros("lower(v.valid)")}, {_to_micros("upper(v.valid)")},
           {_to_micros("v.known_from")}, v.date_flags
    FROM unnest(%b::text[], %b::text[], %b::text[], %b::bigint[], %b::bigint[])
         WITH ORDINALITY AS r(lineage, scope_key, source, valid_from, valid_to, i)
    JOIN subjects s ON s.lineage = r.lineage AND s.scope_key = r.scope_key
    JOIN versions v ON v.subject_id = s.subject_id AND v.source = r.source
     AND v.known_to IS NULL
     AND v.valid && tstzrange({_from_micros("r.valid_from")}, {_from_micros("r.valid_to")}, '[)')
    ORDER BY r.i, v.seq"""

INSERT_VERSIONS = f"""INSERT INTO versions
    (version_id, subject_id, source, value, valid, known_from, known_to, date_flags)
    SELECT version_id, subject_id, source, value,
           tstzrange({_from_micros("valid_from")}, {_from_micros("valid_to")}, '[)'),
           {_from_micros("known_from")}, {_from_micros("known_to")}, flags
      FROM unnest(%b::text[], %b::bigint[], %b::text[], %b::text[], %b::bigint[], %b::bigint[],
                  %b::bigint[], %b::bigint[], %b::smallint[])
           WITH ORDINALITY AS r(version_id, subject_id, source, value, valid_from, valid_to,
                                known_from, known_to, flags, i)
     ORDER BY i"""

CLOSE_VERSIONS_AT = f"""UPDATE versions v SET known_to = {_from_micros("c.known_to")},
    date_flags = (v.date_flags & ~{_KT}) | c.flag
    FROM unnest(%b::text[], %b::bigint[], %b::smallint[]) AS c(version_id, known_to, flag)
    WHERE v.version_id = c.version_id AND v.known_to IS NULL"""

# The rows of the Store.candidates contract, as the SQLite backend's SELECT_CANDIDATES, with
# range operators. The lineage's subjects (one per scope) come from one index scan. Two GiST
# scans find every row of the subject asked about, each read once with the columns a version
# needs: its rows valid at t (the admitted ones and the neighbours on the knowledge axis are
# among them) and its rows known at k (the neighbours on the validity axis). The edges (the
# knowledge replaced last by k and learned first after it; the period ending last at or before t
# and the one starting first after it) are window aggregates over the few rows each scan
# returns, so no row is read twice or fetched again by its key. The groups are disjoint, so
# UNION ALL returns each row once. The subject's own rows come back with a NULL lineage and
# scope (the caller knows them); the first column is the insertion order. Instants come back as
# timestamps at UTC (exact): psycopg reads a timestamptz into the session's time zone, about
# 1 µs a value when that zone is not Python's own UTC (Etc/UTC is not).
_SUBJECTS = """
WITH scopes AS MATERIALIZED (
    SELECT subject_id, scope_key FROM subjects WHERE lineage = %(lineage)s
), subject AS (
    SELECT subject_id FROM scopes WHERE scope_key = %(scope)s
)"""

_ROW_COLUMNS = """seq, version_id, source, value, lower(valid) AT TIME ZONE 'UTC' AS vf,
           upper(valid) AT TIME ZONE 'UTC' AS vt, known_from AT TIME ZONE 'UTC' AS kf,
           known_to AT TIME ZONE 'UTC' AS kt, date_flags"""

_ROW = "seq, version_id, NULL, NULL, source, value, vf, vt, kf, kt, date_flags"

# The subject's rows valid at t, with c: a candidate (known at k, replaced last by k, learned
# first after k) and h: known at %(e)s.
_VALID_AT_T = f"""
  SELECT {_ROW_COLUMNS},
         known @> %(k)s::timestamptz
         OR known_to = max(known_to) FILTER (WHERE known_to <= %(k)s::timestamptz) OVER ()
         OR known_from = min(known_from) FILTER (WHERE known_from > %(k)s::timestamptz) OVER ()
         AS c,
         {{held}} AS h
    FROM versions
   WHERE subject_id = (SELECT subject_id FROM subject)
     AND valid @> %(t)s::timestamptz AND NOT isempty(known)"""

# The subject's rows known at k ending last at or before t or starting first after t, then the
# rows of other scopes valid at t and known at k.
_KNOWN_AT_K_AND_OTHER_SCOPES = f"""
UNION ALL
SELECT {_ROW}{{flags}} FROM (
  SELECT {_ROW_COLUMNS},
         upper(valid) = max(upper(valid)) FILTER (WHERE upper(valid) <= %(t)s::timestamptz)
                        OVER ()
         OR lower(valid) = min(lower(valid)) FILTER (WHERE lower(valid) > %(t)s::timestamptz)
                           OVER () AS c
    FROM versions
   WHERE subject_id = (SELECT subject_id FROM subject) AND known @> %(k)s::timestamptz) r
 WHERE c
UNION ALL
SELECT o.seq, o.version_id, %(lineage)s, os.scope_key, o.source, o.value,
       lower(o.valid) AT TIME ZONE 'UTC', upper(o.valid) AT TIME ZONE 'UTC',
       o.known_from AT TIME ZONE 'UTC', o.known_to AT TIME ZONE 'UTC', o.date_flags{{flags}}
  FROM scopes os JOIN versions o USING (subject_id)
 WHERE os.scope_key <> %(scope)s
   AND o.valid @> %(t)s::timestamptz AND o.known @> %(k)s::timestamptz
ORDER BY 1"""

SELECT_CANDIDATES = f"""{_SUBJECTS}
SELECT {_ROW} FROM ({_VALID_AT_T.format(held="false")}) r
 WHERE c{_KNOWN_AT_K_AND_OTHER_SCOPES.format(flags="")}"""

# The same, and the rows of the subject valid at t and known at %(e)s (what the store held
# then: all among the rows valid at t), in one round trip; two more columns say which list a
# row belongs to.
SELECT_CANDIDATES_AND_HELD = f"""{_SUBJECTS}
SELECT {_ROW}, c, h FROM ({_VALID_AT_T.format(held="known @> %(e)s::timestamptz")}) r
 WHERE c OR h{_KNOWN_AT_K_AND_OTHER_SCOPES.format(flags=", true, false")}"""

SELECT_HISTORY = f"""SELECT {_VERSION_COLUMNS} FROM versions v JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s ORDER BY v.seq"""

SELECT_HISTORY_SCOPED = f"""SELECT {_VERSION_COLUMNS} FROM versions v
    JOIN subjects s USING (subject_id)
    WHERE s.lineage = %s AND s.scope_key = %s ORDER BY v.seq"""

SELECT_LINEAGES = "SELECT lineage, scope_key FROM subjects ORDER BY lineage, scope_key"
SELECT_VERSIONS_BY_ID = f"""SELECT {_VERSION_COLUMNS} FROM versions v
    JOIN subjects s USING (subject_id) WHERE v.version_id = ANY(%s) ORDER BY v.seq"""

INSERT_PRECEDENCE = """INSERT INTO precedence_rules
    (rule_id, lineage, scope_key, sources, known_from, known_to, date_flags)
    VALUES (%s, %s, %s, %s, %s, %s, %s)"""

CLOSE_PRECEDENCE = f"""UPDATE precedence_rules SET known_to = %s,
    date_flags = (date_flags & ~{_KT}) | %s WHERE rule_id = %s AND known_to IS NULL"""

SELECT_PRECEDENCE = """SELECT rule_id, lineage, scope_key, sources, known_from, known_to,
    date_flags FROM precedence_rules WHERE lineage = %s AND scope_key = %s ORDER BY seq"""


# -- instants ------------------------------------------------------------------------------
def _datetime(instant: Instant | None) -> _dt.datetime | None:
    return None if instant is None else _EPOCH + _dt.timedelta(microseconds=instant.micros)


def _micros(instant: Instant | None) -> int | None:
    return None if instant is None else instant.micros


@functools.lru_cache(maxsize=1 << 12)
def _scope_key(scope: Scope) -> str:
    """``scope.key`` (canonical JSON), computed once per scope: bulk writes ask for it per row."""
    return scope.key


def _instant(value: _dt.datetime, flags: int, bit: int) -> Instant:
    return Instant((value - _EPOCH) // _MICROSECOND, bool(flags & bit))


def _open_instant(value: _dt.datetime | None, flags: int, bit: int) -> Instant | None:
    return None if value is None else _instant(value, flags, bit)


def _flags(*pairs: tuple[Instant | None, int]) -> int:
    return sum(bit for instant, bit in pairs if instant is not None and instant.is_date)


def _version(row: Row, scopes: dict[str, Scope]) -> Version:
    version_id, lineage, scope_key, source, value, vf, vt, kf, kt, flags = row
    scope = scopes.get(scope_key)
    if scope is None:
        scope = scopes[scope_key] = Scope.from_key(scope_key)
    return Version(
        version_id=version_id,
        lineage=lineage,
        scope=scope,
        source=source,
        value_json=value,
        valid_from=_instant(vf, flags, _VF),
        valid_to=_open_instant(vt, flags, _VT),
        known_from=_instant(kf, flags, _KF),
        known_to=_open_instant(kt, flags, _KT),
    )


class PostgresLedger(PostgresConnection, VersionLedger, PrecedenceRules):
    """The kernel's journal, versions and precedence rules, on the shared connection."""

    #: Timelines one transaction locks one by one at most; beyond, it writes alone (the server's
    #: lock table holds about 64 x max_connections locks). Set it on a store to change it.
    bulk_locks: int = 1_000

    def lock_timeline(self, lineage: str, scope: Scope, source: str) -> None:
        # Held until the transaction ends; other processes' writers of the timeline wait. An
        # import takes every lock up front, so its statements do not ask again.
        timeline = (lineage, scope.key, source)
        locked: set[tuple[str, str, str]] | None = getattr(self._local, "locked", None)
        if locked is None:  # outside a transaction a lock ends with its statement
            self._execute(LOCK, (_lock_key("timeline", *timeline),))
            return
        if timeline in locked:
            return
        if not self._join_writers(alone=False):
            self._execute(LOCK, (_lock_key("timeline", *timeline),))
        locked.add(timeline)

    def lock_timelines(self, timelines: Sequence[Timeline]) -> None:
        locked: set[tuple[str, str, str]] | None = getattr(self._local, "locked", None)
        if locked is None:  # outside a transaction a lock ends with its statement
            super().lock_timelines(timelines)
            return
        new = [
            timeline
            for timeline in dict.fromkeys((t.lineage, _scope_key(t.scope), t.source)
                                          for t in timelines)  # fmt: skip
            if timeline not in locked
        ]
        if not new:
            return
        if not self._join_writers(alone=len(locked) + len(new) > self.bulk_locks):
            self._execute(LOCK_MANY, ([_lock_key("timeline", *t) for t in new],))
        locked.update(new)

    def _subject(self, lineage: str, scope: Scope) -> int:
        """The id of ``(lineage, scope)``, created if needed (writes run in a transaction)."""
        key = (lineage, scope.key)
        cache: dict[tuple[str, str], int] | None = getattr(self._local, "subjects", None)
        if cache is not None and key in cache:
            return cache[key]
        rows = self._fetch(SELECT_SUBJECT, key)
        if not rows:
            # ON CONFLICT returns nothing when another transaction created it meanwhile; the
            # next statement (READ COMMITTED) sees that committed row.
            rows = self._fetch(INSERT_SUBJECT, key) or self._fetch(SELECT_SUBJECT, key)
        subject = int(rows[0][0])
        if cache is not None:
            cache[key] = subject
        return subject

    def _subjects(self, keys: Sequence[tuple[str, str]]) -> list[int]:
        """The ids of many ``(lineage, scope key)``, created if needed, in a few statements."""
        cache: dict[tuple[str, str], int] | None = getattr(self._local, "subjects", None)
        known = {} if cache is None else cache  # outside a transaction nothing is kept
        missing = sorted({key for key in keys if key not in known})
        if missing:
            found = self._select_subjects(missing)
            new = [key for key in missing if key not in found]
            if new:
                # Created in sorted order: two writers creating the same subjects wait for each
                # other instead of deadlocking. ON CONFLICT skips those another transaction made
                # meanwhile; the next statement (READ COMMITTED) sees them committed.
                self._execute(INSERT_SUBJECTS, ([k[0] for k in new], [k[1] for k in new]))
                found.update(self._select_subjects(new))
            known.update(found)
        return [known[key] for key in keys]

    def _select_subjects(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        rows = self._fetch(SELECT_SUBJECTS, ([k[0] for k in keys], [k[1] for k in keys]))
        return {keys[int(i) - 1]: int(subject) for i, subject in rows}

    def _versions(self, rows: list[Row]) -> list[Version]:
        return [_version(row, self._scopes) for row in rows]

    # -- journal ---------------------------------------------------------------------------
    def append_write(self, write: Write) -> int:
        (row,) = self._fetch(
            INSERT_WRITE,
            (
                self._subject(write.lineage, write.scope),
                write.op,
                write.source,
                write.value_json,
                _datetime(write.valid_from),
                _datetime(write.valid_to),
                _datetime(write.known_at),
                _flags((write.valid_from, _VF), (write.valid_to, _VT), (write.known_at, _KF)),
            ),
        )
        timeline = (write.lineage, write.scope.key, write.source)
        knowledge = self._known_timelines()
        if knowledge is not None and timeline in knowledge:
            # Knowledge never goes back; on a tie the newest write is the latest (as in the query)
            latest = knowledge[timeline]
            if latest is None or write.known_at >= latest:
                knowledge[timeline] = write.known_at
        return int(row[0])

    def _known_timelines(self) -> dict[tuple[str, str, str], Instant | None] | None:
        """Latest knowledge of the timelines this transaction has locked (None outside one)."""
        knowledge: dict[tuple[str, str, str], Instant | None] | None = getattr(
            self._local, "knowledge", None
        )
        return knowledge

    def latest_knowledge(self, lineage: str, scope: Scope, source: str) -> Instant | None:
        timeline = (lineage, scope.key, source)
        knowledge = self._known_timelines()
        if knowledge is not None and timeline in knowledge:
            return knowledge[timeline]
        rows = self._fetch(SELECT_LATEST_KNOWLEDGE, timeline)
        latest = _instant(rows[0][0], rows[0][1], _KF) if rows else None
        if knowledge is not None and timeline in self._local.locked:
            knowledge[timeline] = latest
        return latest

    def append_writes(self, writes: Sequence[Write]) -> list[int]:
        if len(writes) < 2:
            return [self.append_write(write) for write in writes]
        subjects = self._subjects([(w.lineage, _scope_key(w.scope)) for w in writes])
        params = (
            subjects,
            [w.op for w in writes],
            [w.source for w in writes],
            [w.value_json for w in writes],
            [w.valid_from.micros for w in writes],
            [_micros(w.valid_to) for w in writes],
            [w.known_at.micros for w in writes],
            [_flags((w.valid_from, _VF), (w.valid_to, _VT), (w.known_at, _KF)) for w in writes],
        )
        rows = self._fetch(INSERT_WRITES, params)
        # Identities are drawn in the order the rows are inserted (ORDER BY i): increasing.
        write_ids = sorted(int(row[0]) for row in rows)
        knowledge = self._known_timelines()
        if knowledge is not None:
            for w in writes:
                timeline = (w.lineage, _scope_key(w.scope), w.source)
                if timeline in knowledge:
                    latest = knowledge[timeline]
                    if latest is None or w.known_at >= latest:
                        knowledge[timeline] = w.known_at
        return write_ids

    def _fetch_indexed(self, query: str, params: Sequence[Any]) -> list[Row]:
        """:meth:`_fetch` with the planner held to nested loops over indexes (INDEXED_JOINS)."""
        if self._in_transaction() is None:
            return self._fetch(query, params)
        for setting in INDEXED_JOINS:
            self._execute(setting, ())
        try:
            return self._fetch(query, params)
        finally:
            for setting in DEFAULT_JOINS:
                self._execute(setting, ())

    def latest_knowledge_many(self, timelines: Sequence[Timeline]) -> list[Instant | None]:
        keys = [(lineage, _scope_key(scope), source) for lineage, scope, source in timelines]
        knowledge = self._known_timelines() or {}
        ask = [key for key in dict.fromkeys(keys) if key not in knowledge]
        found: dict[tuple[str, str, str], Instant | None] = dict.fromkeys(ask)
        if ask:
            params = ([k[0] for k in ask], [k[1] for k in ask], [k[2] for k in ask])
            for i, known_at, flags in self._fetch_indexed(SELECT_LATEST_KNOWLEDGE_MANY, params):
                found[ask[int(i) - 1]] = _instant(known_at, flags, _KF)
            cache = self._known_timelines()
            if cache is not None:
                locked = self._local.locked
                cache.update((key, found[key]) for key in ask if key in locked)
        return [knowledge[key] if key in knowledge else found[key] for key in keys]

    # -- versions --------------------------------------------------------------------------
    def current_versions(self, lineage: str, scope: Scope, source: str) -> list[Version]:
        return self._versions(self._fetch(SELECT_CURRENT, (lineage, scope.key, source)))

    def current_versions_overlapping(
        self, lineage: str, scope: Scope, source: str, valid: Interval
    ) -> list[Version]:
        params = (lineage, scope.key, source, _datetime(valid.start), _datetime(valid.end))
        return self._versions(self._fetch(SELECT_CURRENT_OVERLAPPING, params))

    def current_versions_overlapping_many(
        self, requests: Sequence[tuple[Timeline, Interval]]
    ) -> list[list[Version]]:
        if len(requests) < 2:
            return super().current_versions_overlapping_many(requests)
        params = (
            [timeline.lineage for timeline, _ in requests],
            [_scope_key(timeline.scope) for timeline, _ in requests],
            [timeline.source for timeline, _ in requests],
            [valid.start.micros for _, valid in requests],
            [_micros(valid.end) for _, valid in requests],
        )
        found: list[list[Version]] = [[] for _ in requests]
        scopes = self._scopes
        rows = self._fetch_indexed(SELECT_CURRENT_OVERLAPPING_MANY, params)
        for i, version_id, lineage, scope_key, source, value, vf, vt, kf, flags in rows:
            scope = scopes.get(scope_key)
            if scope is None:
                scope = scopes[scope_key] = Scope.from_key(scope_key)
            found[i - 1].append(Version(
                version_id, lineage, scope, source, value, Instant(vf, bool(flags & _VF)),
                None if vt is None else Instant(vt, bool(flags & _VT)),
                Instant(kf, bool(flags & _KF)), None,
            ))  # fmt: skip
        return found

    def append_versions(self, versions: Sequence[Version]) -> None:
        if not versions:
            return
        subjects = self._subjects([(v.lineage, _scope_key(v.scope)) for v in versions])
        params = (
            [v.version_id for v in versions],
            subjects,
            [v.source for v in versions],
            [v.value_json for v in versions],
            [v.valid_from.micros for v in versions],
            [_micros(v.valid_to) for v in versions],
            [v.known_from.micros for v in versions],
            [_micros(v.known_to) for v in versions],
            [
                _flags((v.valid_from, _VF), (v.valid_to, _VT), (v.known_from, _KF),
                       (v.known_to, _KT))
                for v in versions
            ],
        )  # fmt: skip
        self._execute(INSERT_VERSIONS, params)

    def close_versions(self, version_ids: Sequence[str], known_to: Instant) -> None:
        if version_ids:
            flag = _KT if known_to.is_date else 0
            self._execute(CLOSE_VERSIONS, (_datetime(known_to), flag, list(version_ids)))

    def close_versions_at(self, closes: Sequence[tuple[str, Instant]]) -> None:
        if closes:
            self._execute(
                CLOSE_VERSIONS_AT,
                (
                    [version_id for version_id, _ in closes],
                    [known_to.micros for _, known_to in closes],
                    [_KT if known_to.is_date else 0 for _, known_to in closes],
                ),
            )

    def candidates(
        self, lineage: str, scope: Scope, valid_at: Instant, known_at: Instant
    ) -> list[Version]:
        params = {
            "lineage": lineage,
            "scope": _scope_key(scope),
            "t": _datetime(valid_at),
            "k": _datetime(known_at),
        }
        return self._lookup_versions(self._lookup(SELECT_CANDIDATES, params), lineage, scope)

    def candidates_and_held(
        self, lineage: str, scope: Scope, valid_at: Instant, known_at: Instant, held_at: Instant
    ) -> tuple[list[Version], list[Version]]:
        params = {
            "lineage": lineage,
            "scope": _scope_key(scope),
            "t": _datetime(valid_at),
            "k": _datetime(known_at),
            "e": _datetime(held_at),
        }
        rows = self._lookup(SELECT_CANDIDATES_AND_HELD, params)
        versions = self._lookup_versions(rows, lineage, scope)
        candidates = [v for v, row in zip(versions, rows, strict=True) if row[11]]
        held = [v for v, row in zip(versions, rows, strict=True) if row[12]]
        return candidates, held

    def _lookup_versions(self, rows: list[Row], lineage: str, scope: Scope) -> list[Version]:
        """Rows of a lookup (insertion order first, a NULL lineage and scope key for the
        subject asked about) as versions. Instants are shared through two bounded caches, of
        calendar dates and of other instants, keyed by the timestamp read (at UTC)."""
        dates, times = self._dates, self._times
        if len(dates) + len(times) >= _INSTANTS_LIMIT:
            dates.clear()
            times.clear()
        result = []
        for row in rows:
            _, version_id, name, scope_key, source, value, vf, vt, kf, kt, flags = row[:11]
            cache = dates if flags & _VF else times
            valid_from = cache.get(vf) or self._new_instant(cache, vf)
            valid_to = None
            if vt is not None:
                cache = dates if flags & _VT else times
                valid_to = cache.get(vt) or self._new_instant(cache, vt)
            cache = dates if flags & _KF else times
            known_from = cache.get(kf) or self._new_instant(cache, kf)
            known_to = None
            if kt is not None:
                cache = dates if flags & _KT else times
                known_to = cache.get(kt) or self._new_instant(cache, kt)
            result.append(
                build_version(
                    version_id,
                    lineage if name is None else name,
                    scope if scope_key is None else self._scope(scope_key),
                    source,
                    value,
                    valid_from,
                    valid_to,
                    known_from,
                    known_to,
                )
            )
        return result

    def _new_instant(self, cache: dict[_dt.datetime, Instant], value: _dt.datetime) -> Instant:
        """The instant of a timestamp at UTC (naive), remembered in ``cache``."""
        micros = (value - _NAIVE_EPOCH) // _MICROSECOND
        instant = cache[value] = Instant(micros, cache is self._dates)
        return instant

    def _scope(self, key: str) -> Scope:
        scope = self._scopes.get(key)
        if scope is None:
            scope = self._scopes[key] = Scope.from_key(key)
        return scope

    def history(self, lineage: str, scope: Scope | None = None) -> list[Version]:
        if scope is None:
            return self._versions(self._fetch(SELECT_HISTORY, (lineage,)))
        return self._versions(self._fetch(SELECT_HISTORY_SCOPED, (lineage, scope.key)))

    def versions_by_id(self, version_ids: Sequence[str]) -> list[Version]:
        if not version_ids:
            return []
        return self._versions(self._fetch(SELECT_VERSIONS_BY_ID, (list(version_ids),)))

    def lineages(self) -> list[tuple[str, Scope]]:
        return [(lineage, Scope.from_key(key)) for lineage, key in self._fetch(SELECT_LINEAGES, ())]

    # -- precedence rules ------------------------------------------------------------------
    def append_precedence(self, rule: PrecedenceRule) -> None:
        self._execute(
            INSERT_PRECEDENCE,
            (
                rule.rule_id,
                rule.lineage or "",
                rule.scope.key,
                json.dumps(list(rule.sources)),
                _datetime(rule.known_from),
                _datetime(rule.known_to),
                _flags((rule.known_from, _KF), (rule.known_to, _KT)),
            ),
        )

    def close_precedence(self, rule_id: str, known_to: Instant) -> None:
        flag = _KT if known_to.is_date else 0
        self._execute(CLOSE_PRECEDENCE, (_datetime(known_to), flag, rule_id))

    def precedence_rules(self, lineage: str | None, scope: Scope) -> list[PrecedenceRule]:
        key = (lineage or "", scope.key)
        if self._in_transaction() is not None:
            # The kernel reads the rules, then closes and appends (set_precedence) without
            # locking a timeline; this lock keeps two concurrent setters from both closing the
            # same rule. Outside a transaction a read needs no lock.
            self._execute(LOCK, (_lock_key("precedence", *key),))
        return [
            PrecedenceRule(
                rule_id=rule_id,
                lineage=rule_lineage or None,
                scope=Scope.from_key(scope_key),
                sources=tuple(json.loads(sources)),
                known_from=_instant(kf, flags, _KF),
                known_to=_open_instant(kt, flags, _KT),
            )
            for rule_id, rule_lineage, scope_key, sources, kf, kt, flags in self._fetch(
                SELECT_PRECEDENCE, key
            )
        ]
