"""PostgreSQL tables of the runtime graph. Mixed into
:class:`~vigente.store.postgres.PostgresStore`; the same rows and orders as
``sqlite_runtime.py``. Raw bytes over the inline threshold are rows of ``runtime_blobs``
(content-addressed, ``bytea``, TOASTed out of line by the server).

Purge deletes the rows and then runs ``VACUUM FULL`` on the runtime tables: the server rewrites
each table and its indexes into new files and unlinks the old ones, so no live data file holds
the deleted tuples. What VACUUM does not reach: WAL segments not yet recycled, base backups and
WAL archives, replicas' own copies, and blocks the file system has not reused (docs/runtime.md).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg

from vigente.errors import StoreError
from vigente.records.runtime import Conversation, RuntimeRecord
from vigente.store.base import COMPACT_WAIT_MS, Compaction
from vigente.store.contracts import RuntimeContent, RuntimeIndex, RuntimeLog
from vigente.store.record_rows import DECODED
from vigente.time import Instant

__all__ = ["CONTENT_TOKEN_MIGRATIONS", "PURGE_EPOCH_MIGRATIONS", "RUNTIME_MIGRATIONS",
           "PostgresRuntime"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MICROSECOND = _dt.timedelta(microseconds=1)
_DATE = 1

RUNTIME_MIGRATIONS: list[list[str]] = [
    # the runtime graph: conversations, records (append-only), raw contents, blobs
    [
        """CREATE TABLE runtime_conversations (
            conversation_id text COLLATE "C" PRIMARY KEY,
            account         text COLLATE "C" NOT NULL,
            title           text,
            known_from      timestamptz NOT NULL,
            date_flags      smallint NOT NULL
        )""",
        "CREATE INDEX runtime_conversations_account ON runtime_conversations (account)",
        """CREATE TABLE runtime_records (
            seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            conversation_id text COLLATE "C" NOT NULL
                            REFERENCES runtime_conversations (conversation_id),
            kind            text COLLATE "C" NOT NULL,
            record_id       text COLLATE "C" NOT NULL,
            branch_id       text COLLATE "C",
            participant_id  text COLLATE "C",
            run_id          text COLLATE "C",
            target_id       text COLLATE "C",
            visibility      text COLLATE "C",
            anchor          bigint,
            known_from      timestamptz NOT NULL,
            date_flags      smallint NOT NULL,
            payload         text NOT NULL,
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
            conversation_id text COLLATE "C" NOT NULL
                            REFERENCES runtime_conversations (conversation_id),
            sha256          text COLLATE "C" NOT NULL,
            bytes           bigint NOT NULL,
            data            bytea,  -- NULL: in runtime_blobs
            PRIMARY KEY (conversation_id, sha256)
        )""",
        "CREATE INDEX runtime_contents_sha ON runtime_contents (sha256)",
        """CREATE TABLE runtime_blobs (
            sha256 text COLLATE "C" PRIMARY KEY,
            data   bytea NOT NULL
        )""",
    ],
]

#: The purge epoch (one row): raised by every deletion of runtime records, in its transaction,
#: so that every process's decoded rows are forgotten after a purge (store/record_rows.py).
PURGE_EPOCH_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE runtime_purges (
            id    integer PRIMARY KEY CHECK (id = 1),
            epoch bigint NOT NULL
        )""",
        "INSERT INTO runtime_purges (id, epoch) VALUES (1, 0)",
    ],
]
SELECT_PURGE_EPOCH = "SELECT epoch FROM runtime_purges"
RAISE_PURGE_EPOCH = "UPDATE runtime_purges SET epoch = epoch + 1"

#: Token counts of raw contents, per encoding (see store/sqlite/runtime.py): gone with their
#: contents (retention) and with the conversation (purge).
CONTENT_TOKEN_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE runtime_content_tokens (
            conversation_id text COLLATE "C" NOT NULL
                            REFERENCES runtime_conversations (conversation_id),
            sha256          text COLLATE "C" NOT NULL,
            encoding        text COLLATE "C" NOT NULL,
            tokens          bigint NOT NULL,
            PRIMARY KEY (conversation_id, sha256, encoding)
        )""",
    ],
]

_COLUMNS = """seq, conversation_id, kind, record_id, branch_id, participant_id, run_id,
    target_id, visibility, anchor, known_from, date_flags, payload"""
INSERT_CONVERSATION = """INSERT INTO runtime_conversations
    (conversation_id, account, title, known_from, date_flags) VALUES (%s, %s, %s, %s, %s)"""
SELECT_CONVERSATIONS = """SELECT conversation_id, account, title, known_from, date_flags
    FROM runtime_conversations"""
INSERT_RECORD = """INSERT INTO runtime_records (conversation_id, kind, record_id, branch_id,
    participant_id, run_id, target_id, visibility, anchor, known_from, date_flags, payload)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING seq"""
SELECT_RECORDS = f"SELECT {_COLUMNS} FROM runtime_records"
SELECT_ON_BRANCH = f"""
SELECT {_COLUMNS} FROM runtime_records
 WHERE conversation_id = %(c)s AND branch_id = %(b)s AND participant_id = %(p)s
   AND known_from <= %(k)s AND coalesce(anchor, seq) <= %(upto)s AND seq >= %(since)s
UNION ALL
SELECT {_COLUMNS} FROM runtime_records
 WHERE conversation_id = %(c)s AND branch_id = %(b)s AND visibility IN ('branch', 'conversation')
   AND participant_id IS DISTINCT FROM %(p)s AND known_from <= %(k)s
   AND coalesce(anchor, seq) <= %(upto)s AND seq >= %(since)s
ORDER BY seq"""
SELECT_REACHABLE = f"""
SELECT {_COLUMNS} FROM runtime_records
 WHERE conversation_id = %(c)s AND visibility = 'conversation' AND known_from <= %(k)s
   AND seq >= %(since)s
UNION ALL
SELECT {_COLUMNS} FROM runtime_records
 WHERE conversation_id = %(c)s AND branch_id IS NULL AND participant_id = %(p)s
   AND kind IN ('share', 'promotion') AND known_from <= %(k)s
ORDER BY seq"""
SELECT_LATEST = "SELECT max(known_from) FROM runtime_records WHERE conversation_id = %s"
SELECT_RECORD_HOMES = """SELECT DISTINCT conversation_id, kind FROM runtime_records
    WHERE record_id = %s"""
INSERT_CONTENT = """INSERT INTO runtime_contents (conversation_id, sha256, bytes, data)
    VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING"""
SELECT_CONTENT = """SELECT c.data, b.data FROM runtime_contents c
    LEFT JOIN runtime_blobs b ON c.data IS NULL AND b.sha256 = c.sha256
    WHERE c.conversation_id = %s AND c.sha256 = %s"""
SELECT_CONTENTS = """SELECT c.sha256, c.data, b.data FROM runtime_contents c
    LEFT JOIN runtime_blobs b ON c.data IS NULL AND b.sha256 = c.sha256
    WHERE c.conversation_id = %s AND c.sha256 = ANY(%s)"""
INSERT_BLOB = "INSERT INTO runtime_blobs (sha256, data) VALUES (%s, %s) ON CONFLICT DO NOTHING"
SELECT_REFERENCED = "SELECT 1 FROM runtime_contents WHERE sha256 = %s AND data IS NULL LIMIT 1"
DELETE_CONTENT = """WITH d AS (DELETE FROM runtime_contents
    WHERE conversation_id = %s AND sha256 = ANY(%s) RETURNING 1) SELECT count(*) FROM d"""
INSERT_CONTENT_TOKENS = """INSERT INTO runtime_content_tokens
    (conversation_id, sha256, encoding, tokens) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING"""
SELECT_CONTENT_TOKENS = """SELECT sha256, tokens FROM runtime_content_tokens
    WHERE conversation_id = %s AND encoding = %s AND sha256 = ANY(%s)"""
DELETE_CONTENT_TOKENS = """DELETE FROM runtime_content_tokens
    WHERE conversation_id = %s AND sha256 = ANY(%s)"""
DELETE_RECORDS = """WITH d AS (DELETE FROM runtime_records
    WHERE conversation_id = %s AND seq = ANY(%s) RETURNING 1) SELECT count(*) FROM d"""
DELETE_BLOBS = """WITH d AS (DELETE FROM runtime_blobs WHERE sha256 = ANY(%s) RETURNING 1)
    SELECT count(*) FROM d"""
# The read caches (tables created by ASSEMBLY_MIGRATIONS, see store/base.py).
SELECT_AFTER = f"""SELECT {_COLUMNS} FROM runtime_records
    WHERE conversation_id = %s AND seq > %s ORDER BY seq LIMIT %s"""
SELECT_MARK = "SELECT through FROM runtime_cache_marks WHERE conversation_id = %s AND cache = %s"
# A cache's mark and the records after it, in one statement (a row with NULL records when
# there are none).
SELECT_AFTER_MARK = f"""WITH m AS (SELECT coalesce((SELECT through FROM runtime_cache_marks
        WHERE conversation_id = %(c)s AND cache = %(n)s), 0) AS through)
SELECT m.through, r.* FROM m LEFT JOIN LATERAL (SELECT {_COLUMNS} FROM runtime_records
    WHERE conversation_id = %(c)s AND seq > m.through ORDER BY seq LIMIT %(l)s) r ON true
ORDER BY r.seq"""
UPSERT_MARK = """INSERT INTO runtime_cache_marks (conversation_id, cache, through)
    VALUES (%s, %s, %s) ON CONFLICT (conversation_id, cache)
    DO UPDATE SET through = greatest(runtime_cache_marks.through, excluded.through)"""
SELECT_LAST_RANK = """SELECT ordinal FROM runtime_index
    WHERE conversation_id = %s AND grp = %s AND seq < %s ORDER BY seq DESC LIMIT 1"""
SELECT_RANKS = """SELECT (SELECT i.ordinal FROM runtime_index i
        WHERE i.conversation_id = %s AND i.grp = x.g AND i.seq < x.b ORDER BY i.seq DESC LIMIT 1)
    FROM unnest(%s::text[], %s::bigint[]) WITH ORDINALITY AS x (g, b, n) ORDER BY x.n"""
INSERT_INDEX = """INSERT INTO runtime_index (conversation_id, seq, kind, record_id, branch_id,
    grp, ordinal, known_from, flag) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
    ON CONFLICT DO NOTHING"""
RESOLVE_CALL = """UPDATE runtime_index SET resolved = %s
    WHERE conversation_id = %s AND record_id = %s AND kind = 'tool_call' AND resolved IS NULL"""
_RECORD_COLUMNS = ", ".join(f"r.{c.strip()}" for c in _COLUMNS.split(","))
SELECT_FLAGGED = f"""SELECT {_RECORD_COLUMNS} FROM runtime_index i
    JOIN runtime_records r ON r.seq = i.seq
    WHERE i.conversation_id = %(c)s AND i.flag <> '' AND i.flag = %(f)s AND i.known_from <= %(k)s"""
SELECT_OPEN_CALLS = f"""SELECT {_RECORD_COLUMNS} FROM runtime_index i
    JOIN runtime_records r ON r.seq = i.seq
    WHERE i.conversation_id = %(c)s AND i.kind = 'tool_call' AND i.known_from <= %(k)s
      AND i.resolved IS NULL
UNION ALL
SELECT {_RECORD_COLUMNS} FROM runtime_index i
    JOIN runtime_records r ON r.seq = i.seq
    WHERE i.conversation_id = %(c)s AND i.kind = 'tool_call' AND i.known_from <= %(k)s
      AND i.resolved > %(k)s
ORDER BY seq"""
# The protected state in one statement: the open calls (q = 0) and each flagged look-up (q
# = 1, 2, ...), each part with its own order and limit; the caller splits the rows by q. Each
# index row fetches its record by seq (a LATERAL subquery, kept apart by OFFSET 0): the
# planner's estimates of the index's flags and open calls lag behind its filling, and a hash
# join of every record (in parallel workers) took ~20 ms where these seeks take ~0.1.
_RECORD_BY_SEQ = f"""CROSS JOIN LATERAL (
      SELECT {_COLUMNS} FROM runtime_records WHERE seq = i.seq OFFSET 0) r"""
_OPEN_CALLS_PARTS = [
    f"""SELECT 0 AS q, {_RECORD_COLUMNS} FROM runtime_index i {_RECORD_BY_SEQ}
    WHERE i.conversation_id = %(c)s AND i.kind = 'tool_call' AND i.known_from <= %(k)s
      AND i.resolved {resolved}"""
    for resolved in ("IS NULL", "> %(k)s")
]
_FLAGGED_PART = f"""SELECT {{q}} AS q, {_RECORD_COLUMNS} FROM runtime_index i {_RECORD_BY_SEQ}
    WHERE i.conversation_id = %(c)s AND i.flag <> '' AND i.flag = %(f{{q}})s
      AND i.known_from <= %(k)s{{branch}} ORDER BY i.seq DESC{{limit}}"""
SELECT_HORIZON = """SELECT seq FROM runtime_index
    WHERE conversation_id = %(c)s AND branch_id = %(b)s AND seq <= %(upto)s
      AND grp IS NOT NULL AND known_from <= %(k)s ORDER BY seq DESC LIMIT 1 OFFSET %(skip)s"""
# The read horizon of an ancestry (the newest of its branches' horizons) and the records from
# it up to a bound, in one statement (a row with NULL records when there are none).
SELECT_HORIZON_RECORDS = f"""WITH h AS (SELECT coalesce(max((SELECT i.seq FROM runtime_index i
        WHERE i.conversation_id = %(c)s AND i.branch_id = x.b AND i.seq <= x.u
          AND i.grp IS NOT NULL AND i.known_from <= %(k)s
        ORDER BY i.seq DESC LIMIT 1 OFFSET %(skip)s)), 0) AS since
    FROM unnest(%(bs)s::text[], %(us)s::bigint[]) AS x (b, u))
SELECT h.since, r.* FROM h LEFT JOIN LATERAL (SELECT {_COLUMNS} FROM runtime_records
    WHERE conversation_id = %(c)s AND seq >= h.since AND seq < %(below)s
    ORDER BY seq LIMIT %(l)s) r ON true
ORDER BY r.seq"""
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
#: The tables a compaction after a purge rewrites (VACUUM FULL), recall index and read caches first.
COMPACT_TABLES = (
    "runtime_recall_vector_marks",
    "runtime_recall_vectors",
    "runtime_recall_terms",
    "runtime_recall",
    "runtime_cache_marks",
    "runtime_token_counts",
    "runtime_index",
    "runtime_records",
    "runtime_contents",
    "runtime_content_tokens",
    "runtime_blobs",
    "runtime_conversations",
    "runtime_assemblies",
)
#: The tables of COMPACT_TABLES this role may not VACUUM. PostgreSQL only warns and skips a table
#: that a role neither owns nor may maintain, so a purge must ask before it can say it compacted.
SELECT_NOT_VACUUMABLE = """SELECT c.relname FROM pg_class c
    WHERE c.oid = ANY(SELECT to_regclass(name) FROM unnest(%s::text[]) AS name)
      AND NOT pg_has_role(current_user, c.relowner, 'USAGE')
    ORDER BY c.relname"""


def _ts(instant: Instant) -> _dt.datetime:
    return _EPOCH + _dt.timedelta(microseconds=instant.micros)


def _instant(value: _dt.datetime, flags: int) -> Instant:
    return Instant((value - _EPOCH) // _MICROSECOND, bool(flags & _DATE))


def _record(row: tuple[Any, ...]) -> RuntimeRecord:
    (seq, conversation_id, kind, record_id, branch_id, participant_id, run_id, target_id,
     visibility, anchor, known_from, flags, payload) = row
    return RuntimeRecord(conversation_id, kind, record_id, _instant(known_from, flags),
                         json.loads(payload), branch_id, participant_id, run_id, target_id,
                         visibility, anchor, seq)


def _decode(row: tuple[Any, ...]) -> RuntimeRecord:
    return DECODED.decode(row, _record)


class PostgresRuntime(RuntimeLog, RuntimeContent, RuntimeIndex):
    """The runtime graph tables of the PostgreSQL backend."""

    url: str

    _fetch: Callable[[str, Sequence[Any] | dict[str, Any]], list[tuple[Any, ...]]]
    _read: Callable[[str, Sequence[Any] | dict[str, Any]], list[tuple[Any, ...]]]
    _execute: Callable[[str, Sequence[Any]], None]
    _execute_many: Callable[[str, Sequence[Sequence[Any]]], None]
    _borrow: Callable[[], AbstractContextManager[psycopg.Connection[tuple[Any, ...]]]]
    _in_transaction: Callable[[], psycopg.Connection[tuple[Any, ...]] | None]

    # -- conversations ---------------------------------------------------------------------
    def append_runtime_conversation(self, conversation: Conversation) -> None:
        self._execute(INSERT_CONVERSATION, (
            conversation.id, conversation.account, conversation.title,
            _ts(conversation.known_from), _DATE if conversation.known_from.is_date else 0))

    def runtime_conversations(self, *, account: str | None = None,
                              ids: Sequence[str] | None = None) -> list[Conversation]:
        if ids is not None:
            rows = self._read(f"{SELECT_CONVERSATIONS} WHERE conversation_id = ANY(%s)",
                              (list(ids),))
        elif account is not None:
            rows = self._fetch(f"{SELECT_CONVERSATIONS} WHERE account = %s", (account,))
        else:
            rows = self._fetch(SELECT_CONVERSATIONS, ())
        return sorted((Conversation(cid, acct, _instant(kf, flags), title)
                       for cid, acct, title, kf, flags in rows), key=lambda c: c.id)

    # -- records ---------------------------------------------------------------------------
    def append_runtime_records(self, records: Sequence[RuntimeRecord]) -> list[int]:
        rows = [(r.conversation_id, r.kind, r.record_id, r.branch_id, r.participant_id,
                 r.run_id, r.target_id, r.visibility, r.anchor, _ts(r.known_from),
                 _DATE if r.known_from.is_date else 0, r.payload_json()) for r in records]
        conn = self._in_transaction()
        if conn is None or len(rows) < 2:
            return [int(self._fetch(INSERT_RECORD, row)[0][0]) for row in rows]
        # Several rows: one pipelined executemany, each statement's seq read back in order.
        seqs = []
        with conn.cursor() as cursor:
            cursor.executemany(INSERT_RECORD, rows, returning=True)
            while True:
                row = cursor.fetchone()
                assert row is not None
                seqs.append(int(row[0]))
                if not cursor.nextset():
                    break
        return seqs

    def runtime_records(self, conversation_id: str, *, kinds: Sequence[str] | None = None,
                        record_ids: Sequence[str] | None = None,
                        target_ids: Sequence[str] | None = None,
                        known_at: Instant | None = None) -> list[RuntimeRecord]:
        where = ["conversation_id = %s"]
        params: list[Any] = [conversation_id]
        if known_at is not None:
            where.append("known_from <= %s")
            params.append(_ts(known_at))
        if kinds is not None:
            where.append("kind = ANY(%s)")
            params.append(list(kinds))
        keys = []
        if record_ids is not None:
            keys.append(("record_id", record_ids))
        if target_ids is not None:
            keys.append(("target_id", target_ids))
        if keys:
            where.append("(" + " OR ".join(f"{column} = ANY(%s)" for column, _ in keys) + ")")
            params += [list(values) for _, values in keys]
        sql = f"{SELECT_RECORDS} WHERE {' AND '.join(where)} ORDER BY seq"
        return [_decode(row) for row in self._records_read(sql, params)]

    def _records_read(self, query: str, params: Sequence[Any] | dict[str, Any]
                      ) -> list[tuple[Any, ...]]:
        """:meth:`_read` of rows about to be decoded, after handing the purge epoch to the
        decoded rows (a purge by another process makes this one forget what it kept)."""
        DECODED.note_purges(self.url, int(self._read(SELECT_PURGE_EPOCH, ())[0][0]))
        return self._read(query, params)

    def runtime_branch_records(self, conversation_id: str, branch_id: str, upto: int | None,
                               participant_id: str, known_at: Instant, since: int = 0
                               ) -> list[RuntimeRecord]:
        params = {"c": conversation_id, "b": branch_id, "p": participant_id,
                  "k": _ts(known_at), "upto": (1 << 62) if upto is None else upto,
                  "since": since}
        return [_decode(r) for r in self._records_read(SELECT_ON_BRANCH, params)]

    def runtime_reachable(self, conversation_id: str, participant_id: str,
                          known_at: Instant, since: int = 0) -> list[RuntimeRecord]:
        params = {"c": conversation_id, "p": participant_id, "k": _ts(known_at),
                  "since": since}
        return [_decode(r) for r in self._records_read(SELECT_REACHABLE, params)]

    def runtime_record_homes(self, record_id: str) -> list[tuple[str, str]]:
        return sorted((c, k) for c, k in self._fetch(SELECT_RECORD_HOMES, (record_id,)))

    def runtime_latest_knowledge(self, conversation_id: str) -> Instant | None:
        ((value,),) = self._fetch(SELECT_LATEST, (conversation_id,))
        return None if value is None else _instant(value, 0)

    # -- read caches -----------------------------------------------------------------------
    def runtime_records_after(self, conversation_id: str, seq: int, limit: int
                              ) -> list[RuntimeRecord]:
        return [_decode(r) for r in self._records_read(SELECT_AFTER, (conversation_id, seq, limit))]

    def runtime_cache_mark(self, conversation_id: str, cache: str) -> int:
        rows = self._read(SELECT_MARK, (conversation_id, cache))
        return int(rows[0][0]) if rows else 0

    def runtime_records_after_mark(self, conversation_id: str, cache: str, limit: int
                                   ) -> tuple[int, list[RuntimeRecord]]:
        rows = self._records_read(SELECT_AFTER_MARK, {"c": conversation_id, "n": cache, "l": limit})
        return int(rows[0][0]), [_decode(row[1:]) for row in rows if row[1] is not None]

    def append_runtime_index(self, conversation_id: str, rows: Sequence[tuple[Any, ...]],
                             through: int) -> None:
        ranks: dict[str, int] = {}
        out = []
        resolve = []
        for seq, kind, record_id, target_id, branch_id, group, known, flag in rows:
            ordinal = 0
            if group is not None:
                if group not in ranks:
                    found = self._fetch(SELECT_LAST_RANK, (conversation_id, group, seq))
                    ranks[group] = int(found[0][0]) if found else 0
                ranks[group] += 1
                ordinal = ranks[group]
            out.append((conversation_id, seq, kind, record_id, branch_id, group, ordinal,
                        known, flag))
            if kind == "artifact" and target_id is not None:
                resolve.append((known, conversation_id, target_id))
        if out:
            self._execute_many(INSERT_INDEX, out)
        if resolve:
            self._execute_many(RESOLVE_CALL, resolve)
        self._execute(UPSERT_MARK, (conversation_id, "index", through))

    def runtime_flagged(self, conversation_id: str, flag: str, known_at: Instant, *,
                        branch_id: str | None = None, upto: int | None = None,
                        limit: int | None = None) -> list[RuntimeRecord]:
        sql = SELECT_FLAGGED + (" AND i.branch_id = %(b)s AND i.seq <= %(upto)s"
                                if branch_id is not None else "") + " ORDER BY i.seq DESC"
        if limit is not None:
            sql += " LIMIT %(n)s"
        params = {"c": conversation_id, "f": flag, "k": known_at.micros, "b": branch_id,
                  "upto": (1 << 62) if upto is None else upto, "n": limit}
        return [_decode(r) for r in self._records_read(sql, params)]

    def runtime_open_calls(self, conversation_id: str, known_at: Instant
                           ) -> list[RuntimeRecord]:
        return [_decode(r) for r in self._records_read(SELECT_OPEN_CALLS, {"c": conversation_id,
                                                                   "k": known_at.micros})]

    def runtime_protected(self, conversation_id: str, known_at: Instant,
                          requests: Sequence[tuple[str, str | None, int | None, int | None]]
                          ) -> tuple[list[RuntimeRecord], list[list[RuntimeRecord]]]:
        params: dict[str, Any] = {"c": conversation_id, "k": known_at.micros}
        parts = list(_OPEN_CALLS_PARTS)
        for q, (flag, branch, upto, limit) in enumerate(requests, start=1):
            params[f"f{q}"] = flag
            branch_clause = limit_clause = ""
            if branch is not None:
                branch_clause = f" AND i.branch_id = %(b{q})s AND i.seq <= %(u{q})s"
                params[f"b{q}"], params[f"u{q}"] = branch, (1 << 62) if upto is None else upto
            if limit is not None:
                limit_clause = f" LIMIT %(n{q})s"
                params[f"n{q}"] = limit
            parts.append(_FLAGGED_PART.format(q=q, branch=branch_clause, limit=limit_clause))
        found: list[list[RuntimeRecord]] = [[] for _ in range(len(requests) + 1)]
        for row in self._records_read(" UNION ALL ".join(f"({part})" for part in parts), params):
            found[row[0]].append(_decode(row[1:]))
        found[0].sort(key=lambda r: r.seq)
        for records in found[1:]:
            records.sort(key=lambda r: r.seq, reverse=True)
        return found[0], found[1:]

    def runtime_horizon(self, conversation_id: str, branch_id: str, upto: int | None,
                        before: int | None, known_at: Instant, count: int) -> int | None:
        bound = min((1 << 62) if upto is None else upto, (1 << 62) if before is None
                    else before - 1)
        rows = self._read(SELECT_HORIZON, {"c": conversation_id, "b": branch_id,
                                           "upto": bound, "k": known_at.micros,
                                           "skip": count - 1})
        return int(rows[0][0]) if rows else None

    def runtime_horizon_records(self, conversation_id: str,
                                chain: Sequence[tuple[str, int | None]], known_at: Instant,
                                count: int, below: int | None, limit: int
                                ) -> tuple[int, list[RuntimeRecord]]:
        rows = self._records_read(SELECT_HORIZON_RECORDS, {
            "c": conversation_id, "k": known_at.micros, "skip": count - 1,
            "bs": [b for b, _ in chain], "us": [(1 << 62) if u is None else u for _, u in chain],
            "below": (1 << 62) if below is None else below, "l": max(limit, 0)})
        return int(rows[0][0]), [_decode(row[1:]) for row in rows if row[1] is not None]

    def runtime_group_counts(self, conversation_id: str,
                             bounds: Sequence[tuple[str, int]]) -> list[int]:
        if not bounds:
            return []
        rows = self._read(SELECT_RANKS, (conversation_id, [g for g, _ in bounds],
                                         [b for _, b in bounds]))
        return [int(r[0] or 0) for r in rows]

    # -- contents and blobs ----------------------------------------------------------------
    def put_runtime_content(self, conversation_id: str, sha256: str, data: bytes, *,
                            inline: bool) -> None:
        if not inline:
            self._execute(INSERT_BLOB, (sha256, data))
        self._execute(INSERT_CONTENT, (conversation_id, sha256, len(data),
                                       data if inline else None))

    def runtime_content(self, conversation_id: str, sha256: str) -> bytes | None:
        rows = self._read(SELECT_CONTENT, (conversation_id, sha256))
        if not rows:
            return None
        inline, blob = rows[0]
        data = inline if inline is not None else blob
        return None if data is None else bytes(data)

    def runtime_contents(self, conversation_id: str, sha256s: Sequence[str]
                         ) -> dict[str, bytes | None]:
        found: dict[str, bytes | None] = dict.fromkeys(sha256s)
        if found:
            for sha, inline, blob in self._read(SELECT_CONTENTS, (conversation_id, list(found))):
                data = inline if inline is not None else blob
                found[sha] = None if data is None else bytes(data)
        return found

    def put_runtime_content_tokens(self, conversation_id: str,
                                   counts: Sequence[tuple[str, str, int]]) -> None:
        if counts:
            self._execute_many(INSERT_CONTENT_TOKENS,
                               [(conversation_id, *row) for row in counts])

    def runtime_content_tokens(self, conversation_id: str, sha256s: Sequence[str],
                               encoding: str) -> dict[str, int]:
        wanted = list(dict.fromkeys(sha256s))
        if not wanted:
            return {}
        rows = self._read(SELECT_CONTENT_TOKENS, (conversation_id, encoding, wanted))
        return {sha: int(tokens) for sha, tokens in rows}

    def delete_runtime_contents(self, conversation_id: str, sha256s: Sequence[str]) -> int:
        self._execute(DELETE_CONTENT_TOKENS, (conversation_id, list(sha256s)))
        return int(self._fetch(DELETE_CONTENT, (conversation_id, list(sha256s)))[0][0])

    def delete_runtime_records(self, conversation_id: str, seqs: Sequence[int]) -> int:
        DECODED.forget()
        self._execute(RAISE_PURGE_EPOCH, ())
        return int(self._fetch(DELETE_RECORDS, (conversation_id, list(seqs)))[0][0])

    def delete_runtime_conversations(self, conversation_ids: Sequence[str]) -> int:
        count = 0
        DECODED.forget()
        self._execute(RAISE_PURGE_EPOCH, ())
        ids = list(conversation_ids)
        for table in [*PURGE_TABLES, "runtime_conversations"]:  # names from a fixed list
            count += int(self._fetch(
                f"WITH d AS (DELETE FROM {table} WHERE conversation_id = ANY(%s) RETURNING 1) "
                "SELECT count(*) FROM d", (ids,))[0][0])
        return count

    def runtime_blob_digests(self) -> list[str]:
        return sorted(r[0] for r in self._fetch("SELECT sha256 FROM runtime_blobs", ()))

    def runtime_blob_referenced(self, sha256: str) -> bool:
        return bool(self._fetch(SELECT_REFERENCED, (sha256,)))

    def delete_runtime_blobs(self, sha256s: Sequence[str]) -> int:
        return int(self._fetch(DELETE_BLOBS, (list(sha256s),))[0][0]) if sha256s else 0

    def end_runtime_blobs(self, committed: bool) -> None:
        return None  # blobs are rows: the transaction already kept or dropped them

    def runtime_compact(self, *, full: bool = True, samples: Sequence[bytes] = ()
                        ) -> Compaction:
        # the server's files are not ours to read: ``samples`` cannot be checked here, and a
        # finished VACUUM FULL is what this backend can prove; one that did not finish said so
        # (and how to finish it), so nothing is pending for a later call
        if not full:
            return Compaction(True, "nothing to rewrite")
        skipped = [row[0] for row in self._fetch(SELECT_NOT_VACUUMABLE, (list(COMPACT_TABLES),))]
        if skipped:
            return Compaction(False, f"rows deleted, but this role does not own "
                              f"{', '.join(skipped)}, so VACUUM FULL would skip them: run it as "
                              f"the tables' owner: VACUUM FULL {', '.join(COMPACT_TABLES)}")
        try:
            with self._borrow() as conn:
                # VACUUM FULL waits for every reader of the table: a bounded wait, then a
                # report, rather than the tenant's writers queued behind it
                conn.execute(f"SET lock_timeout = '{COMPACT_WAIT_MS}ms'")
                try:
                    for table in COMPACT_TABLES:  # names from a fixed list
                        conn.execute(f"VACUUM FULL {table}")
                finally:
                    conn.execute("RESET lock_timeout")
        except StoreError as exc:
            return Compaction(False, f"rows deleted, but VACUUM FULL did not finish ({exc}); "
                              "when the tables are less busy, run as their owner: VACUUM FULL "
                              f"{', '.join(COMPACT_TABLES)}")
        return Compaction(True, "rows deleted; VACUUM FULL rewrote the runtime tables into new "
                          "files (WAL segments, backups and replicas keep old bytes until they "
                          "are recycled)")
