"""SQLite table of recorded context assemblies (append-only; purged with their account).

Mixed into :class:`~vigente.store.sqlite.SQLiteStore`. One row per assembly: its id, its
conversation, when it was made, the snapshot it read, and the record as JSON.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

from vigente.store.contracts import AssemblyLog, TokenCounts
from vigente.store.sqlite import runtime as sqlite_runtime
from vigente.time import Instant

__all__ = ["ASSEMBLY_MIGRATIONS", "SQLiteAssembly"]

ASSEMBLY_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE runtime_assemblies (
            assembly_id     TEXT PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES runtime_conversations (conversation_id),
            created_at      INTEGER NOT NULL,
            snapshot        INTEGER NOT NULL,
            payload         TEXT NOT NULL
        )""",
        """CREATE INDEX runtime_assemblies_conversation
            ON runtime_assemblies (conversation_id, created_at)""",
    ],
    # caches an assembly reads instead of the whole graph (filled on first need, in seq order;
    # ``runtime_cache_marks`` says how far): ``runtime_index``, one row per context record with
    # its protected-state class (``flag``) and its rank in its branch/participant/visibility
    # group (counts below a read horizon without reading the rows); ``runtime_token_counts``,
    # each replayed record's tokens per encoding and format with running sums per branch
    [
        """CREATE TABLE runtime_index (
            conversation_id TEXT NOT NULL REFERENCES runtime_conversations (conversation_id),
            seq             INTEGER NOT NULL,
            kind            TEXT NOT NULL,
            record_id       TEXT NOT NULL,
            branch_id       TEXT NOT NULL,  -- '' when none
            grp             TEXT,           -- NULL: not a ref of its own (an artifact)
            ordinal         INTEGER NOT NULL,
            known_from      INTEGER NOT NULL,
            flag            TEXT NOT NULL,  -- '' or instruction, user, troubled, skill_state, ...
            resolved        INTEGER,        -- a call: known_from of its first result
            PRIMARY KEY (conversation_id, seq)
        )""",
        "CREATE INDEX runtime_index_groups ON runtime_index (conversation_id, grp, seq)",
        "CREATE INDEX runtime_index_branch ON runtime_index (conversation_id, branch_id, seq)",
        """CREATE INDEX runtime_index_flags ON runtime_index (conversation_id, flag, branch_id, seq)
            WHERE flag <> ''""",
        """CREATE INDEX runtime_index_open ON runtime_index (conversation_id, resolved)
            WHERE kind = 'tool_call'""",
        "CREATE INDEX runtime_index_calls ON runtime_index (conversation_id, record_id)",
        """CREATE TABLE runtime_token_counts (
            conversation_id TEXT NOT NULL REFERENCES runtime_conversations (conversation_id),
            counter         TEXT NOT NULL,  -- encoding/format
            seq             INTEGER NOT NULL,
            branch_id       TEXT NOT NULL,
            position        INTEGER NOT NULL,
            known_from      INTEGER NOT NULL,
            tokens          INTEGER NOT NULL,
            messages        INTEGER NOT NULL,
            cum_tokens      INTEGER NOT NULL,
            cum_messages    INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, counter, seq)
        )""",
        """CREATE INDEX runtime_token_branch
            ON runtime_token_counts (conversation_id, counter, branch_id, seq)""",
        """CREATE TABLE runtime_cache_marks (
            conversation_id TEXT NOT NULL REFERENCES runtime_conversations (conversation_id),
            cache           TEXT NOT NULL,
            through         INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, cache)
        )""",
    ],
    # a cache catching up reads a conversation's records after its mark, by seq
    ["CREATE INDEX runtime_records_seq ON runtime_records (conversation_id, seq)"],
]



SELECT_LAST_SUMS = """SELECT cum_tokens, cum_messages FROM runtime_token_counts
    WHERE conversation_id = ? AND counter = ? AND branch_id = ? AND seq < ?
    ORDER BY seq DESC LIMIT 1"""
INSERT_TOKENS = """INSERT OR IGNORE INTO runtime_token_counts (conversation_id, counter, seq,
    branch_id, position, known_from, tokens, messages, cum_tokens, cum_messages)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
# the running sums of a branch as known at k, up to a fork point
SELECT_SUMS_AT = """SELECT cum_tokens, cum_messages FROM runtime_token_counts
    WHERE conversation_id = :c AND counter = :n AND branch_id = :b AND seq <= :upto
      AND +known_from <= :k ORDER BY seq DESC LIMIT 1"""
# rows of a branch after its fork point that sit before it (a later result of an earlier call)
SELECT_LATE = """SELECT coalesce(sum(tokens), 0), coalesce(sum(messages), 0)
    FROM runtime_token_counts
    WHERE conversation_id = :c AND counter = :n AND branch_id = :b AND seq > :upto
      AND position <= :upto AND +known_from <= :k"""


class SQLiteAssembly(AssemblyLog, TokenCounts):
    _conn: sqlite3.Connection
    _lock: threading.RLock

    def append_runtime_token_counts(self, conversation_id: str, counter: str,
                                    rows: Sequence[tuple[int, str, int, int, int, int]],
                                    through: int) -> None:
        with self._lock:
            sums: dict[str, tuple[int, int]] = {}
            for seq, branch, position, known, tokens, messages in rows:
                if branch not in sums:
                    found = self._conn.execute(SELECT_LAST_SUMS, (conversation_id, counter,
                                                                  branch, seq)).fetchone()
                    sums[branch] = (int(found[0]), int(found[1])) if found else (0, 0)
                t, m = sums[branch]
                sums[branch] = (t + tokens, m + messages)
                self._conn.execute(INSERT_TOKENS, (conversation_id, counter, seq, branch,
                                                   position, known, tokens, messages,
                                                   *sums[branch]))
            self._conn.execute(sqlite_runtime.UPSERT_MARK,
                               (conversation_id, f"tokens:{counter}", through))

    def runtime_token_total(self, conversation_id: str, counter: str,
                            windows: Sequence[tuple[str, int | None]],
                            known_at: Instant) -> tuple[int, int]:
        tokens = messages = 0
        with self._lock:
            for branch, upto in windows:
                params = {"c": conversation_id, "n": counter, "b": branch,
                          "upto": (1 << 62) if upto is None else upto, "k": known_at.micros}
                found = self._conn.execute(SELECT_SUMS_AT, params).fetchone()
                if found:
                    tokens, messages = tokens + found[0], messages + found[1]
                if upto is not None:
                    late = self._conn.execute(SELECT_LATE, params).fetchone()
                    tokens, messages = tokens + late[0], messages + late[1]
        return tokens, messages

    def append_runtime_assembly(
        self,
        assembly_id: str,
        conversation_id: str,
        created_micros: int,
        snapshot_micros: int,
        payload_json: str,
    ) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO runtime_assemblies (assembly_id, conversation_id, created_at, "
                "snapshot, payload) VALUES (?, ?, ?, ?, ?)",
                (assembly_id, conversation_id, created_micros, snapshot_micros, payload_json),
            )

    def runtime_assembly(self, assembly_id: str) -> tuple[str, str] | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT conversation_id, payload FROM runtime_assemblies WHERE assembly_id = ?",
                (assembly_id,),
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def runtime_assembly_ids(self, conversation_id: str) -> list[str]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT assembly_id FROM runtime_assemblies WHERE conversation_id = ? "
                "ORDER BY created_at, assembly_id",
                (conversation_id,),
            ).fetchall()
        return [r[0] for r in rows]

    def delete_runtime_assemblies(self, conversation_id: str, assembly_ids: list[str]) -> int:
        deleted = 0
        with self._lock:
            for first in range(0, len(assembly_ids), 500):
                chunk = assembly_ids[first : first + 500]
                marks = ", ".join("?" * len(chunk))  # placeholders only; the ids are bound
                deleted += self._conn.execute(
                    "DELETE FROM runtime_assemblies WHERE conversation_id = ? "
                    f"AND assembly_id IN ({marks})",
                    (conversation_id, *chunk),
                ).rowcount
        return deleted
