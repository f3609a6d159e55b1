"""SQLite tables of the runtime graph. Mixed into :class:`~vigente.store.sqlite.SQLiteStore`.

Every node is one append-only row of ``runtime_records`` (indexed columns, the rest as JSON);
raw artifact bytes are rows of ``runtime_contents``: inline when small, else a file of the
content-addressed blob store in the database file's folder (``<db>-blobs/ab/abcd…``), so that
the folder is the whole store. A ``:memory:`` database keeps its blobs in a table. Purge is the
one erasure: rows are deleted with ``secure_delete`` on (freed pages are zeroed), then the WAL
is checkpointed and truncated and the file rewritten by VACUUM.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vigente.records.runtime import Conversation, RuntimeRecord
from vigente.store.base import COMPACT_WAIT_MS, Compaction
from vigente.store.contracts import RuntimeContent, RuntimeIndex, RuntimeLog
from vigente.store.record_rows import DECODED
from vigente.time import Instant

__all__ = ["CONTENT_TOKEN_MIGRATIONS", "PURGE_EPOCH_MIGRATIONS", "RUNTIME_MIGRATIONS",
           "SQLiteRuntime", "blob_folder"]

RUNTIME_MIGRATIONS: list[list[str]] = [
    # the runtime graph: conversations, records (append-only), raw contents, blobs
    [
        """CREATE TABLE runtime_conversations (
            conversation_id TEXT PRIMARY KEY,
            account         TEXT NOT NULL,
            title           TEXT,
            known_from      INTEGER NOT NULL,
            date_flags      INTEGER NOT NULL
        )""",
        "CREATE INDEX runtime_conversations_account ON runtime_conversations (account)",
        """CREATE TABLE runtime_records (
            seq             INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES runtime_conversations (conversation_id),
            kind            TEXT NOT NULL,
            record_id       TEXT NOT NULL,
            branch_id       TEXT,
            participant_id  TEXT,
            run_id          TEXT,
            target_id       TEXT,
            visibility      TEXT,
            anchor          INTEGER,
            known_from      INTEGER NOT NULL,
            date_flags      INTEGER NOT NULL,
            payload         TEXT NOT NULL,
            UNIQUE (conversation_id, kind, record_id)
        )""",
        """CREATE INDEX runtime_owned ON runtime_records
            (conversation_id, branch_id, participant_id, seq)""",
        """CREATE INDEX runtime_visible ON runtime_records
            (conversation_id, branch_id, visibility, seq)""",
        "CREATE INDEX runtime_wide ON runtime_records (conversation_id, visibility, seq)",
        "CREATE INDEX runtime_targets ON runtime_records (conversation_id, target_id)",
        "CREATE INDEX runtime_ids ON runtime_records (record_id)",
        "CREATE INDEX runtime_known ON runtime_records (conversation_id, known_from)",
        """CREATE TABLE runtime_contents (
            conversation_id TEXT NOT NULL REFERENCES runtime_conversations (conversation_id),
            sha256          TEXT NOT NULL,
            bytes           INTEGER NOT NULL,
            data            BLOB,  -- NULL: in the blob store
            PRIMARY KEY (conversation_id, sha256)
        )""",
        "CREATE INDEX runtime_contents_sha ON runtime_contents (sha256)",
        """CREATE TABLE runtime_blobs (
            sha256 TEXT PRIMARY KEY,
            data   BLOB NOT NULL
        )""",
    ],
]

#: Token counts of raw contents, per encoding, derived once (at import for a large result) so
#: that an assembly's transcript-replay count never reads or tokenizes the bytes again. They
#: go with their contents (retention) and with the conversation (purge).
#: The purge epoch (one row): raised by every deletion of runtime records, in its transaction,
#: so that every process's decoded rows are forgotten after a purge (store/record_rows.py).
PURGE_EPOCH_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE runtime_purges (
            id    INTEGER PRIMARY KEY CHECK (id = 1),
            epoch INTEGER NOT NULL
        )""",
        "INSERT INTO runtime_purges (id, epoch) VALUES (1, 0)",
    ],
]
SELECT_PURGE_EPOCH = "SELECT epoch FROM runtime_purges"
RAISE_PURGE_EPOCH = "UPDATE runtime_purges SET epoch = epoch + 1"

CONTENT_TOKEN_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE runtime_content_tokens (
            conversation_id TEXT NOT NULL REFERENCES runtime_conversations (conversation_id),
            sha256          TEXT NOT NULL,
            encoding        TEXT NOT NULL,
            tokens          INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, sha256, encoding)
        )""",
    ],
]


def _files_holding(conn: sqlite3.Connection, db: Path, samples: Sequence[bytes]
                   ) -> tuple[str, int] | None:
    """The first of the database's files (the file, its log) holding any of ``samples`` that
    no live row holds (another account may say the same words), and how many; None when none
    does. One pass over each file; a live-row check only for what the pass found."""
    if not samples:
        return None
    import re

    pattern = re.compile(b"|".join(re.escape(s) for s in dict.fromkeys(samples)))
    for path in (db, db.with_name(db.name + "-wal")):
        if not path.exists() or path.stat().st_size == 0:
            continue
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0,
                                                   access=mmap.ACCESS_READ) as mapped:
            found = {bytes(m.group(0)) for m in pattern.finditer(mapped)}  # never read whole
        left = [sample for sample in found if not _live(conn, sample)]
        if left:
            return path.name, len(left)
    return None


def _live(conn: sqlite3.Connection, sample: bytes) -> bool:
    """Whether a row of any table still holds ``sample`` (its text or bytes)."""
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    for table in tables:
        columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
        if not columns:
            continue
        test = " OR ".join(f'instr(CAST("{c}" AS BLOB), ?) > 0' for c in columns)
        # identifiers come from the schema, the sample is bound
        if conn.execute(f'SELECT 1 FROM "{table}" WHERE {test} LIMIT 1',
                        [sample] * len(columns)).fetchone():
            return True
    return False


_COLUMNS = """seq, conversation_id, kind, record_id, branch_id, participant_id, run_id,
    target_id, visibility, anchor, known_from, date_flags, payload"""
INSERT_CONVERSATION = """INSERT INTO runtime_conversations
    (conversation_id, account, title, known_from, date_flags) VALUES (?, ?, ?, ?, ?)"""
SELECT_CONVERSATIONS = """SELECT conversation_id, account, title, known_from, date_flags
    FROM runtime_conversations"""
INSERT_RECORD = """INSERT INTO runtime_records (conversation_id, kind, record_id, branch_id,
    participant_id, run_id, target_id, visibility, anchor, known_from, date_flags, payload)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
SELECT_RECORDS = f"SELECT {_COLUMNS} FROM runtime_records"
# The records of one branch that a participant may see: its own, and those visible to the
# branch or the conversation; each group walks one index from the branch's first row.
SELECT_ON_BRANCH = f"""
SELECT {_COLUMNS} FROM runtime_records
 WHERE conversation_id = :c AND branch_id = :b AND participant_id = :p
   AND +known_from <= :k AND coalesce(anchor, seq) <= :upto AND seq >= :since
UNION ALL
SELECT {_COLUMNS} FROM runtime_records
 WHERE conversation_id = :c AND branch_id = :b AND visibility IN ('branch', 'conversation')
   AND participant_id IS NOT :p AND +known_from <= :k AND coalesce(anchor, seq) <= :upto
   AND seq >= :since"""
# Records of any branch visible to the whole conversation, and the shares and promotions that
# name the participant (their targets are read next, by id).
SELECT_REACHABLE = f"""
SELECT {_COLUMNS} FROM runtime_records
 WHERE conversation_id = :c AND visibility = 'conversation' AND +known_from <= :k
   AND seq >= :since
UNION ALL
SELECT {_COLUMNS} FROM runtime_records
 WHERE conversation_id = :c AND branch_id IS NULL AND participant_id = :p
   AND kind IN ('share', 'promotion') AND +known_from <= :k"""
SELECT_LATEST = "SELECT MAX(known_from) FROM runtime_records WHERE conversation_id = ?"
SELECT_RECORD_HOMES = """SELECT DISTINCT conversation_id, kind, record_id FROM runtime_records
    WHERE record_id = ?"""
INSERT_CONTENT = """INSERT OR IGNORE INTO runtime_contents (conversation_id, sha256, bytes, data)
    VALUES (?, ?, ?, ?)"""
SELECT_CONTENT = "SELECT bytes, data FROM runtime_contents WHERE conversation_id = ? AND sha256 = ?"
SELECT_REFERENCED = "SELECT 1 FROM runtime_contents WHERE sha256 = ? AND data IS NULL LIMIT 1"
INSERT_BLOB = "INSERT OR IGNORE INTO runtime_blobs (sha256, data) VALUES (?, ?)"
SELECT_BLOB = "SELECT data FROM runtime_blobs WHERE sha256 = ?"
INSERT_CONTENT_TOKENS = """INSERT OR IGNORE INTO runtime_content_tokens
    (conversation_id, sha256, encoding, tokens) VALUES (?, ?, ?, ?)"""
SELECT_CONTENT_TOKENS = """SELECT sha256, tokens FROM runtime_content_tokens
    WHERE conversation_id = ? AND encoding = ? AND sha256 IN {}"""
DELETE_CONTENT_TOKENS = """DELETE FROM runtime_content_tokens
    WHERE conversation_id = ? AND sha256 = ?"""
# The read caches (tables created by ASSEMBLY_MIGRATIONS, see store/base.py).
SELECT_AFTER = f"""SELECT {_COLUMNS} FROM runtime_records WHERE conversation_id = ? AND seq > ?
    ORDER BY seq LIMIT ?"""
SELECT_MARK = "SELECT through FROM runtime_cache_marks WHERE conversation_id = ? AND cache = ?"
UPSERT_MARK = """INSERT INTO runtime_cache_marks (conversation_id, cache, through)
    VALUES (?, ?, ?) ON CONFLICT (conversation_id, cache)
    DO UPDATE SET through = max(through, excluded.through)"""
SELECT_LAST_RANK = """SELECT ordinal FROM runtime_index
    WHERE conversation_id = ? AND grp = ? AND seq < ? ORDER BY seq DESC LIMIT 1"""
# the rank of each (group, below) bound: its last ordinal before ``below`` (VALUES filled in)
SELECT_RANKS = """WITH x (n, g, b) AS (VALUES {})
    SELECT (SELECT i.ordinal FROM runtime_index i WHERE i.conversation_id = ? AND i.grp = x.g
            AND i.seq < x.b ORDER BY i.seq DESC LIMIT 1) FROM x ORDER BY x.n"""
INSERT_INDEX = """INSERT OR IGNORE INTO runtime_index (conversation_id, seq, kind, record_id,
    branch_id, grp, ordinal, known_from, flag) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
RESOLVE_CALL = """UPDATE runtime_index SET resolved = ?
    WHERE conversation_id = ? AND record_id = ? AND kind = 'tool_call' AND resolved IS NULL"""
_RECORD_COLUMNS = ", ".join(f"r.{c.strip()}" for c in _COLUMNS.split(","))
SELECT_FLAGGED = f"""SELECT {_RECORD_COLUMNS} FROM runtime_index i
    JOIN runtime_records r ON r.seq = i.seq
    WHERE i.conversation_id = :c AND i.flag <> '' AND i.flag = :f AND +i.known_from <= :k"""
SELECT_OPEN_CALLS = f"""SELECT {_RECORD_COLUMNS} FROM runtime_index i
    JOIN runtime_records r ON r.seq = i.seq
    WHERE i.conversation_id = :c AND i.kind = 'tool_call' AND i.resolved IS NULL
      AND +i.known_from <= :k
UNION ALL
SELECT {_RECORD_COLUMNS} FROM runtime_index i
    JOIN runtime_records r ON r.seq = i.seq
    WHERE i.conversation_id = :c AND i.kind = 'tool_call' AND i.resolved > :k
      AND +i.known_from <= :k"""
SELECT_HORIZON = """SELECT seq FROM runtime_index
    WHERE conversation_id = :c AND branch_id = :b AND seq <= :upto AND grp IS NOT NULL
      AND +known_from <= :k ORDER BY seq DESC LIMIT 1 OFFSET :skip"""
#: Every table keyed by conversation that a purge empties, in the order it empties them: the
#: recall index (created by RECALL_MIGRATIONS), the records and their contents, then the read
#: caches and the recorded assemblies (ASSEMBLY_MIGRATIONS). The conversation row goes last.
PURGE_TABLES = (
    "runtime_recall_vector_marks",
    "runtime_recall_vectors",
    "runtime_recall_terms",
    "runtime_recall",
    "runtime_records",
    "runtime_contents",
    "runtime_content_tokens",
    "runtime_assemblies",
    "runtime_index",
    "runtime_token_counts",
    "runtime_cache_marks",
)

_DATE = 1  # date_flags bit: known_from was given as a date


def blob_folder(path: str) -> Path | None:
    """Where the blob files of the SQLite database at ``path`` live (None: in memory)."""
    if path == ":memory:" or path.startswith("file:"):
        return None
    db = Path(path)
    return db.with_name(db.name + "-blobs")


def _record(row: tuple[Any, ...]) -> RuntimeRecord:
    (seq, conversation_id, kind, record_id, branch_id, participant_id, run_id, target_id,
     visibility, anchor, known_from, flags, payload) = row
    return RuntimeRecord(conversation_id, kind, record_id, Instant(known_from, bool(flags & _DATE)),
                         json.loads(payload), branch_id, participant_id, run_id, target_id,
                         visibility, anchor, seq)


def _decode(row: tuple[Any, ...]) -> RuntimeRecord:
    return DECODED.decode(row, _record)


def _in(n: int) -> str:
    return "(" + ", ".join("?" * n) + ")"


class SQLiteRuntime(RuntimeLog, RuntimeContent, RuntimeIndex):
    """The runtime graph tables of the SQLite backend."""

    url: str
    _conn: sqlite3.Connection
    _lock: threading.RLock
    _created_blobs: list[str]
    _purges_version: int | None = None  # PRAGMA data_version when the purge epoch was read

    def _runtime_select(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()
                        ) -> list[tuple[Any, ...]]:
        with self._lock:
            self._note_purges()
            return self._conn.execute(sql, params).fetchall()

    def _note_purges(self) -> None:
        """Hand the purge epoch to the decoded rows when another connection has committed
        since this one last looked (``PRAGMA data_version`` moves then only: a few
        microseconds, no read of the database file)."""
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._purges_version:
            self._purges_version = version
            DECODED.note_purges(self.url, self._conn.execute(SELECT_PURGE_EPOCH).fetchone()[0])

    # -- conversations ---------------------------------------------------------------------
    def append_runtime_conversation(self, conversation: Conversation) -> None:
        with self._lock:
            self._conn.execute(INSERT_CONVERSATION, (
                conversation.id, conversation.account, conversation.title,
                conversation.known_from.micros, _DATE if conversation.known_from.is_date else 0))

    def runtime_conversations(self, *, account: str | None = None,
                              ids: Sequence[str] | None = None) -> list[Conversation]:
        if ids is not None:
            rows: list[tuple[Any, ...]] = []
            for start in range(0, len(ids), 500):
                chunk = list(ids[start:start + 500])
                rows += self._runtime_select(
                    f"{SELECT_CONVERSATIONS} WHERE conversation_id IN {_in(len(chunk))}", chunk)
        elif account is not None:
            rows = self._runtime_select(f"{SELECT_CONVERSATIONS} WHERE account = ?", (account,))
        else:
            rows = self._runtime_select(SELECT_CONVERSATIONS)
        return sorted(
            (Conversation(cid, acct, Instant(kf, bool(flags & _DATE)), title)
             for cid, acct, title, kf, flags in rows),
            key=lambda c: c.id,
        )

    # -- records ---------------------------------------------------------------------------
    def append_runtime_records(self, records: Sequence[RuntimeRecord]) -> list[int]:
        seqs = []
        with self._lock:
            for r in records:
                cursor = self._conn.execute(INSERT_RECORD, (
                    r.conversation_id, r.kind, r.record_id, r.branch_id, r.participant_id,
                    r.run_id, r.target_id, r.visibility, r.anchor, r.known_from.micros,
                    _DATE if r.known_from.is_date else 0, r.payload_json()))
                assert cursor.lastrowid is not None
                seqs.append(cursor.lastrowid)
        return seqs

    def runtime_records(self, conversation_id: str, *, kinds: Sequence[str] | None = None,
                        record_ids: Sequence[str] | None = None,
                        target_ids: Sequence[str] | None = None,
                        known_at: Instant | None = None) -> list[RuntimeRecord]:
        where = ["conversation_id = ?"]
        params: list[Any] = [conversation_id]
        if known_at is not None:
            where.append("+known_from <= ?")  # (+: never the index for it)
            params.append(known_at.micros)
        if kinds is not None:
            where.append(f"kind IN {_in(len(kinds))}")
            params += kinds
        keys: list[tuple[str, Sequence[str]]] = []
        if record_ids is not None:
            keys.append(("record_id", record_ids))
        if target_ids is not None:
            keys.append(("target_id", target_ids))
        if not keys:
            # +seq: order after the seek; ordering by the (conversation_id, seq) index would
            # walk the whole conversation to find a few kinds
            sql = f"{SELECT_RECORDS} WHERE {' AND '.join(where)} ORDER BY +seq"
            return [_decode(row) for row in self._runtime_select(sql, params)]
        found: dict[int, RuntimeRecord] = {}
        for column, values in keys:
            values = list(dict.fromkeys(values))
            for start in range(0, len(values), 400):
                chunk = values[start:start + 400]
                # by id: the record_id index (+: not a walk of the conversation by seq)
                clause = " AND ".join(where)
                if column == "record_id":
                    clause = "+" + clause
                sql = f"{SELECT_RECORDS} WHERE {clause} AND {column} IN {_in(len(chunk))}"
                for row in self._runtime_select(sql, params + chunk):
                    found[row[0]] = _decode(row)
        return [found[seq] for seq in sorted(found)]

    def runtime_branch_records(self, conversation_id: str, branch_id: str, upto: int | None,
                               participant_id: str, known_at: Instant, since: int = 0
                               ) -> list[RuntimeRecord]:
        params = {"c": conversation_id, "b": branch_id, "p": participant_id,
                  "k": known_at.micros, "upto": (1 << 62) if upto is None else upto,
                  "since": since}
        return sorted((_decode(r) for r in self._runtime_select(SELECT_ON_BRANCH, params)),
                      key=lambda r: r.seq)

    def runtime_reachable(self, conversation_id: str, participant_id: str,
                          known_at: Instant, since: int = 0) -> list[RuntimeRecord]:
        params = {"c": conversation_id, "p": participant_id, "k": known_at.micros,
                  "since": since}
        return sorted((_decode(r) for r in self._runtime_select(SELECT_REACHABLE, params)),
                      key=lambda r: r.seq)

    def runtime_record_homes(self, record_id: str) -> list[tuple[str, str]]:
        return sorted({(c, kind) for c, kind, _ in
                       self._runtime_select(SELECT_RECORD_HOMES, (record_id,))})

    def runtime_latest_knowledge(self, conversation_id: str) -> Instant | None:
        (row,) = self._runtime_select(SELECT_LATEST, (conversation_id,))
        return None if row[0] is None else Instant(row[0])

    # -- read caches -----------------------------------------------------------------------
    def runtime_records_after(self, conversation_id: str, seq: int, limit: int
                              ) -> list[RuntimeRecord]:
        return [_decode(r) for r in self._runtime_select(SELECT_AFTER, (conversation_id, seq,
                                                                        limit))]

    def runtime_cache_mark(self, conversation_id: str, cache: str) -> int:
        rows = self._runtime_select(SELECT_MARK, (conversation_id, cache))
        return int(rows[0][0]) if rows else 0

    def _set_mark(self, conversation_id: str, cache: str, through: int) -> None:
        self._conn.execute(UPSERT_MARK, (conversation_id, cache, through))

    def append_runtime_index(self, conversation_id: str, rows: Sequence[tuple[Any, ...]],
                             through: int) -> None:
        with self._lock:
            ranks: dict[str, int] = {}
            for seq, kind, record_id, target_id, branch_id, group, known, flag in rows:
                ordinal = 0
                if group is not None:
                    if group not in ranks:
                        found = self._conn.execute(SELECT_LAST_RANK, (conversation_id, group,
                                                                      seq)).fetchone()
                        ranks[group] = int(found[0]) if found else 0
                    ranks[group] += 1
                    ordinal = ranks[group]
                self._conn.execute(INSERT_INDEX, (conversation_id, seq, kind, record_id,
                                                  branch_id, group, ordinal, known, flag))
                if kind == "artifact" and target_id is not None:
                    self._conn.execute(RESOLVE_CALL, (known, conversation_id, target_id))
            self._set_mark(conversation_id, "index", through)

    def runtime_flagged(self, conversation_id: str, flag: str, known_at: Instant, *,
                        branch_id: str | None = None, upto: int | None = None,
                        limit: int | None = None) -> list[RuntimeRecord]:
        # (+i.seq without a branch: seek the flag, then sort; not a walk of the conversation)
        sql = SELECT_FLAGGED + (" AND i.branch_id = :b AND i.seq <= :upto ORDER BY i.seq DESC"
                                if branch_id is not None else " ORDER BY +i.seq DESC")
        sql += " LIMIT :n"
        params = {"c": conversation_id, "f": flag, "k": known_at.micros, "b": branch_id,
                  "upto": (1 << 62) if upto is None else upto, "n": -1 if limit is None else limit}
        return [_decode(r) for r in self._runtime_select(sql, params)]

    def runtime_open_calls(self, conversation_id: str, known_at: Instant
                           ) -> list[RuntimeRecord]:
        params = {"c": conversation_id, "k": known_at.micros}
        return sorted((_decode(r) for r in self._runtime_select(SELECT_OPEN_CALLS, params)),
                      key=lambda r: r.seq)

    def runtime_horizon(self, conversation_id: str, branch_id: str, upto: int | None,
                        before: int | None, known_at: Instant, count: int) -> int | None:
        bound = min((1 << 62) if upto is None else upto, (1 << 62) if before is None
                    else before - 1)
        rows = self._runtime_select(SELECT_HORIZON, {"c": conversation_id, "b": branch_id,
                                                     "upto": bound, "k": known_at.micros,
                                                     "skip": count - 1})
        return int(rows[0][0]) if rows else None

    def runtime_group_counts(self, conversation_id: str,
                             bounds: Sequence[tuple[str, int]]) -> list[int]:
        out: list[int] = []
        for start in range(0, len(bounds), 300):  # one statement per 300 bounds, a seek each
            chunk = bounds[start:start + 300]
            params: list[Any] = [p for n, (group, below) in enumerate(chunk)
                                 for p in (n, group, below)]
            rows = self._runtime_select(SELECT_RANKS.format(
                ", ".join(["(?, ?, ?)"] * len(chunk))), [*params, conversation_id])
            out += [int(r[0] or 0) for r in rows]
        return out

    # -- contents and blobs ----------------------------------------------------------------
    def put_runtime_content(self, conversation_id: str, sha256: str, data: bytes, *,
                            inline: bool) -> None:
        with self._lock:
            if not inline:
                self._put_blob(sha256, data)
            self._conn.execute(INSERT_CONTENT, (conversation_id, sha256, len(data),
                                                data if inline else None))

    def runtime_content(self, conversation_id: str, sha256: str) -> bytes | None:
        rows = self._runtime_select(SELECT_CONTENT, (conversation_id, sha256))
        if not rows:
            return None
        size, data = rows[0]
        if data is not None:
            return bytes(data)
        return self._get_blob(sha256)

    def runtime_contents(self, conversation_id: str, sha256s: Sequence[str]
                         ) -> dict[str, bytes | None]:
        found: dict[str, bytes | None] = dict.fromkeys(sha256s)
        wanted = list(found)
        for start in range(0, len(wanted), 400):
            chunk = wanted[start:start + 400]
            sql = ("SELECT sha256, data FROM runtime_contents WHERE conversation_id = ? "
                   f"AND sha256 IN {_in(len(chunk))}")
            for sha, data in self._runtime_select(sql, [conversation_id, *chunk]):
                found[sha] = bytes(data) if data is not None else self._get_blob(sha)
        return found

    def put_runtime_content_tokens(self, conversation_id: str,
                                   counts: Sequence[tuple[str, str, int]]) -> None:
        if counts:
            with self._lock:
                self._conn.executemany(INSERT_CONTENT_TOKENS,
                                       [(conversation_id, *row) for row in counts])

    def runtime_content_tokens(self, conversation_id: str, sha256s: Sequence[str],
                               encoding: str) -> dict[str, int]:
        found: dict[str, int] = {}
        wanted = list(dict.fromkeys(sha256s))
        for start in range(0, len(wanted), 400):
            chunk = wanted[start:start + 400]
            rows = self._runtime_select(SELECT_CONTENT_TOKENS.format(_in(len(chunk))),
                                        [conversation_id, encoding, *chunk])
            found.update((sha, int(tokens)) for sha, tokens in rows)
        return found

    def delete_runtime_contents(self, conversation_id: str, sha256s: Sequence[str]) -> int:
        count = 0
        with self._lock, self._secure():
            for sha in dict.fromkeys(sha256s):
                count += self._conn.execute(
                    "DELETE FROM runtime_contents WHERE conversation_id = ? AND sha256 = ?",
                    (conversation_id, sha)).rowcount
                self._conn.execute(DELETE_CONTENT_TOKENS, (conversation_id, sha))
        return count

    def delete_runtime_records(self, conversation_id: str, seqs: Sequence[int]) -> int:
        count = 0
        DECODED.forget()
        with self._lock, self._secure():
            self._conn.execute(RAISE_PURGE_EPOCH)
            for seq in seqs:
                count += self._conn.execute(
                    "DELETE FROM runtime_records WHERE conversation_id = ? AND seq = ?",
                    (conversation_id, seq)).rowcount
        return count

    def delete_runtime_conversations(self, conversation_ids: Sequence[str]) -> int:
        count = 0
        DECODED.forget()
        with self._lock, self._secure():
            self._conn.execute(RAISE_PURGE_EPOCH)
            for cid in conversation_ids:
                for table in PURGE_TABLES:  # names from a fixed list
                    count += self._conn.execute(
                        f"DELETE FROM {table} WHERE conversation_id = ?", (cid,)).rowcount
                count += self._conn.execute(
                    "DELETE FROM runtime_conversations WHERE conversation_id = ?", (cid,)
                ).rowcount
        return count

    def runtime_blob_digests(self) -> list[str]:
        folder = blob_folder(self.url)
        if folder is None:
            return sorted(r[0] for r in self._runtime_select("SELECT sha256 FROM runtime_blobs"))
        if not folder.exists():
            return []
        return sorted(p.name for p in folder.glob("*/*") if len(p.name) == 64)

    def runtime_blob_referenced(self, sha256: str) -> bool:
        return bool(self._runtime_select(SELECT_REFERENCED, (sha256,)))

    def delete_runtime_blobs(self, sha256s: Sequence[str]) -> int:
        folder = blob_folder(self.url)
        count = 0
        with self._lock:
            for sha in sha256s:
                if folder is None:
                    with self._secure():
                        count += self._conn.execute(
                            "DELETE FROM runtime_blobs WHERE sha256 = ?", (sha,)).rowcount
                    continue
                path = folder / sha[:2] / sha
                if path.exists():
                    _overwrite(path)
                    path.unlink()
                    count += 1
        self._created_blobs = []
        return count

    def end_runtime_blobs(self, committed: bool) -> None:
        created: list[str] = getattr(self, "_created_blobs", [])
        self._created_blobs = []
        if not committed:
            self.delete_runtime_blobs([sha for sha in created
                                       if not self.runtime_blob_referenced(sha)])

    def runtime_compact(self, *, full: bool = True, samples: Sequence[bytes] = ()
                        ) -> Compaction:
        if self.url == ":memory:":
            return Compaction(True, "an in-memory database: nothing was written to a file")
        with self._lock:
            if self._conn.in_transaction:
                return Compaction(False, "inside a transaction: not compacted")
            (timeout,) = self._conn.execute("PRAGMA busy_timeout").fetchone()
            # a reader holding an old snapshot blocks the checkpoint: wait for it a little,
            # never the connection's whole timeout (the tenant's writers wait meanwhile)
            self._conn.execute(f"PRAGMA busy_timeout = {COMPACT_WAIT_MS}")
            try:
                self._conn.execute("PRAGMA temp_store = MEMORY")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                if full:
                    self._conn.execute("VACUUM")
                busy, _, _ = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.OperationalError as exc:
                return Compaction(False, f"the compaction could not finish ({exc}): run "
                                  "`vigente runtime gc` (or the purge again) when the store is "
                                  "less busy")
            finally:
                self._conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
        if busy:
            return Compaction(False, "another connection is reading an older snapshot, so the "
                              "write-ahead log, which still holds the erased text, could not be "
                              "truncated: run the purge again (or `vigente runtime gc`) when "
                              "it has closed")
        with self._lock:
            left = _files_holding(self._conn, Path(self.url), samples)
        if left:
            return Compaction(False, f"{left[1]} of the {len(samples)} sampled erased texts "
                              f"are still in {left[0]}: run `vigente runtime gc` to finish, "
                              "and check for copies of the text outside this account")
        checked = (f"; none of {len(samples)} sampled erased texts is left in the database "
                   "or its log") if samples else ""
        done = ("deleted pages zeroed (secure_delete), WAL checkpointed and truncated, file "
                "rewritten") if full else "WAL checkpointed and truncated"
        return Compaction(True, done + checked)

    # -- helpers ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def _secure(self) -> Any:
        """Zero the pages a deletion frees (the text must not stay in the file)."""
        self._conn.execute("PRAGMA secure_delete = ON")
        yield

    def _put_blob(self, sha256: str, data: bytes) -> None:
        folder = blob_folder(self.url)
        if folder is None:
            self._conn.execute(INSERT_BLOB, (sha256, data))
            return
        path = folder / sha256[:2] / sha256
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{sha256}.{os.getpid()}.tmp")
        with open(temporary, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
        if not hasattr(self, "_created_blobs"):
            self._created_blobs = []
        self._created_blobs.append(sha256)

    def _get_blob(self, sha256: str) -> bytes | None:
        folder = blob_folder(self.url)
        if folder is None:
            rows = self._runtime_select(SELECT_BLOB, (sha256,))
            return bytes(rows[0][0]) if rows else None
        path = folder / sha256[:2] / sha256
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None


def _overwrite(path: Path) -> None:
    """Overwrite a blob file with zeros before unlinking it (a hard link or a copy elsewhere
    is out of reach; the file system may still keep old blocks, see docs/runtime.md)."""
    size = path.stat().st_size
    with open(path, "r+b") as out:
        chunk = b"\0" * min(size, 1 << 20)
        left = size
        while left > 0:
            out.write(chunk[:left])
            left -= len(chunk)
        out.flush()
        os.fsync(out.fileno())
