"""SQLite table of recorded context assemblies (append-only; purged with their account).

Mixed into :class:`~vigente.store.sqlite.SQLiteStore`. One row per assembly: its id, its
conversation, when it was made, the snapshot it read, and the record as JSON.
"""

from __future__ import annotations

import sqlite3
import threading

from vigente.store import sqlite_runtime

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
]

# a purge of an account empties its assemblies too (before its conversations go)
if "runtime_assemblies" not in sqlite_runtime.PURGE_TABLES:
    sqlite_runtime.PURGE_TABLES.append("runtime_assemblies")


class SQLiteAssembly:
    _conn: sqlite3.Connection
    _lock: threading.RLock

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
                    "DELETE FROM runtime_assemblies WHERE conversation_id = ? "  # noqa: S608
                    f"AND assembly_id IN ({marks})",
                    (conversation_id, *chunk),
                ).rowcount
        return deleted
