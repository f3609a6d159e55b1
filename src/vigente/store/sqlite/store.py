"""The embedded SQLite backend (the default): one file, WAL, numbered migrations.

Instants are stored as integer microseconds since the epoch; an open end is stored as
``OPEN_END`` (declared with the migrations; it never leaves the backend). ``date_flags`` remembers
which instants were given as calendar dates so that they print back as dates.
"""

from __future__ import annotations

import json
import operator
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vigente.errors import StoreError
from vigente.records.values import Scope
from vigente.records.versions import PrecedenceRule, Version, build_version
from vigente.store.base import Store, Write
from vigente.store.sqlite.assembly import SQLiteAssembly
from vigente.store.sqlite.documents import SQLiteDocuments
from vigente.store.sqlite.horizon import SQLiteHorizon
from vigente.store.sqlite.integrity import SQLiteIntegrity
from vigente.store.sqlite.migrations import INTERVAL_INDEXES, MIGRATIONS, OPEN_END
from vigente.store.sqlite.recall import SQLiteRecall
from vigente.store.sqlite.retrieval import SQLiteRetrieval
from vigente.store.sqlite.runtime import SQLiteRuntime
from vigente.time import Instant, Interval

__all__ = ["CONNECTION_PRAGMAS", "INTERVAL_INDEXES", "SQLiteStore"]

# Bits of date_flags: which instants were given as calendar dates.
_VF, _VT, _KF, _KT = 1, 2, 4, 8

# Per connection: a larger page cache, and reads through a memory map (no system call per page).
CONNECTION_PRAGMAS = ("PRAGMA cache_size = -65536", "PRAGMA mmap_size = 1073741824")

# Every query that returns versions returns these columns, the insertion order (rowid) first.
_VERSION_COLUMNS = (
    "v.rowid, v.version_id, s.lineage, s.scope_key, v.source, v.value, v.valid_from, "
    "v.valid_to, v.known_from, v.known_to, v.date_flags"
)
# The same for rows of the subject asked about: NULL lineage and scope (the caller knows them).
_SUBJECT_COLUMNS = (
    "v.rowid, v.version_id, NULL, NULL, v.source, v.value, v.valid_from, v.valid_to, "
    "v.known_from, v.known_to, v.date_flags"
)

SELECT_SUBJECT = "SELECT subject_id FROM subjects WHERE lineage = ? AND scope_key = ?"
INSERT_SUBJECT = "INSERT OR IGNORE INTO subjects (lineage, scope_key) VALUES (?, ?)"
INSERT_WRITE = """INSERT INTO writes
    (subject_id, op, source, value, valid_from, valid_to, known_at, date_flags)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
SELECT_LATEST_KNOWLEDGE = """SELECT known_at, date_flags FROM writes
    WHERE subject_id = ? AND source = ? ORDER BY known_at DESC LIMIT 1"""
SELECT_CURRENT = f"""SELECT {_VERSION_COLUMNS} FROM versions v JOIN subjects s USING (subject_id)
    WHERE v.subject_id = ? AND v.source = ? AND v.known_to = {OPEN_END} ORDER BY v.rowid"""
# Open snapshots are disjoint on the valid axis, so walking versions_open from the period's
# start finds the touched ones at once ("+" keeps the planner off versions_valid, SQLite's
# documented way to rule out an index for a term).
SELECT_CURRENT_OVERLAPPING = f"""SELECT {_SUBJECT_COLUMNS} FROM versions v
    WHERE v.subject_id = ? AND v.source = ? AND v.known_to = {OPEN_END}
      AND v.valid_to > ? AND +v.valid_from < ?"""
INSERT_VERSION = """INSERT INTO versions (version_id, subject_id, source, value, valid_from,
    valid_to, known_from, known_to, date_flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
CLOSE_VERSION = f"""UPDATE versions SET known_to = ?, date_flags = (date_flags & ~{_KT}) | ?
    WHERE version_id = ? AND known_to = {OPEN_END}"""
# The groups of rows of the Store.candidates contract: valid at t and known at k; valid at t,
# replaced last by k; valid at t, learned next after k; known at k and ending nearest before t;
# known at k and starting nearest after t; other scopes. The first four all lie in one range
# of versions_valid (the subject's rows starting at or before t), so the range is read twice:
# once for the three "nearest" edges (MAX/MIN in one pass; FILTER skips the
# aggregate step for the rows that do not count), once for the rows on them. That is
# cheaper than a query per group, each reading the range again. The nearest later period is
# found by walking the index from t to the first row known at k (ORDER BY … LIMIT 1). The groups
# are disjoint, so each row comes back once. The subject's id is a parameter: the store keeps
# the ids of committed subjects (they never change), so a lookup does not search the subjects
# index once per use of the id in the statement (four). The caller puts the few rows in
# insertion order (rowid, the first column): cheaper than SQLite sorting them.
_SUBJECT = ":subject"
# The rows of the first four groups, once the edges are known.
_CANDIDATE_ROW = """(valid_to > :t AND (known_from <= :k AND known_to > :k
                           OR known_to = replaced AND known_to > known_from
                           OR known_from = learned AND known_to > known_from)
        OR valid_to = ended AND known_from <= :k AND known_to > :k)"""
_EDGE = f"""
WITH edge AS (
  SELECT MAX(known_to) FILTER (WHERE valid_to > :t AND known_to <= :k
                                 AND known_to > known_from) AS replaced,
         MIN(known_from) FILTER (WHERE valid_to > :t AND known_from > :k
                                   AND known_to > known_from) AS learned,
         MAX(valid_to) FILTER (WHERE valid_to <= :t AND known_from <= :k
                                 AND known_to > :k) AS ended
    FROM versions WHERE subject_id = {_SUBJECT} AND valid_from <= :t)"""
_LATER_AND_OTHER_SCOPES = f"""
SELECT {_SUBJECT_COLUMNS}{{flags}} FROM versions v
 WHERE v.subject_id = {_SUBJECT}
   AND v.valid_from = (SELECT valid_from FROM versions
                        WHERE subject_id = {_SUBJECT}
                          AND valid_from > :t AND known_from <= :k AND known_to > :k
                        ORDER BY valid_from LIMIT 1)
   AND v.known_from <= :k AND v.known_to > :k
UNION ALL
SELECT {_VERSION_COLUMNS}{{flags}} FROM subjects s JOIN versions v USING (subject_id)
 WHERE s.lineage = :lineage AND s.scope_key <> :scope
   AND v.valid_from <= :t AND v.valid_to > :t AND v.known_from <= :k AND v.known_to > :k"""
SELECT_CANDIDATES = f"""{_EDGE}
SELECT {_SUBJECT_COLUMNS} FROM edge, versions v
 WHERE subject_id = {_SUBJECT} AND valid_from <= :t AND {_CANDIDATE_ROW}
UNION ALL{_LATER_AND_OTHER_SCOPES.format(flags="")}"""
# The same, and the rows of the subject valid at t and known at :e (what the store held then),
# found in the same pass over the range; two more columns say which list a row belongs to.
_HELD_ROW = "(valid_to > :t AND known_from <= :e AND known_to > :e)"
SELECT_CANDIDATES_AND_HELD = f"""{_EDGE}
SELECT {_SUBJECT_COLUMNS}, {_CANDIDATE_ROW}, {_HELD_ROW} FROM edge, versions v
 WHERE subject_id = {_SUBJECT} AND valid_from <= :t AND ({_CANDIDATE_ROW} OR {_HELD_ROW})
UNION ALL{_LATER_AND_OTHER_SCOPES.format(flags=", 1, 0")}"""
SELECT_HISTORY = f"""SELECT {_VERSION_COLUMNS} FROM versions v JOIN subjects s USING (subject_id)
    WHERE s.lineage = ? ORDER BY v.rowid"""
SELECT_HISTORY_SCOPED = f"""SELECT {_VERSION_COLUMNS} FROM versions v
    JOIN subjects s USING (subject_id)
    WHERE s.lineage = ? AND s.scope_key = ? ORDER BY v.rowid"""
SELECT_LINEAGES = "SELECT lineage, scope_key FROM subjects ORDER BY lineage, scope_key"
INSERT_PRECEDENCE = """INSERT INTO precedence_rules
    (rule_id, lineage, scope_key, sources, known_from, known_to, date_flags)
    VALUES (?, ?, ?, ?, ?, ?, ?)"""
CLOSE_PRECEDENCE = f"""UPDATE precedence_rules SET known_to = ?,
    date_flags = (date_flags & ~{_KT}) | ? WHERE rule_id = ? AND known_to = {OPEN_END}"""
SELECT_PRECEDENCE = """SELECT rule_id, lineage, scope_key, sources, known_from, known_to,
    date_flags FROM precedence_rules WHERE lineage = ? AND scope_key = ? ORDER BY rowid"""
# The lineage's rules, then the scope-wide ones ('' sorts after it: lineage = '' is 1).
SELECT_PRECEDENCE_FOR = """SELECT rule_id, lineage, scope_key, sources, known_from, known_to,
    date_flags FROM precedence_rules WHERE lineage IN (?, '') AND scope_key = ?
    ORDER BY lineage = '', rowid"""


def _end(instant: Instant | None) -> int:
    return OPEN_END if instant is None else instant.micros


def _instant(micros: int, flags: int, bit: int) -> Instant:
    return Instant(micros, bool(flags & bit))


def _open_instant(micros: int, flags: int, bit: int) -> Instant | None:
    return None if micros >= OPEN_END else Instant(micros, bool(flags & bit))


def _flags(*pairs: tuple[Instant | None, int]) -> int:
    return sum(bit for instant, bit in pairs if instant is not None and instant.is_date)


_CACHE_LIMIT = 1 << 16  # entries kept per cache before it is emptied
_ROWID = operator.itemgetter(0)  # the first column of every versions query


class _Rows:
    """Turns rows into :class:`Version` values, sharing the immutable parts between rows.

    Rows repeat the same few scopes and calendar dates, so instants, scopes and scope keys are
    built once and reused (all are immutable); building them was most of the cost of a lookup.
    """

    def __init__(self) -> None:
        self.scopes: dict[str, Scope] = {}
        self.keys: dict[Scope, str] = {}
        self.instants: dict[int, Instant] = {}

    def scope(self, key: str) -> Scope:
        scope = self.scopes.get(key)
        if scope is None:
            self._bound(self.scopes)
            scope = self.scopes[key] = Scope.from_key(key)
        return scope

    def key(self, scope: Scope) -> str:
        """``scope.key`` (its canonical JSON), computed once per scope."""
        key = self.keys.get(scope)
        if key is None:
            self._bound(self.keys)
            key = self.keys[scope] = scope.key
        return key

    def _bound(self, cache: dict[Any, Any]) -> None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()

    def instant(self, micros: int, is_date: int) -> Instant:
        key = micros << 1 | is_date
        instant = self.instants.get(key)
        if instant is None:
            self._bound(self.instants)
            instant = self.instants[key] = Instant(micros, bool(is_date))
        return instant

    def versions(
        self, rows: list[tuple[Any, ...]], lineage: str = "", scope: Scope | None = None
    ) -> list[Version]:
        """Rows of _VERSION_COLUMNS; a NULL lineage or scope key is ``lineage`` / ``scope``."""
        # The instants cache is read inline (a dict lookup instead of a method call per
        # instant); a miss goes through instant(), which fills it.
        cached = self.instants.get
        instant = self.instant
        result = []
        for _, version_id, name, scope_key, source, value, vf, vt, kf, kt, flags in rows:
            result.append(
                build_version(
                    version_id,
                    lineage if name is None else name,
                    scope if scope_key is None and scope is not None else self.scope(scope_key),
                    source,
                    value,
                    cached(vf << 1 | flags & 1) or instant(vf, flags & 1),
                    None
                    if vt >= OPEN_END
                    else cached(vt << 1 | flags >> 1 & 1) or instant(vt, flags >> 1 & 1),
                    cached(kf << 1 | flags >> 2 & 1) or instant(kf, flags >> 2 & 1),
                    None
                    if kt >= OPEN_END
                    else cached(kt << 1 | flags >> 3 & 1) or instant(kt, flags >> 3 & 1),
                )
            )
        return result


class SQLiteStore(SQLiteDocuments, SQLiteRetrieval, SQLiteRuntime, SQLiteAssembly, SQLiteHorizon,
                  SQLiteRecall, SQLiteIntegrity, Store):
    """A :class:`Store` in one SQLite file (or ``":memory:"``)."""

    def __init__(self, path: str | Path = ":memory:", *, timeout: float = 30.0) -> None:
        self.url = str(path)
        try:
            self._conn = sqlite3.connect(
                self.url, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA foreign_keys = ON")
            if self.url != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
            for pragma in CONNECTION_PRAGMAS:
                self._conn.execute(pragma)
            self._lock = threading.RLock()
            self._depth = 0
            self._writer_thread = 0
            self._rows = _Rows()
            # What writers read again and again, kept across transactions but used inside write
            # transactions only (when this connection holds the write lock): subject ids by
            # (lineage, scope key) and the latest knowledge of a timeline by (subject, source).
            # Both are emptied when another connection has committed (PRAGMA data_version);
            # a rollback forgets the subjects it undid and every latest knowledge.
            self._subject_ids: dict[tuple[str, str], int] = {}
            self._new_subjects: list[tuple[str, str]] = []
            self._knowledge: dict[tuple[int, str], Instant | None] = {}
            self._data_version = -1
            # Subject ids for reads, by (lineage, scope key): only ids read outside a write
            # transaction (committed: a subject row is never changed or deleted), so that a
            # lookup needs no search of the subjects index. Unknown subjects are not kept.
            self._read_subjects: dict[tuple[str, str], int] = {}
            self._answered_seen = -(1 << 63)  # the answered horizon this store has seen (micros)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open SQLite database {self.url!r} ({exc}): check the path and that the "
                "file is a vigente database"
            ) from None

    # -- lifecycle -------------------------------------------------------------------------
    def _migrate(self) -> None:
        with self.transaction():
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS vigente_migrations (version INTEGER PRIMARY KEY)"
            )
            row = self._conn.execute("SELECT MAX(version) FROM vigente_migrations").fetchone()
            done = row[0] or 0
            if done > len(MIGRATIONS):
                raise StoreError(
                    f"database {self.url!r} was written by a newer vigente (schema {done}); "
                    "upgrade vigente"
                )
            for number, statements in enumerate(MIGRATIONS[done:], start=done + 1):
                for statement in statements:
                    self._conn.execute(statement)
                self._conn.execute("INSERT INTO vigente_migrations VALUES (?)", (number,))

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"cannot start a write on {self.url!r}: {exc}") from None
            self._depth = 1
            self._writer_thread = threading.get_ident()
            try:
                (data_version,) = self._conn.execute("PRAGMA data_version").fetchone()
                if data_version != self._data_version:
                    self._subject_ids.clear()
                    self._knowledge.clear()
                    self._data_version = data_version
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                for key in self._new_subjects:
                    self._subject_ids.pop(key, None)
                self._knowledge.clear()
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                self._new_subjects.clear()
                self._depth = 0

    def lock_timeline(self, lineage: str, scope: Scope, source: str) -> None:
        # BEGIN IMMEDIATE already holds the database's single write lock.
        return None

    def drop_interval_indexes(self) -> None:
        """Drop the interval indexes (for the benchmark's unindexed baseline only)."""
        for name in INTERVAL_INDEXES:
            self._conn.execute(f"DROP INDEX IF EXISTS {name}")  # names from a fixed tuple

    # -- helpers ---------------------------------------------------------------------------
    def _subject(self, lineage: str, scope: Scope, *, create: bool) -> int | None:
        key = (lineage, self._rows.key(scope))
        cached = self._subject_ids.get(key) if self._depth else None
        if cached is not None:
            return cached
        row = self._conn.execute(SELECT_SUBJECT, key).fetchone()
        if row is None and create:
            self._conn.execute(INSERT_SUBJECT, key)
            row = self._conn.execute(SELECT_SUBJECT, key).fetchone()
            self._new_subjects.append(key)
        if row is None:
            return None
        if self._depth:
            if len(self._subject_ids) >= _CACHE_LIMIT:
                self._subject_ids.clear()
            self._subject_ids[key] = row[0]
        return int(row[0])

    def _subject_for_read(self, lineage: str, scope: Scope, scope_key: str) -> int | None:
        """The id of ``(lineage, scope)`` for a read (None: no such subject yet)."""
        key = (lineage, scope_key)
        subject = self._read_subjects.get(key)
        if subject is not None:
            return subject
        if self._depth:  # inside a write: the subject may be this transaction's own
            return self._subject(lineage, scope, create=False)
        row = self._conn.execute(SELECT_SUBJECT, key).fetchone()
        if row is None:
            return None
        if len(self._read_subjects) >= _CACHE_LIMIT:
            self._read_subjects.clear()
        subject = self._read_subjects[key] = int(row[0])
        return subject

    def _versions(self, rows: list[tuple[Any, ...]]) -> list[Version]:
        return self._rows.versions(rows)

    # -- journal ---------------------------------------------------------------------------
    def append_write(self, write: Write) -> int:
        subject = self._subject(write.lineage, write.scope, create=True)
        cursor = self._conn.execute(
            INSERT_WRITE,
            (
                subject,
                write.op,
                write.source,
                write.value_json,
                write.valid_from.micros,
                _end(write.valid_to),
                write.known_at.micros,
                _flags((write.valid_from, _VF), (write.valid_to, _VT), (write.known_at, _KF)),
            ),
        )
        assert cursor.lastrowid is not None
        key = (subject, write.source)
        if self._depth and key in self._knowledge:
            # Knowledge never goes back; on a tie the newest write is the latest (as in the query)
            latest = self._knowledge[key]
            if latest is None or write.known_at >= latest:
                self._knowledge[key] = write.known_at
        return cursor.lastrowid

    def latest_knowledge(self, lineage: str, scope: Scope, source: str) -> Instant | None:
        subject = self._subject(lineage, scope, create=False)
        if subject is None:
            return None
        key = (subject, source)
        if self._depth and key in self._knowledge:
            return self._knowledge[key]
        row = self._conn.execute(SELECT_LATEST_KNOWLEDGE, (subject, source)).fetchone()
        latest = None if row is None else self._rows.instant(row[0], row[1] >> 2 & 1)
        if self._depth:
            if len(self._knowledge) >= _CACHE_LIMIT:
                self._knowledge.clear()
            self._knowledge[key] = latest
        return latest

    # -- versions --------------------------------------------------------------------------
    def current_versions(self, lineage: str, scope: Scope, source: str) -> list[Version]:
        subject = self._subject(lineage, scope, create=False)
        if subject is None:
            return []
        return self._versions(self._conn.execute(SELECT_CURRENT, (subject, source)).fetchall())

    def current_versions_overlapping(
        self, lineage: str, scope: Scope, source: str, valid: Interval
    ) -> list[Version]:
        subject = self._subject(lineage, scope, create=False)
        if subject is None:
            return []
        params = (subject, source, valid.start.micros, _end(valid.end))
        rows = self._conn.execute(SELECT_CURRENT_OVERLAPPING, params).fetchall()
        rows.sort(key=_ROWID)  # insertion order
        return self._rows.versions(rows, lineage, scope)

    def append_versions(self, versions: Sequence[Version]) -> None:
        rows = []
        for v in versions:
            subject = self._subject(v.lineage, v.scope, create=True)
            rows.append(
                (
                    v.version_id,
                    subject,
                    v.source,
                    v.value_json,
                    v.valid_from.micros,
                    _end(v.valid_to),
                    v.known_from.micros,
                    _end(v.known_to),
                    _flags(
                        (v.valid_from, _VF),
                        (v.valid_to, _VT),
                        (v.known_from, _KF),
                        (v.known_to, _KT),
                    ),
                )
            )
        self._conn.executemany(INSERT_VERSION, rows)

    def close_versions(self, version_ids: Sequence[str], known_to: Instant) -> None:
        if not version_ids:
            return
        flag = _KT if known_to.is_date else 0
        self._conn.executemany(
            CLOSE_VERSION, [(known_to.micros, flag, version_id) for version_id in version_ids]
        )

    def candidates(
        self, lineage: str, scope: Scope, valid_at: Instant, known_at: Instant
    ) -> list[Version]:
        key = self._rows.key(scope)
        with self._lock:
            params = {
                "lineage": lineage,
                "scope": key,
                "subject": self._subject_for_read(lineage, scope, key),
                "t": valid_at.micros,
                "k": known_at.micros,
            }
            rows = self._conn.execute(SELECT_CANDIDATES, params).fetchall()
        rows.sort(key=_ROWID)  # insertion order
        return self._rows.versions(rows, lineage, scope)

    def candidates_and_held(
        self, lineage: str, scope: Scope, valid_at: Instant, known_at: Instant, held_at: Instant
    ) -> tuple[list[Version], list[Version]]:
        key = self._rows.key(scope)
        with self._lock:
            params = {
                "lineage": lineage,
                "scope": key,
                "subject": self._subject_for_read(lineage, scope, key),
                "t": valid_at.micros,
                "k": known_at.micros,
                "e": held_at.micros,
            }
            rows = self._conn.execute(SELECT_CANDIDATES_AND_HELD, params).fetchall()
        rows.sort(key=_ROWID)  # insertion order
        versions = self._rows.versions([row[:11] for row in rows], lineage, scope)
        candidates = [v for v, row in zip(versions, rows, strict=True) if row[11]]
        held = [v for v, row in zip(versions, rows, strict=True) if row[12]]
        return candidates, held

    def history(self, lineage: str, scope: Scope | None = None) -> list[Version]:
        with self._lock:
            if scope is None:
                rows = self._conn.execute(SELECT_HISTORY, (lineage,)).fetchall()
            else:
                params = (lineage, self._rows.key(scope))
                rows = self._conn.execute(SELECT_HISTORY_SCOPED, params).fetchall()
        return self._versions(rows)

    def versions_by_id(self, version_ids: Sequence[str]) -> list[Version]:
        ids = list(dict.fromkeys(version_ids))
        rows: list[tuple[object, ...]] = []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            rows += self._select(
                f"SELECT {_VERSION_COLUMNS} FROM versions v JOIN subjects s USING (subject_id) "
                f"WHERE v.version_id IN ({marks}) ORDER BY v.rowid",
                chunk,
            )
        return self._versions(rows)

    def lineages(self) -> list[tuple[str, Scope]]:
        with self._lock:
            rows = self._conn.execute(SELECT_LINEAGES).fetchall()
        return [(lineage, Scope.from_key(key)) for lineage, key in rows]

    # -- precedence rules ------------------------------------------------------------------
    def append_precedence(self, rule: PrecedenceRule) -> None:
        self._conn.execute(
            INSERT_PRECEDENCE,
            (
                rule.rule_id,
                rule.lineage or "",
                self._rows.key(rule.scope),
                json.dumps(list(rule.sources)),
                rule.known_from.micros,
                _end(rule.known_to),
                _flags((rule.known_from, _KF), (rule.known_to, _KT)),
            ),
        )

    def close_precedence(self, rule_id: str, known_to: Instant) -> None:
        flag = _KT if known_to.is_date else 0
        self._conn.execute(CLOSE_PRECEDENCE, (known_to.micros, flag, rule_id))

    def precedence_rules(self, lineage: str | None, scope: Scope) -> list[PrecedenceRule]:
        with self._lock:
            params = (lineage or "", self._rows.key(scope))
            rows = self._conn.execute(SELECT_PRECEDENCE, params).fetchall()
        return self._rules(rows)

    def precedence_rules_for(self, lineage: str, scope: Scope) -> list[PrecedenceRule]:
        if not lineage:  # '' is how scope-wide rules are stored: keep the two reads apart
            return super().precedence_rules_for(lineage, scope)
        with self._lock:
            params = (lineage, self._rows.key(scope))
            rows = self._conn.execute(SELECT_PRECEDENCE_FOR, params).fetchall()
        return self._rules(rows)

    def _rules(self, rows: list[tuple[Any, ...]]) -> list[PrecedenceRule]:
        return [
            PrecedenceRule(
                rule_id=rule_id,
                lineage=rule_lineage or None,
                scope=Scope.from_key(scope_key),
                sources=tuple(json.loads(sources)),
                known_from=_instant(kf, flags, _KF),
                known_to=_open_instant(kt, flags, _KT),
            )
            for rule_id, rule_lineage, scope_key, sources, kf, kt, flags in rows
        ]
