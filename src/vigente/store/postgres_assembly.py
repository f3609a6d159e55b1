"""PostgreSQL table of recorded context assemblies (append-only; purged with their account).

Mixed into :class:`~vigente.store.postgres.PostgresStore`; the same shape as SQLite's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from vigente.store import postgres_runtime

__all__ = ["ASSEMBLY_MIGRATIONS", "PostgresAssembly"]

ASSEMBLY_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE runtime_assemblies (
            assembly_id     text COLLATE "C" PRIMARY KEY,
            conversation_id text COLLATE "C" NOT NULL
                            REFERENCES runtime_conversations (conversation_id),
            created_at      bigint NOT NULL,
            snapshot        bigint NOT NULL,
            payload         text NOT NULL
        )""",
        """CREATE INDEX runtime_assemblies_conversation
            ON runtime_assemblies (conversation_id, created_at)""",
    ],
]

# a purge of an account empties its assemblies too, and VACUUM FULL rewrites the table
if "runtime_assemblies" not in postgres_runtime.PURGE_TABLES:
    postgres_runtime.PURGE_TABLES.append("runtime_assemblies")
if "runtime_assemblies" not in postgres_runtime.COMPACT_TABLES:
    postgres_runtime.COMPACT_TABLES.insert(0, "runtime_assemblies")


class PostgresAssembly:
    _fetch: Callable[[str, Sequence[Any] | dict[str, Any]], list[tuple[Any, ...]]]
    _execute: Callable[[str, Sequence[Any]], None]

    def append_runtime_assembly(
        self,
        assembly_id: str,
        conversation_id: str,
        created_micros: int,
        snapshot_micros: int,
        payload_json: str,
    ) -> None:
        self._execute(
            "INSERT INTO runtime_assemblies (assembly_id, conversation_id, created_at, "
            "snapshot, payload) VALUES (%s, %s, %s, %s, %s)",
            (assembly_id, conversation_id, created_micros, snapshot_micros, payload_json),
        )

    def runtime_assembly(self, assembly_id: str) -> tuple[str, str] | None:
        rows = self._fetch(
            "SELECT conversation_id, payload FROM runtime_assemblies WHERE assembly_id = %s",
            (assembly_id,),
        )
        return None if not rows else (rows[0][0], rows[0][1])

    def runtime_assembly_ids(self, conversation_id: str) -> list[str]:
        rows = self._fetch(
            "SELECT assembly_id FROM runtime_assemblies WHERE conversation_id = "
            "%s ORDER BY created_at, assembly_id",
            (conversation_id,),
        )
        return [r[0] for r in rows]

    def delete_runtime_assemblies(self, conversation_id: str, assembly_ids: list[str]) -> int:
        rows = self._fetch(
            "DELETE FROM runtime_assemblies WHERE conversation_id = %s "
            "AND assembly_id = ANY(%s) RETURNING assembly_id",
            (conversation_id, list(assembly_ids)),
        )
        return len(rows)
