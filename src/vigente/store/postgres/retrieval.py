"""PostgreSQL tables and queries of retrieval. Mixed into
:class:`~vigente.store.postgres.PostgresStore`; the same rows as ``sqlite_retrieval.py``.

Lexical search uses PostgreSQL full-text search with the ``simple`` configuration over text
that vigente folds itself (case and diacritics removed, as FTS5's ``remove_diacritics 2``
does), so no ``unaccent`` extension is needed; ranking is ``ts_rank`` (no IDF, unlike FTS5's
BM25). Vectors use pgvector, searched exactly (``<=>``, cosine distance) with the temporal
filter in the same statement. pgvector is optional: its table is created the first time vectors
are stored, so a server without the extension still searches lexically.
"""

from __future__ import annotations

import datetime as _dt
import struct
from collections.abc import Callable, Sequence
from typing import Any

from vigente.errors import StoreError
from vigente.records.retrieval import (
    Candidate,
    CandidateQuery,
    Claim,
    FieldMatch,
    FieldRecord,
    PassageRecord,
    RetrievalStats,
)
from vigente.records.values import Scope
from vigente.records.versions import Version
from vigente.store.contracts import RetrievalIndex, VectorIndex
from vigente.time import Instant

__all__ = ["FIELD_MIGRATIONS", "RETRIEVAL_MIGRATIONS", "PostgresRetrieval"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MICROSECOND = _dt.timedelta(microseconds=1)
_VF, _VT, _KF, _KT = 1, 2, 4, 8

RETRIEVAL_MIGRATIONS: list[list[str]] = [
    # retrieval: claims (kernel timeline values), passages with their tsvector, state
    [
        """CREATE TABLE retrieval_claims (
            claim_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            subject_id bigint NOT NULL REFERENCES subjects (subject_id),
            source     text COLLATE "C" NOT NULL,
            value      text NOT NULL,
            value_hash text COLLATE "C" NOT NULL,
            kind       text NOT NULL CHECK (kind IN ('document', 'fact')),
            UNIQUE (subject_id, source, value_hash)
        )""",
        """CREATE TABLE retrieval_passages (
            passage_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            claim_id     bigint NOT NULL REFERENCES retrieval_claims (claim_id),
            position     integer NOT NULL,
            content_hash text COLLATE "C" NOT NULL,
            text         text NOT NULL,
            search       tsvector NOT NULL,
            UNIQUE (claim_id, position)
        )""",
        "CREATE INDEX retrieval_passages_search ON retrieval_passages USING gin (search)",
        "CREATE INDEX retrieval_passages_content ON retrieval_passages (content_hash)",
        """CREATE TABLE retrieval_state (
            key   text COLLATE "C" PRIMARY KEY,
            value bigint NOT NULL
        )""",
        "INSERT INTO retrieval_state VALUES ('indexed_through', 0), ('passages', 0)",
    ],
]

#: Appended after every other migration (store/postgres/store.py): the title and reference of every
#: document claim, one row per field, with its own tsvector. ``fields_from``: claims numbered
#: below it were indexed before fields existed (backfilled by the next refresh, then 0).
FIELD_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE retrieval_fields (
            field_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            claim_id    bigint NOT NULL REFERENCES retrieval_claims (claim_id),
            field       text COLLATE "C" NOT NULL CHECK (field IN ('title', 'reference')),
            text        text NOT NULL,
            search_text text NOT NULL,
            search      tsvector NOT NULL,
            UNIQUE (claim_id, field)
        )""",
        "CREATE INDEX retrieval_fields_search ON retrieval_fields USING gin (search)",
        """INSERT INTO retrieval_state
            SELECT 'fields_from', coalesce(max(claim_id), 0) + 1 FROM retrieval_claims""",
    ],
]

#: Created on first use: needs the pgvector extension (see docs/deployment.md).
CREATE_VECTORS = [
    "CREATE EXTENSION IF NOT EXISTS vector",
    """CREATE TABLE IF NOT EXISTS retrieval_vectors (
        model_id   text COLLATE "C" NOT NULL,
        passage_id bigint NOT NULL REFERENCES retrieval_passages (passage_id),
        embedding  vector NOT NULL,
        PRIMARY KEY (model_id, passage_id)
    )""",
]
VECTOR_LOCK_KEY = 0x76_65_63_74_6F_72  # "vector": one creator of the table at a time
LOCK = "SELECT pg_advisory_xact_lock(%s)"
SELECT_VECTOR_TABLE = "SELECT to_regclass('retrieval_vectors') IS NOT NULL"

_CANDIDATE_COLUMNS = """p.passage_id, cl.claim_id, s.lineage, s.scope_key, cl.source, cl.value,
    cl.kind, p.position, p.text, p.content_hash"""
SELECT_ADMISSIBLE = """SELECT DISTINCT cl.claim_id FROM versions v
    JOIN retrieval_claims cl
      ON cl.subject_id = v.subject_id AND cl.source = v.source AND cl.value = v.value
    JOIN subjects s ON s.subject_id = v.subject_id
    WHERE v.known @> %(k)s::timestamptz AND lower(v.valid) <= %(t)s::timestamptz
      AND (%(relax)s OR v.valid @> %(t)s::timestamptz)
      AND (%(scope)s::text IS NULL OR s.scope_key = %(scope)s::text)"""
_SCOPE = "(%(scope)s::text IS NULL OR s.scope_key = %(scope)s::text)"
_LEXICAL = f"""SELECT {_CANDIDATE_COLUMNS}, ts_rank(p.search, q.query, 1) AS score
    FROM retrieval_passages p
    CROSS JOIN (SELECT to_tsquery('simple', %(match)s) AS query) q
    JOIN retrieval_claims cl ON cl.claim_id = p.claim_id
    JOIN subjects s ON s.subject_id = cl.subject_id
    WHERE p.search @@ q.query"""
SELECT_LEXICAL = f"""{_LEXICAL} AND {_SCOPE}
    ORDER BY score DESC, p.passage_id LIMIT %(limit)s"""
SELECT_LEXICAL_FILTERED = f"""WITH admissible AS MATERIALIZED ({SELECT_ADMISSIBLE})
    {_LEXICAL} AND cl.claim_id IN (SELECT claim_id FROM admissible)
    ORDER BY score DESC, p.passage_id LIMIT %(limit)s"""
_VECTORS = f"""SELECT {_CANDIDATE_COLUMNS}, 1 - (r.embedding <=> %(vector)s::vector) AS score
    FROM retrieval_vectors r
    JOIN retrieval_passages p ON p.passage_id = r.passage_id
    JOIN retrieval_claims cl ON cl.claim_id = p.claim_id
    JOIN subjects s ON s.subject_id = cl.subject_id
    WHERE r.model_id = %(model)s"""
SELECT_VECTORS = f"""{_VECTORS} AND {_SCOPE}
    ORDER BY r.embedding <=> %(vector)s::vector, p.passage_id LIMIT %(limit)s"""
SELECT_VECTORS_FILTERED = f"""WITH admissible AS MATERIALIZED ({SELECT_ADMISSIBLE})
    {_VECTORS} AND cl.claim_id IN (SELECT claim_id FROM admissible)
    ORDER BY r.embedding <=> %(vector)s::vector, p.passage_id LIMIT %(limit)s"""
_FIELDS = """SELECT f.claim_id, f.field, f.search_text,
        ts_rank(f.search, q.query, 1) AS score
    FROM retrieval_fields f
    CROSS JOIN (SELECT to_tsquery('simple', %(match)s) AS query) q
    JOIN retrieval_claims cl ON cl.claim_id = f.claim_id
    JOIN subjects s ON s.subject_id = cl.subject_id
    WHERE f.search @@ q.query"""
# The claims whose fields rank best, every field of theirs that matched.
_TOP_FIELDS = """SELECT claim_id, field, search_text FROM (
    SELECT m.*, dense_rank() OVER (ORDER BY best DESC, claim_id) AS n FROM (
        SELECT m.*, max(score) OVER (PARTITION BY claim_id) AS best FROM matches m) m) m
    WHERE n <= %(limit)s ORDER BY n, field"""
SELECT_FIELDS = f"""WITH matches AS ({_FIELDS} AND {_SCOPE}) {_TOP_FIELDS}"""
SELECT_FIELDS_FILTERED = f"""WITH admissible AS MATERIALIZED ({SELECT_ADMISSIBLE}),
    matches AS ({_FIELDS} AND cl.claim_id IN (SELECT claim_id FROM admissible))
    {_TOP_FIELDS}"""
SELECT_FIRST_PASSAGES = f"""SELECT {_CANDIDATE_COLUMNS}, 0.0 FROM retrieval_passages p
    JOIN retrieval_claims cl ON cl.claim_id = p.claim_id
    JOIN subjects s ON s.subject_id = cl.subject_id
    WHERE p.position = 0 AND p.claim_id = ANY(%s)"""
INSERT_FIELD = """INSERT INTO retrieval_fields (claim_id, field, text, search_text, search)
    VALUES (%s, %s, %s, %s, to_tsvector('simple', %s))
    ON CONFLICT (claim_id, field) DO NOTHING"""
SELECT_PENDING_FIELDS = """SELECT s.lineage, s.scope_key, cl.source, cl.value
    FROM retrieval_claims cl JOIN subjects s ON s.subject_id = cl.subject_id
    WHERE cl.kind = 'document'
      AND cl.claim_id < (SELECT value FROM retrieval_state WHERE key = 'fields_from')
    ORDER BY cl.claim_id"""
SELECT_CLAIM_ID = """SELECT claim_id FROM retrieval_claims
    WHERE subject_id = %s AND source = %s AND value_hash = %s"""
SELECT_STATE = "SELECT value FROM retrieval_state WHERE key = %s"
UPDATE_STATE = "UPDATE retrieval_state SET value = %s WHERE key = %s"
ADD_STATE = "UPDATE retrieval_state SET value = value + %s WHERE key = %s"
SELECT_MAX_VERSION = "SELECT coalesce(max(seq), 0) FROM versions"
SELECT_PENDING = """SELECT s.lineage, s.scope_key, v.source, v.value
    FROM versions v JOIN subjects s ON s.subject_id = v.subject_id
    WHERE v.seq > %(after)s AND NOT EXISTS (
        SELECT 1 FROM retrieval_claims cl
         WHERE cl.subject_id = v.subject_id AND cl.source = v.source AND cl.value = v.value)
    GROUP BY v.subject_id, s.lineage, s.scope_key, v.source, v.value ORDER BY min(v.seq)"""
SELECT_SUBJECT_ID = "SELECT subject_id FROM subjects WHERE lineage = %s AND scope_key = %s"
INSERT_CLAIM = """INSERT INTO retrieval_claims (subject_id, source, value, value_hash, kind)
    VALUES (%s, %s, %s, %s, %s) ON CONFLICT (subject_id, source, value_hash) DO NOTHING
    RETURNING claim_id"""
INSERT_PASSAGE = """INSERT INTO retrieval_passages (claim_id, position, content_hash, text, search)
    VALUES (%s, %s, %s, %s, to_tsvector('simple', %s))"""
SELECT_CLAIM_SNAPSHOTS = """SELECT cl.claim_id, v.version_id, s.lineage, s.scope_key, v.source,
    v.value, lower(v.valid), upper(v.valid), v.known_from, v.known_to, v.date_flags
    FROM retrieval_claims cl
    JOIN versions v
      ON v.subject_id = cl.subject_id AND v.source = cl.source AND v.value = cl.value
    JOIN subjects s ON s.subject_id = cl.subject_id
    WHERE cl.claim_id = ANY(%s) ORDER BY v.seq"""
SELECT_WITHOUT_VECTORS = """SELECT p.passage_id, p.content_hash, p.text FROM retrieval_passages p
    WHERE NOT EXISTS (SELECT 1 FROM retrieval_vectors r
                       WHERE r.model_id = %s AND r.passage_id = p.passage_id)
    ORDER BY p.passage_id LIMIT %s"""
SELECT_ALL_WITHOUT_VECTORS = """SELECT p.passage_id, p.content_hash, p.text
    FROM retrieval_passages p ORDER BY p.passage_id LIMIT %s"""
SELECT_VECTORS_BY_CONTENT = """SELECT DISTINCT ON (p.content_hash) p.content_hash,
    r.embedding::real[] FROM retrieval_vectors r
    JOIN retrieval_passages p ON p.passage_id = r.passage_id
    WHERE r.model_id = %s AND p.content_hash = ANY(%s)"""
INSERT_VECTOR = """INSERT INTO retrieval_vectors (model_id, passage_id, embedding)
    VALUES (%s, %s, %s::vector)
    ON CONFLICT (model_id, passage_id) DO UPDATE SET embedding = EXCLUDED.embedding"""
DELETE_VECTORS = "DELETE FROM retrieval_vectors WHERE model_id = %s"
SELECT_CLAIM_COUNT = "SELECT count(*) FROM retrieval_claims"
SELECT_VECTOR_STATS = "SELECT model_id, count(*) FROM retrieval_vectors GROUP BY model_id"
RESET = [
    "DELETE FROM retrieval_fields",
    "UPDATE retrieval_state SET value = 0 WHERE key = 'fields_from'",
    "DELETE FROM retrieval_passages",
    "DELETE FROM retrieval_claims",
    "UPDATE retrieval_state SET value = 0 WHERE key IN ('indexed_through', 'passages')",
]
RESET_VECTORS = "DELETE FROM retrieval_vectors"


def _instant(value: _dt.datetime, flags: int, bit: int) -> Instant:
    return Instant((value - _EPOCH) // _MICROSECOND, bool(flags & bit))


def _literal(vector: bytes) -> str:
    """A pgvector literal of a float32 little-endian vector."""
    values = struct.unpack(f"<{len(vector) // 4}f", vector)
    return "[" + ",".join(repr(v) for v in values) + "]"


def _bytes(values: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


class PostgresRetrieval(RetrievalIndex, VectorIndex):
    """The retrieval tables of the PostgreSQL backend."""

    _fetch: Callable[[str, Sequence[Any] | dict[str, Any]], list[tuple[Any, ...]]]
    _execute: Callable[[str, Sequence[Any]], None]
    _execute_many: Callable[[str, Sequence[Sequence[Any]]], None]
    _scopes: dict[str, Scope]

    def _scope(self, key: str) -> Scope:
        scope = self._scopes.get(key)
        if scope is None:
            scope = self._scopes[key] = Scope.from_key(key)
        return scope

    def _candidate(self, row: Sequence[Any]) -> Candidate:
        pid, claim_id, lineage, scope_key, source, value, kind, position, text, chash, score = row
        return Candidate(
            passage_id=int(pid), claim_id=int(claim_id),
            claim=Claim(lineage, self._scope(scope_key), source, value), kind=kind,
            position=int(position), text=text, content_hash=chash, score=float(score),
        )

    def _state(self, key: str) -> int:
        rows = self._fetch(SELECT_STATE, (key,))
        return int(rows[0][0]) if rows else 0

    def _has_vectors(self) -> bool:
        if getattr(self, "_vector_table", False):
            return True
        found = bool(self._fetch(SELECT_VECTOR_TABLE, ())[0][0])
        if found:
            self._vector_table = True
        return found

    @staticmethod
    def _params(query: CandidateQuery) -> dict[str, Any]:
        params: dict[str, Any] = {
            "limit": query.limit,
            "scope": None if query.scope is None else query.scope.key,
        }
        if query.filtered:
            assert query.valid_at is not None and query.known_at is not None
            params.update(
                t=_EPOCH + _dt.timedelta(microseconds=query.valid_at.micros),
                k=_EPOCH + _dt.timedelta(microseconds=query.known_at.micros),
                relax=query.include_superseded,
            )
        return params

    # -- indexing ------------------------------------------------------------------------------
    def pending_claims(self, *, full: bool = False) -> tuple[list[Claim], int]:
        after = 0 if full else self._state("indexed_through")
        newest = int(self._fetch(SELECT_MAX_VERSION, ())[0][0])
        if newest <= after:
            return [], 0
        rows = self._fetch(SELECT_PENDING, {"after": after})
        return [Claim(lineage, self._scope(key), source, value)
                for lineage, key, source, value in rows], newest

    def mark_indexed(self, through: int) -> None:
        self._execute(UPDATE_STATE, (through, "indexed_through"))

    def append_passages(self, claim: Claim, kind: str, passages: Sequence[PassageRecord],
                        fields: Sequence[FieldRecord] = ()) -> bool:
        subject = self._fetch(SELECT_SUBJECT_ID, (claim.lineage, claim.scope.key))
        if not subject:
            raise StoreError(f"no timeline {claim.lineage!r} to index passages for")
        inserted = self._fetch(INSERT_CLAIM, (subject[0][0], claim.source, claim.value_json,
                                              claim.value_hash, kind))
        if not inserted:
            return False
        claim_id = inserted[0][0]
        if passages:
            self._execute_many(INSERT_PASSAGE, [
                (claim_id, p.position, p.content_hash, p.text, p.search_text) for p in passages
            ])
            self._execute(ADD_STATE, (len(passages), "passages"))
        self._append_fields(claim_id, fields)
        return True

    def _append_fields(self, claim_id: int, fields: Sequence[FieldRecord]) -> None:
        if fields:
            self._execute_many(INSERT_FIELD, [
                (claim_id, f.field, f.text, f.search_text, f.search_text) for f in fields
            ])

    def pending_fields(self) -> list[Claim]:
        if self._state("fields_from") == 0:
            return []
        return [Claim(lineage, self._scope(key), source, value)
                for lineage, key, source, value in self._fetch(SELECT_PENDING_FIELDS, ())]

    def append_fields(self, claim: Claim, fields: Sequence[FieldRecord]) -> None:
        subject = self._fetch(SELECT_SUBJECT_ID, (claim.lineage, claim.scope.key))
        found = subject and self._fetch(SELECT_CLAIM_ID, (subject[0][0], claim.source,
                                                          claim.value_hash))
        if not found:
            raise StoreError(f"no indexed claim of {claim.lineage!r} to add fields to")
        self._append_fields(int(found[0][0]), fields)

    def mark_fields_indexed(self) -> None:
        self._execute(UPDATE_STATE, (0, "fields_from"))

    def reset_retrieval(self) -> None:
        if self._has_vectors():
            self._execute(RESET_VECTORS, ())
        for statement in RESET:
            self._execute(statement, ())

    def retrieval_stats(self) -> RetrievalStats:
        claims = int(self._fetch(SELECT_CLAIM_COUNT, ())[0][0])
        vectors: dict[str, int] = {}
        if self._has_vectors():
            vectors = {str(m): int(n) for m, n in self._fetch(SELECT_VECTOR_STATS, ())}
        return RetrievalStats(claims, self._state("passages"), vectors)

    def claim_snapshots(self, claim_ids: Sequence[int]) -> list[tuple[int, Version]]:
        if not claim_ids:
            return []
        result = []
        for row in self._fetch(SELECT_CLAIM_SNAPSHOTS, (list(dict.fromkeys(claim_ids)),)):
            claim_id, vid, lineage, key, source, value, vf, vt, kf, kt, flags = row
            result.append((int(claim_id), Version(
                version_id=vid, lineage=lineage, scope=self._scope(key), source=source,
                value_json=value, valid_from=_instant(vf, flags, _VF),
                valid_to=None if vt is None else _instant(vt, flags, _VT),
                known_from=_instant(kf, flags, _KF),
                known_to=None if kt is None else _instant(kt, flags, _KT),
            )))
        return result

    # -- lexical -------------------------------------------------------------------------------
    def search_lexical(self, terms: Sequence[str], query: CandidateQuery) -> list[Candidate]:
        if not terms:
            return []
        params = self._params(query)
        params["match"] = " | ".join(terms)
        sql = SELECT_LEXICAL_FILTERED if query.filtered else SELECT_LEXICAL
        return [self._candidate(row) for row in self._fetch(sql, params)]

    def search_fields(self, terms: Sequence[str], query: CandidateQuery) -> list[FieldMatch]:
        if not terms:
            return []
        params = self._params(query)
        params["match"] = " | ".join(terms)
        sql = SELECT_FIELDS_FILTERED if query.filtered else SELECT_FIELDS
        return [FieldMatch(int(c), field, text) for c, field, text in self._fetch(sql, params)]

    def first_passages(self, claim_ids: Sequence[int]) -> list[Candidate]:
        if not claim_ids:
            return []
        return [self._candidate(row)
                for row in self._fetch(SELECT_FIRST_PASSAGES, (list(dict.fromkeys(claim_ids)),))]

    # -- vectors -------------------------------------------------------------------------------
    def passages_without_vectors(self, model_id: str, limit: int
                                 ) -> list[tuple[int, str, str]]:
        if self._has_vectors():
            rows = self._fetch(SELECT_WITHOUT_VECTORS, (model_id, limit))
        else:
            rows = self._fetch(SELECT_ALL_WITHOUT_VECTORS, (limit,))
        return [(int(pid), chash, text) for pid, chash, text in rows]

    def vectors_by_content(self, model_id: str, content_hashes: Sequence[str]
                           ) -> dict[str, bytes]:
        if not content_hashes or not self._has_vectors():
            return {}
        rows = self._fetch(SELECT_VECTORS_BY_CONTENT, (model_id, list(set(content_hashes))))
        return {chash: _bytes(values) for chash, values in rows}

    def append_vectors(self, model_id: str, rows: Sequence[tuple[int, bytes]]) -> None:
        if not self._has_vectors():
            try:
                self._execute(LOCK, (VECTOR_LOCK_KEY,))
                for statement in CREATE_VECTORS:
                    self._execute(statement, ())
            except StoreError as exc:
                raise StoreError(
                    f"cannot store vectors: the pgvector extension is missing or cannot be "
                    f"created ({exc}); ask the database owner to run CREATE EXTENSION vector "
                    "(see docs/deployment.md), or search lexically"
                ) from None
        self._execute_many(INSERT_VECTOR, [(model_id, pid, _literal(blob))
                                           for pid, blob in rows])

    def drop_vectors(self, model_id: str) -> int:
        if not self._has_vectors():
            return 0
        count = self._fetch(f"{DELETE_VECTORS} RETURNING 1", (model_id,))
        return len(count)

    def search_vectors(self, model_id: str, vector: bytes, query: CandidateQuery
                       ) -> list[Candidate]:
        if not self._has_vectors():
            return []
        params = self._params(query)
        params.update(model=model_id, vector=_literal(vector))
        sql = SELECT_VECTORS_FILTERED if query.filtered else SELECT_VECTORS
        return [self._candidate(row) for row in self._fetch(sql, params)]
