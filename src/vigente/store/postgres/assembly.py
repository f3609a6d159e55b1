"""PostgreSQL table of recorded context assemblies (append-only; purged with their account).

Mixed into :class:`~vigente.store.postgres.PostgresStore`; the same shape as SQLite's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from vigente.store.contracts import AssemblyLog, TokenCounts
from vigente.store.postgres import runtime as postgres_runtime
from vigente.time import Instant

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
    # the read caches of store/base.py (as SQLite's; instants as microseconds)
    [
        """CREATE TABLE runtime_index (
            conversation_id text COLLATE "C" NOT NULL
                            REFERENCES runtime_conversations (conversation_id),
            seq             bigint NOT NULL,
            kind            text COLLATE "C" NOT NULL,
            record_id       text COLLATE "C" NOT NULL,
            branch_id       text COLLATE "C" NOT NULL,
            grp             text COLLATE "C",
            ordinal         bigint NOT NULL,
            known_from      bigint NOT NULL,
            flag            text COLLATE "C" NOT NULL,
            resolved        bigint,
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
            conversation_id text COLLATE "C" NOT NULL
                            REFERENCES runtime_conversations (conversation_id),
            counter         text COLLATE "C" NOT NULL,
            seq             bigint NOT NULL,
            branch_id       text COLLATE "C" NOT NULL,
            position        bigint NOT NULL,
            known_from      bigint NOT NULL,
            tokens          bigint NOT NULL,
            messages        bigint NOT NULL,
            cum_tokens      bigint NOT NULL,
            cum_messages    bigint NOT NULL,
            PRIMARY KEY (conversation_id, counter, seq)
        )""",
        """CREATE INDEX runtime_token_branch
            ON runtime_token_counts (conversation_id, counter, branch_id, seq)""",
        """CREATE TABLE runtime_cache_marks (
            conversation_id text COLLATE "C" NOT NULL
                            REFERENCES runtime_conversations (conversation_id),
            cache           text COLLATE "C" NOT NULL,
            through         bigint NOT NULL,
            PRIMARY KEY (conversation_id, cache)
        )""",
    ],
    # a cache catching up reads a conversation's records after its mark, by seq
    ["CREATE INDEX runtime_records_seq ON runtime_records (conversation_id, seq)"],
]


SELECT_LAST_SUMS = """SELECT cum_tokens, cum_messages FROM runtime_token_counts
    WHERE conversation_id = %s AND counter = %s AND branch_id = %s AND seq < %s
    ORDER BY seq DESC LIMIT 1"""
INSERT_TOKENS = """INSERT INTO runtime_token_counts (conversation_id, counter, seq, branch_id,
    position, known_from, tokens, messages, cum_tokens, cum_messages)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"""
SELECT_SUMS_AT = """SELECT cum_tokens, cum_messages FROM runtime_token_counts
    WHERE conversation_id = %(c)s AND counter = %(n)s AND branch_id = %(b)s
      AND seq <= %(upto)s AND known_from <= %(k)s ORDER BY seq DESC LIMIT 1"""
SELECT_LATE = """SELECT coalesce(sum(tokens), 0), coalesce(sum(messages), 0)
    FROM runtime_token_counts
    WHERE conversation_id = %(c)s AND counter = %(n)s AND branch_id = %(b)s
      AND seq > %(upto)s AND position <= %(upto)s AND known_from <= %(k)s"""


class PostgresAssembly(AssemblyLog, TokenCounts):
    _fetch: Callable[[str, Sequence[Any] | dict[str, Any]], list[tuple[Any, ...]]]
    _read: Callable[[str, Sequence[Any] | dict[str, Any]], list[tuple[Any, ...]]]
    _execute: Callable[[str, Sequence[Any]], None]
    _execute_many: Callable[[str, Sequence[Sequence[Any]]], None]

    def append_runtime_token_counts(self, conversation_id: str, counter: str,
                                    rows: Sequence[tuple[int, str, int, int, int, int]],
                                    through: int) -> None:
        sums: dict[str, tuple[int, int]] = {}
        out = []
        for seq, branch, position, known, tokens, messages in rows:
            if branch not in sums:
                found = self._fetch(SELECT_LAST_SUMS, (conversation_id, counter, branch, seq))
                sums[branch] = (int(found[0][0]), int(found[0][1])) if found else (0, 0)
            t, m = sums[branch]
            sums[branch] = (t + tokens, m + messages)
            out.append((conversation_id, counter, seq, branch, position, known, tokens,
                        messages, *sums[branch]))
        if out:
            self._execute_many(INSERT_TOKENS, out)
        self._execute(postgres_runtime.UPSERT_MARK, (conversation_id, f"tokens:{counter}",
                                                     through))

    def runtime_token_total(self, conversation_id: str, counter: str,
                            windows: Sequence[tuple[str, int | None]],
                            known_at: Instant) -> tuple[int, int]:
        tokens = messages = 0
        for branch, upto in windows:
            params = {"c": conversation_id, "n": counter, "b": branch,
                      "upto": (1 << 62) if upto is None else upto, "k": known_at.micros}
            found = self._read(SELECT_SUMS_AT, params)
            if found:
                tokens, messages = tokens + int(found[0][0]), messages + int(found[0][1])
            if upto is not None:
                ((late_t, late_m),) = self._read(SELECT_LATE, params)
                tokens, messages = tokens + int(late_t), messages + int(late_m)
        return tokens, messages

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
