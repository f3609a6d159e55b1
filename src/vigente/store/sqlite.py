"""The embedded SQLite backend (the default): one file, WAL, numbered migrations.

Instants are stored as integer microseconds since the epoch; an open end is stored as
``OPEN_END`` inside this module only (it never leaves the backend). ``date_flags`` remembers
which instants were given as calendar dates so that they print back as dates.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from vigente.errors import StoreError
from vigente.kernel.values import Scope
from vigente.kernel.versions import PrecedenceRule, Version
from vigente.store.base import Store, Write
from vigente.store.sqlite_records import RECORD_MIGRATIONS, SQLiteRecords
from vigente.store.sqlite_retrieval import RETRIEVAL_MIGRATIONS, SQLiteRetrieval
from vigente.time import Instant

__all__ = ["SQLiteStore"]

OPEN_END = 1 << 62  # larger than any instant Python's datetime can represent

# Bits of date_flags: which instants were given as calendar dates.
_VF, _VT, _KF, _KT = 1, 2, 4, 8

MIGRATIONS: list[list[str]] = [
    # 1: the kernel: subjects (lineage within a scope), the write journal, versions, precedence
    [
        """CREATE TABLE subjects (
            subject_id INTEGER PRIMARY KEY,
            lineage    TEXT NOT NULL,
            scope_key  TEXT NOT NULL,
            UNIQUE (lineage, scope_key)
        )""",
        """CREATE TABLE writes (
            write_id   INTEGER PRIMARY KEY AUTOINCREMENT,
            subject_id INTEGER NOT NULL REFERENCES subjects (subject_id),
            op         TEXT NOT NULL CHECK (op IN ('record', 'retract')),
            source     TEXT NOT NULL,
            value      TEXT,
            valid_from INTEGER NOT NULL,
            valid_to   INTEGER NOT NULL,
            known_at   INTEGER NOT NULL,
            date_flags INTEGER NOT NULL
        )""",
        "CREATE INDEX writes_timeline ON writes (subject_id, source, known_at)",
        """CREATE TABLE versions (
            version_id TEXT PRIMARY KEY,
            subject_id INTEGER NOT NULL REFERENCES subjects (subject_id),
            source     TEXT NOT NULL,
            value      TEXT NOT NULL,
            valid_from INTEGER NOT NULL,
            valid_to   INTEGER NOT NULL,
            known_from INTEGER NOT NULL,
            known_to   INTEGER NOT NULL,
            date_flags INTEGER NOT NULL,
            CHECK (valid_to > valid_from),
            CHECK (known_to >= known_from)
        )""",
        "CREATE INDEX versions_valid_from ON versions (subject_id, valid_from)",
        "CREATE INDEX versions_valid_to ON versions (subject_id, valid_to)",
        "CREATE INDEX versions_open ON versions (subject_id, source, known_to)",
        """CREATE TABLE precedence_rules (
            rule_id    TEXT PRIMARY KEY,
            lineage    TEXT NOT NULL,  -- '' = every lineage of the scope
            scope_key  TEXT NOT NULL,
            sources    TEXT NOT NULL,  -- JSON array, highest precedence first
            known_from INTEGER NOT NULL,
            known_to   INTEGER NOT NULL,
            date_flags INTEGER NOT NULL
        )""",
        "CREATE INDEX precedence_subject ON precedence_rules (lineage, scope_key, known_from)",
    ],
]

MIGRATIONS += RECORD_MIGRATIONS
MIGRATIONS += RETRIEVAL_MIGRATIONS

# The interval indexes (dropped by the benchmark's "same SQL without indexes" baseline).
INTERVAL_INDEXES = ("versions_valid_from", "versions_valid_to")

_VERSION_COLUMNS = (
    "v.version_id, s.lineage, s.scope_key, v.source, v.value, v.valid_from, v.valid_to, "
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
INSERT_VERSION = """INSERT INTO versions (version_id, subject_id, source, value, valid_from,
    valid_to, known_from, known_to, date_flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
CLOSE_VERSION = f"""UPDATE versions SET known_to = ?, date_flags = (date_flags & ~{_KT}) | ?
    WHERE version_id = ? AND known_to = {OPEN_END}"""
SELECT_CANDIDATES = f"""
WITH subject AS (SELECT subject_id FROM subjects WHERE lineage = :lineage AND scope_key = :scope)
SELECT {_VERSION_COLUMNS} FROM versions v JOIN subjects s USING (subject_id) WHERE v.rowid IN (
    SELECT rowid FROM versions
     WHERE subject_id = (SELECT subject_id FROM subject)
       AND valid_from <= :t AND valid_to > :t AND known_to > known_from
    UNION
    SELECT rowid FROM versions
     WHERE subject_id = (SELECT subject_id FROM subject)
       AND known_from <= :k AND known_to > :k
       AND valid_to = (SELECT MAX(valid_to) FROM versions
                        WHERE subject_id = (SELECT subject_id FROM subject)
                          AND valid_to <= :t AND known_from <= :k AND known_to > :k)
    UNION
    SELECT rowid FROM versions
     WHERE subject_id = (SELECT subject_id FROM subject)
       AND known_from <= :k AND known_to > :k
       AND valid_from = (SELECT MIN(valid_from) FROM versions
                          WHERE subject_id = (SELECT subject_id FROM subject)
                            AND valid_from > :t AND known_from <= :k AND known_to > :k)
    UNION
    SELECT rowid FROM versions
     WHERE subject_id IN (SELECT subject_id FROM subjects
                           WHERE lineage = :lineage AND scope_key <> :scope)
       AND valid_from <= :t AND valid_to > :t AND known_from <= :k AND known_to > :k
) ORDER BY v.rowid"""
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


def _end(instant: Instant | None) -> int:
    return OPEN_END if instant is None else instant.micros


def _instant(micros: int, flags: int, bit: int) -> Instant:
    return Instant(micros, bool(flags & bit))


def _open_instant(micros: int, flags: int, bit: int) -> Instant | None:
    return None if micros >= OPEN_END else Instant(micros, bool(flags & bit))


def _flags(*pairs: tuple[Instant | None, int]) -> int:
    return sum(bit for instant, bit in pairs if instant is not None and instant.is_date)


def _version(row: tuple[object, ...], scopes: dict[str, Scope]) -> Version:
    version_id, lineage, scope_key, source, value, vf, vt, kf, kt, flags = row
    assert isinstance(scope_key, str) and isinstance(flags, int)
    scope = scopes.get(scope_key)
    if scope is None:
        scope = scopes[scope_key] = Scope.from_key(scope_key)
    return Version(
        version_id=str(version_id),
        lineage=str(lineage),
        scope=scope,
        source=str(source),
        value_json=str(value),
        valid_from=_instant(int(vf), flags, _VF),  # type: ignore[call-overload]
        valid_to=_open_instant(int(vt), flags, _VT),  # type: ignore[call-overload]
        known_from=_instant(int(kf), flags, _KF),  # type: ignore[call-overload]
        known_to=_open_instant(int(kt), flags, _KT),  # type: ignore[call-overload]
    )


class SQLiteStore(SQLiteRecords, SQLiteRetrieval, Store):
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
            self._lock = threading.RLock()
            self._depth = 0
            self._scopes: dict[str, Scope] = {}
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
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
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
        key = scope.key
        row = self._conn.execute(SELECT_SUBJECT, (lineage, key)).fetchone()
        if row is None and create:
            self._conn.execute(INSERT_SUBJECT, (lineage, key))
            row = self._conn.execute(SELECT_SUBJECT, (lineage, key)).fetchone()
        return None if row is None else int(row[0])

    def _versions(self, rows: list[tuple[object, ...]]) -> list[Version]:
        return [_version(row, self._scopes) for row in rows]

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
        return cursor.lastrowid

    def latest_knowledge(self, lineage: str, scope: Scope, source: str) -> Instant | None:
        subject = self._subject(lineage, scope, create=False)
        if subject is None:
            return None
        row = self._conn.execute(SELECT_LATEST_KNOWLEDGE, (subject, source)).fetchone()
        return None if row is None else _instant(row[0], row[1], _KF)

    # -- versions --------------------------------------------------------------------------
    def current_versions(self, lineage: str, scope: Scope, source: str) -> list[Version]:
        subject = self._subject(lineage, scope, create=False)
        if subject is None:
            return []
        return self._versions(self._conn.execute(SELECT_CURRENT, (subject, source)).fetchall())

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
        flag = _KT if known_to.is_date else 0
        self._conn.executemany(
            CLOSE_VERSION, [(known_to.micros, flag, version_id) for version_id in version_ids]
        )

    def candidates(
        self, lineage: str, scope: Scope, valid_at: Instant, known_at: Instant
    ) -> list[Version]:
        params = {
            "lineage": lineage,
            "scope": scope.key,
            "t": valid_at.micros,
            "k": known_at.micros,
        }
        with self._lock:
            return self._versions(self._conn.execute(SELECT_CANDIDATES, params).fetchall())

    def history(self, lineage: str, scope: Scope | None = None) -> list[Version]:
        with self._lock:
            if scope is None:
                rows = self._conn.execute(SELECT_HISTORY, (lineage,)).fetchall()
            else:
                rows = self._conn.execute(SELECT_HISTORY_SCOPED, (lineage, scope.key)).fetchall()
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
                rule.scope.key,
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
            rows = self._conn.execute(SELECT_PRECEDENCE, (lineage or "", scope.key)).fetchall()
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
