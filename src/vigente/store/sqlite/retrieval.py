"""SQLite tables and queries of retrieval. Mixed into :class:`~vigente.store.sqlite.SQLiteStore`.

Passages are indexed by FTS5 (BM25, ``unicode61 remove_diacritics 2``: Estonian and Italian
words match with or without diacritics). Vectors are float32 blobs searched by exact brute force
with numpy over an in-memory matrix, loaded once per model and reloaded when vectors change; the
stock ``sqlite3`` module cannot load ``sqlite-vec`` (see docs/benchmarks.md for the measurement
behind this choice).

The temporal filter runs inside candidate generation: a passage is a candidate only when a
kernel snapshot of its claim — same subject, source and value — is admissible at ``(t, k)``.
"""

from __future__ import annotations

import heapq
import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["FIELD_MIGRATIONS", "RETRIEVAL_MIGRATIONS", "SQLiteRetrieval"]

OPEN_END = 1 << 62
_VF, _VT, _KF, _KT = 1, 2, 4, 8

RETRIEVAL_MIGRATIONS: list[list[str]] = [
    # retrieval: claims (kernel timeline values), passages, FTS5 index, vectors
    [
        """CREATE TABLE retrieval_claims (
            claim_id   INTEGER PRIMARY KEY,
            subject_id INTEGER NOT NULL REFERENCES subjects (subject_id),
            source     TEXT NOT NULL,
            value      TEXT NOT NULL,
            value_hash TEXT NOT NULL,
            kind       TEXT NOT NULL CHECK (kind IN ('document', 'fact')),
            UNIQUE (subject_id, source, value_hash)
        )""",
        """CREATE TABLE retrieval_passages (
            passage_id   INTEGER PRIMARY KEY,
            claim_id     INTEGER NOT NULL REFERENCES retrieval_claims (claim_id),
            position     INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            text         TEXT NOT NULL,
            UNIQUE (claim_id, position)
        )""",
        "CREATE INDEX retrieval_passages_content ON retrieval_passages (content_hash)",
        """CREATE VIRTUAL TABLE retrieval_fts USING fts5 (
            text, content = 'retrieval_passages', content_rowid = 'passage_id',
            tokenize = 'unicode61 remove_diacritics 2'
        )""",
        """CREATE TABLE retrieval_terms (
            term TEXT PRIMARY KEY,
            df   INTEGER NOT NULL  -- passages that contain the (folded) term
        ) WITHOUT ROWID""",
        """CREATE TABLE retrieval_vectors (
            model_id   TEXT NOT NULL,
            passage_id INTEGER NOT NULL REFERENCES retrieval_passages (passage_id),
            vector     BLOB NOT NULL,
            PRIMARY KEY (model_id, passage_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE retrieval_state (
            key   TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        )""",
        """INSERT INTO retrieval_state VALUES
            ('indexed_through', 0), ('vectors', 0), ('passages', 0)""",
    ],
]

#: Appended after every other migration (store/sqlite/store.py): the title and reference of every
#: document claim, one row per field, with their own FTS5 index and document frequencies.
#: ``fields_from``: claims numbered below it were indexed before fields existed (backfilled by
#: the next refresh, then 0).
FIELD_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE retrieval_fields (
            field_id    INTEGER PRIMARY KEY,
            claim_id    INTEGER NOT NULL REFERENCES retrieval_claims (claim_id),
            field       TEXT NOT NULL CHECK (field IN ('title', 'reference')),
            text        TEXT NOT NULL,
            search_text TEXT NOT NULL,
            UNIQUE (claim_id, field)
        )""",
        """CREATE VIRTUAL TABLE retrieval_fields_fts USING fts5 (
            search_text, content = 'retrieval_fields', content_rowid = 'field_id',
            tokenize = 'unicode61 remove_diacritics 2'
        )""",
        """CREATE TABLE retrieval_field_terms (
            term TEXT PRIMARY KEY,
            df   INTEGER NOT NULL  -- fields that contain the term
        ) WITHOUT ROWID""",
        """INSERT INTO retrieval_state
            SELECT 'fields_from', coalesce(max(claim_id), 0) + 1 FROM retrieval_claims""",
    ],
]

_CANDIDATE_COLUMNS = """p.passage_id, cl.claim_id, s.lineage, s.scope_key, cl.source, cl.value,
    cl.kind, p.position, p.text, p.content_hash"""
# Claims with a snapshot admissible at (t, k); :relax also admits snapshots that have ended.
# One pass over the snapshots (CROSS JOIN fixes that order): the time predicates are checked
# on every row, and only the rows that pass look their claim up (~1 ms for 7,000 snapshots).
SELECT_ADMISSIBLE = """SELECT DISTINCT cl.claim_id FROM versions v
    CROSS JOIN retrieval_claims cl
    CROSS JOIN subjects s
    WHERE v.known_from <= :k AND v.known_to > :k AND v.valid_from <= :t
      AND (v.valid_to > :t OR :relax)
      AND cl.subject_id = v.subject_id AND cl.source = v.source AND cl.value = v.value
      AND s.subject_id = v.subject_id AND (:scope IS NULL OR s.scope_key = :scope)"""
SELECT_SCOPED_CLAIMS = """SELECT cl.claim_id FROM retrieval_claims cl
    JOIN subjects s ON s.subject_id = cl.subject_id WHERE s.scope_key = :scope"""
# Every passage matching the terms, scored once (BM25, higher is better); the temporal filter
# and the top-N selection are applied to these rows before any passage is returned.
SELECT_MATCHES = """SELECT p.passage_id, p.claim_id, -bm25(retrieval_fts) FROM retrieval_fts
    JOIN retrieval_passages p ON p.passage_id = retrieval_fts.rowid
    WHERE retrieval_fts MATCH ?"""
SELECT_TERM_COUNTS = "SELECT term, df FROM retrieval_terms WHERE term IN "
UPSERT_TERM = """INSERT INTO retrieval_terms (term, df) VALUES (?, ?)
    ON CONFLICT (term) DO UPDATE SET df = df + excluded.df"""
SELECT_CANDIDATES_BY_ID = f"""SELECT {_CANDIDATE_COLUMNS} FROM retrieval_passages p
    JOIN retrieval_claims cl ON cl.claim_id = p.claim_id
    JOIN subjects s ON s.subject_id = cl.subject_id WHERE p.passage_id IN """
SELECT_FIELD_TERM_COUNTS = "SELECT term, df FROM retrieval_field_terms WHERE term IN "
UPSERT_FIELD_TERM = """INSERT INTO retrieval_field_terms (term, df) VALUES (?, ?)
    ON CONFLICT (term) DO UPDATE SET df = df + excluded.df"""
SELECT_FIELD_MATCHES = """SELECT f.claim_id, f.field, f.search_text FROM retrieval_fields_fts
    JOIN retrieval_fields f ON f.field_id = retrieval_fields_fts.rowid
    WHERE retrieval_fields_fts MATCH ?"""
INSERT_FIELD = """INSERT OR IGNORE INTO retrieval_fields (claim_id, field, text, search_text)
    VALUES (?, ?, ?, ?)"""
INSERT_FIELD_FTS = "INSERT INTO retrieval_fields_fts (rowid, search_text) VALUES (?, ?)"
SELECT_PENDING_FIELDS = """SELECT s.lineage, s.scope_key, cl.source, cl.value
    FROM retrieval_claims cl JOIN subjects s ON s.subject_id = cl.subject_id
    WHERE cl.kind = 'document'
      AND cl.claim_id < (SELECT value FROM retrieval_state WHERE key = 'fields_from')
    ORDER BY cl.claim_id"""
SELECT_FIRST_PASSAGES = f"""SELECT {_CANDIDATE_COLUMNS} FROM retrieval_passages p
    JOIN retrieval_claims cl ON cl.claim_id = p.claim_id
    JOIN subjects s ON s.subject_id = cl.subject_id
    WHERE p.position = 0 AND p.claim_id IN """
SELECT_STATE = "SELECT value FROM retrieval_state WHERE key = ?"
UPDATE_STATE = "UPDATE retrieval_state SET value = ? WHERE key = ?"
BUMP_STATE = "UPDATE retrieval_state SET value = value + 1 WHERE key = ?"
ADD_STATE = "UPDATE retrieval_state SET value = value + ? WHERE key = ?"
SELECT_PENDING = """SELECT s.lineage, s.scope_key, v.source, v.value, max(v.rowid)
    FROM versions v JOIN subjects s ON s.subject_id = v.subject_id
    WHERE v.rowid > :after AND NOT EXISTS (
        SELECT 1 FROM retrieval_claims cl
         WHERE cl.subject_id = v.subject_id AND cl.source = v.source AND cl.value = v.value)
    GROUP BY v.subject_id, v.source, v.value ORDER BY min(v.rowid)"""
SELECT_MAX_VERSION = "SELECT coalesce(max(rowid), 0) FROM versions"
SELECT_SUBJECT_ID = "SELECT subject_id FROM subjects WHERE lineage = ? AND scope_key = ?"
INSERT_CLAIM = """INSERT OR IGNORE INTO retrieval_claims (subject_id, source, value, value_hash,
    kind) VALUES (?, ?, ?, ?, ?)"""
SELECT_CLAIM_ID = """SELECT claim_id FROM retrieval_claims
    WHERE subject_id = ? AND source = ? AND value_hash = ?"""
SELECT_CLAIM_HAS_PASSAGES = "SELECT 1 FROM retrieval_passages WHERE claim_id = ? LIMIT 1"
INSERT_PASSAGE = """INSERT INTO retrieval_passages (claim_id, position, content_hash, text)
    VALUES (?, ?, ?, ?)"""
INSERT_FTS = "INSERT INTO retrieval_fts (rowid, text) VALUES (?, ?)"
SELECT_CLAIM_SNAPSHOTS = """SELECT cl.claim_id, v.version_id, s.lineage, s.scope_key, v.source,
    v.value, v.valid_from, v.valid_to, v.known_from, v.known_to, v.date_flags
    FROM retrieval_claims cl
    JOIN versions v
      ON v.subject_id = cl.subject_id AND v.source = cl.source AND v.value = cl.value
    JOIN subjects s ON s.subject_id = cl.subject_id
    WHERE cl.claim_id IN """
SELECT_WITHOUT_VECTORS = """SELECT p.passage_id, p.content_hash, p.text FROM retrieval_passages p
    WHERE NOT EXISTS (SELECT 1 FROM retrieval_vectors r
                       WHERE r.model_id = ? AND r.passage_id = p.passage_id)
    ORDER BY p.passage_id LIMIT ?"""
SELECT_VECTORS_BY_CONTENT = """SELECT p.content_hash, r.vector FROM retrieval_vectors r
    JOIN retrieval_passages p ON p.passage_id = r.passage_id
    WHERE r.model_id = ? AND p.content_hash IN """
INSERT_VECTOR = """INSERT OR REPLACE INTO retrieval_vectors (model_id, passage_id, vector)
    VALUES (?, ?, ?)"""
DELETE_VECTORS = "DELETE FROM retrieval_vectors WHERE model_id = ?"
SELECT_MATRIX_ROWS = """SELECT r.passage_id, p.claim_id, p.content_hash FROM retrieval_vectors r
    JOIN retrieval_passages p ON p.passage_id = r.passage_id
    WHERE r.model_id = ? ORDER BY r.passage_id"""
# One vector per distinct passage text: versions of a text share most of their passages.
SELECT_MATRIX_VECTORS = """SELECT p.content_hash, min(r.vector) FROM retrieval_vectors r
    JOIN retrieval_passages p ON p.passage_id = r.passage_id
    WHERE r.model_id = ? GROUP BY p.content_hash"""
SELECT_STATS = """SELECT (SELECT count(*) FROM retrieval_claims),
    (SELECT count(*) FROM retrieval_passages)"""
SELECT_VECTOR_STATS = "SELECT model_id, count(*) FROM retrieval_vectors GROUP BY model_id"
RESET = [
    "DELETE FROM retrieval_vectors",
    "DELETE FROM retrieval_terms",
    "DELETE FROM retrieval_field_terms",
    "INSERT INTO retrieval_fields_fts (retrieval_fields_fts) VALUES ('delete-all')",
    "DELETE FROM retrieval_fields",
    "UPDATE retrieval_state SET value = 0 WHERE key = 'fields_from'",
    "INSERT INTO retrieval_fts (retrieval_fts) VALUES ('delete-all')",
    "DELETE FROM retrieval_passages",
    "DELETE FROM retrieval_claims",
    "UPDATE retrieval_state SET value = 0 WHERE key IN ('indexed_through', 'passages')",
    "UPDATE retrieval_state SET value = value + 1 WHERE key = 'vectors'",
]

#: BM25 costs time in proportion to the rows that match any query term. The match keeps the
#: rarest terms whose postings add up to at most this many rows (at least the rarest term);
#: the terms left out are the most common ones, with the lowest IDF. ``None``: every term.
MATCH_BUDGET = 3_000
#: The same for titles and references (one row per version). A title always holds its rarest
#: word, which is always matched, so the budget never loses an exact title; every field
#: returned is then scored against the whole query.
FIELD_MATCH_BUDGET = 200


def _in(n: int) -> str:
    return "(" + ", ".join("?" * n) + ")"


def _match_expression(terms: Sequence[str]) -> str:
    """An FTS5 query: any of the terms, each quoted as a string (no query syntax)."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


class _Matrix:
    """The vectors of one model in memory: one row per distinct passage text (``rows``), and
    for every passage its id, its claim id and the row of its text (``text_rows``)."""

    def __init__(self, generation: int, passage_ids: Any, claim_ids: Any, text_rows: Any,
                 rows: Any) -> None:
        self.generation = generation
        self.passage_ids = passage_ids
        self.claim_ids = claim_ids
        self.text_rows = text_rows
        self.rows = rows


class SQLiteRetrieval(RetrievalIndex, VectorIndex):
    """The retrieval tables of the SQLite backend."""

    _conn: sqlite3.Connection
    _lock: threading.RLock

    # -- helpers -----------------------------------------------------------------------------
    def _retrieval_scopes(self) -> dict[str, Scope]:
        cache: dict[str, Scope] | None = getattr(self, "_retrieval_scope_cache", None)
        if cache is None:
            cache = {}
            self._retrieval_scope_cache = cache
        return cache

    def _scope(self, key: str) -> Scope:
        scopes = self._retrieval_scopes()
        scope = scopes.get(key)
        if scope is None:
            scope = scopes[key] = Scope.from_key(key)
        return scope

    def _candidate(self, row: Sequence[Any], score: float) -> Candidate:
        pid, claim_id, lineage, scope_key, source, value, kind, position, text, chash = row[:10]
        return Candidate(
            passage_id=int(pid), claim_id=int(claim_id),
            claim=Claim(lineage, self._scope(scope_key), source, value), kind=kind,
            position=int(position), text=text, content_hash=chash, score=float(score),
        )

    def _state(self, key: str) -> int:
        row = self._conn.execute(SELECT_STATE, (key,)).fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _filter_params(query: CandidateQuery) -> dict[str, Any]:
        assert query.valid_at is not None and query.known_at is not None
        return {
            "t": query.valid_at.micros,
            "k": query.known_at.micros,
            "relax": int(query.include_superseded),
            "scope": None if query.scope is None else query.scope.key,
        }

    # -- indexing ------------------------------------------------------------------------------
    def pending_claims(self, *, full: bool = False) -> tuple[list[Claim], int]:
        with self._lock:
            after = 0 if full else self._state("indexed_through")
            newest = int(self._conn.execute(SELECT_MAX_VERSION).fetchone()[0])
            if newest <= after:
                return [], 0
            rows = self._conn.execute(SELECT_PENDING, {"after": after}).fetchall()
        claims = [Claim(lineage, self._scope(key), source, value)
                  for lineage, key, source, value, _ in rows]
        return claims, newest

    def mark_indexed(self, through: int) -> None:
        with self._lock:
            self._conn.execute(UPDATE_STATE, (through, "indexed_through"))

    def append_passages(self, claim: Claim, kind: str, passages: Sequence[PassageRecord],
                        fields: Sequence[FieldRecord] = ()) -> bool:
        with self._lock:
            row = self._conn.execute(SELECT_SUBJECT_ID, (claim.lineage, claim.scope.key)).fetchone()
            if row is None:
                raise StoreError(f"no timeline {claim.lineage!r} to index passages for")
            subject = int(row[0])
            cursor = self._conn.execute(
                INSERT_CLAIM, (subject, claim.source, claim.value_json, claim.value_hash, kind)
            )
            if cursor.rowcount == 0:
                return False  # indexed already (by another writer)
            (claim_id,) = self._conn.execute(
                SELECT_CLAIM_ID, (subject, claim.source, claim.value_hash)
            ).fetchone()
            df: Counter[str] = Counter()
            for passage in passages:
                pid = self._conn.execute(
                    INSERT_PASSAGE, (claim_id, passage.position, passage.content_hash,
                                     passage.text)
                ).lastrowid
                self._conn.execute(INSERT_FTS, (pid, passage.text))
                df.update(set(passage.search_text.split()))
            self._conn.executemany(UPSERT_TERM, df.items())
            self._conn.execute(ADD_STATE, (len(passages), "passages"))
            self._append_fields(int(claim_id), fields)
        return True

    def _append_fields(self, claim_id: int, fields: Sequence[FieldRecord]) -> None:
        df: Counter[str] = Counter()
        for field in fields:
            cursor = self._conn.execute(INSERT_FIELD, (claim_id, field.field, field.text,
                                                       field.search_text))
            if cursor.rowcount:
                self._conn.execute(INSERT_FIELD_FTS, (cursor.lastrowid, field.search_text))
                df.update(set(field.search_text.split()))
        self._conn.executemany(UPSERT_FIELD_TERM, df.items())

    def pending_fields(self) -> list[Claim]:
        with self._lock:
            if self._state("fields_from") == 0:
                return []
            rows = self._conn.execute(SELECT_PENDING_FIELDS).fetchall()
        return [Claim(lineage, self._scope(key), source, value)
                for lineage, key, source, value in rows]

    def append_fields(self, claim: Claim, fields: Sequence[FieldRecord]) -> None:
        with self._lock:
            row = self._conn.execute(SELECT_SUBJECT_ID, (claim.lineage, claim.scope.key)).fetchone()
            found = None if row is None else self._conn.execute(
                SELECT_CLAIM_ID, (int(row[0]), claim.source, claim.value_hash)).fetchone()
            if found is None:
                raise StoreError(f"no indexed claim of {claim.lineage!r} to add fields to")
            self._append_fields(int(found[0]), fields)

    def mark_fields_indexed(self) -> None:
        with self._lock:
            self._conn.execute(UPDATE_STATE, (0, "fields_from"))

    def reset_retrieval(self) -> None:
        with self._lock:
            for statement in RESET:
                self._conn.execute(statement)

    def retrieval_stats(self) -> RetrievalStats:
        with self._lock:
            claims, passages = self._conn.execute(SELECT_STATS).fetchone()
            vectors = dict(self._conn.execute(SELECT_VECTOR_STATS).fetchall())
        return RetrievalStats(int(claims), int(passages), {str(k): int(v)
                                                          for k, v in vectors.items()})

    def claim_snapshots(self, claim_ids: Sequence[int]) -> list[tuple[int, Version]]:
        result: list[tuple[int, Version]] = []
        ids = list(dict.fromkeys(claim_ids))
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            with self._lock:
                rows = self._conn.execute(
                    f"{SELECT_CLAIM_SNAPSHOTS}{_in(len(part))} ORDER BY v.rowid", part
                ).fetchall()
            for claim_id, *snapshot in rows:
                vid, lineage, key, source, value, vf, vt, kf, kt, flags = snapshot
                result.append((int(claim_id), Version(
                    version_id=vid, lineage=lineage, scope=self._scope(key), source=source,
                    value_json=value,
                    valid_from=Instant(vf, bool(flags & _VF)),
                    valid_to=None if vt >= OPEN_END else Instant(vt, bool(flags & _VT)),
                    known_from=Instant(kf, bool(flags & _KF)),
                    known_to=None if kt >= OPEN_END else Instant(kt, bool(flags & _KT)),
                )))
        return result

    # -- lexical -------------------------------------------------------------------------------
    def _useful_terms(self, terms: Sequence[str], *, fields: bool = False) -> list[str]:
        """The rarest terms within :data:`MATCH_BUDGET` (:data:`FIELD_MATCH_BUDGET` for
        ``fields``; terms not in the index match nothing and are left out)."""
        budget: int | None = (FIELD_MATCH_BUDGET if fields
                              else getattr(self, "match_budget", MATCH_BUDGET))
        counts: dict[str, int] = dict(self._conn.execute(
            f"{SELECT_FIELD_TERM_COUNTS if fields else SELECT_TERM_COUNTS}{_in(len(terms))}",
            list(terms),
        ).fetchall())
        chosen: list[str] = []
        total = 0
        for term in sorted(counts, key=lambda t: (counts[t], t)):
            if budget is not None and chosen and total + counts[term] > budget:
                break
            chosen.append(term)
            total += counts[term]
        return chosen

    def _generation(self) -> tuple[int, int]:
        """Changes since the connection opened, own and other connections'."""
        other = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        return self._conn.total_changes, other

    def _matches(self, terms: Sequence[str]) -> list[tuple[int, int, float]]:
        """``(passage_id, claim_id, score)`` of every passage matching the terms; the last
        result is kept, so the filtered ranking and the baseline share one scoring pass."""
        key = (tuple(terms), self._generation())
        cached: tuple[Any, list[tuple[int, int, float]]] | None = getattr(
            self, "_match_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        rows = self._conn.execute(SELECT_MATCHES, (_match_expression(terms),)).fetchall()
        self._match_cache = (key, rows)
        return rows

    def _admissible(self, query: CandidateQuery) -> set[int]:
        """Claim ids with a snapshot that passes the query's filter (kept for the next call
        with the same filter while nothing changes)."""
        if query.filtered:
            params = self._filter_params(query)
            key: tuple[Any, ...] = ("t", *sorted(params.items()), self._generation())
            sql, bound = SELECT_ADMISSIBLE, params
        else:
            assert query.scope is not None
            key = ("scope", query.scope.key, self._generation())
            sql, bound = SELECT_SCOPED_CLAIMS, {"scope": query.scope.key}
        cached: tuple[Any, set[int]] | None = getattr(self, "_admissible_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        ids = {int(r[0]) for r in self._conn.execute(sql, bound)}
        self._admissible_cache = (key, ids)
        return ids

    def _candidates_by_id(self, scored: Sequence[tuple[int, float]]) -> list[Candidate]:
        ids = [pid for pid, _ in scored]
        if not ids:
            return []
        found = {int(row[0]): row for row in self._conn.execute(
            f"{SELECT_CANDIDATES_BY_ID}{_in(len(ids))}", ids).fetchall()}
        return [self._candidate(found[pid], score) for pid, score in scored if pid in found]

    def search_lexical(self, terms: Sequence[str], query: CandidateQuery) -> list[Candidate]:
        if not terms:
            return []
        with self._lock:
            useful = self._useful_terms(terms)
            if not useful:
                return []
            rows = self._matches(useful)
            if query.filtered or query.scope is not None:
                allowed = self._admissible(query)
                rows = [r for r in rows if r[1] in allowed]
            top = heapq.nsmallest(query.limit, rows, key=lambda r: (-r[2], r[0]))
            return self._candidates_by_id([(pid, score) for pid, _, score in top])

    def search_fields(self, terms: Sequence[str], query: CandidateQuery) -> list[FieldMatch]:
        if not terms:
            return []
        with self._lock:
            useful = self._useful_terms(terms, fields=True)
            if not useful:
                return []
            key = (tuple(useful), self._generation())
            cached: tuple[Any, list[tuple[int, str, str]]] | None = getattr(
                self, "_field_cache", None)
            if cached is not None and cached[0] == key:
                rows = cached[1]  # the filtered ranking and the baseline share one match
            else:
                rows = self._conn.execute(SELECT_FIELD_MATCHES,
                                          (_match_expression(useful),)).fetchall()
                self._field_cache = (key, rows)
            if query.filtered or query.scope is not None:
                allowed = self._admissible(query)
                rows = [r for r in rows if r[0] in allowed]
        if len({r[0] for r in rows}) > query.limit:
            # The claims whose fields hold most of the query's terms, as many as asked for.
            wanted = set(terms)
            hits: dict[int, int] = {}
            for claim_id, _, text in rows:
                hits[claim_id] = max(hits.get(claim_id, 0),
                                     len(wanted.intersection(text.split())))
            kept = set(heapq.nsmallest(query.limit, hits, key=lambda c: (-hits[c], c)))
            rows = [r for r in rows if r[0] in kept]
        return [FieldMatch(claim_id, field, text) for claim_id, field, text in rows]

    def first_passages(self, claim_ids: Sequence[int]) -> list[Candidate]:
        ids = list(dict.fromkeys(claim_ids))
        result: list[Candidate] = []
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            with self._lock:
                rows = self._conn.execute(f"{SELECT_FIRST_PASSAGES}{_in(len(part))}",
                                          part).fetchall()
            result.extend(self._candidate(row, 0.0) for row in rows)
        return result

    # -- vectors -------------------------------------------------------------------------------
    def passages_without_vectors(self, model_id: str, limit: int
                                 ) -> list[tuple[int, str, str]]:
        with self._lock:
            rows = self._conn.execute(SELECT_WITHOUT_VECTORS, (model_id, limit)).fetchall()
        return [(int(pid), chash, text) for pid, chash, text in rows]

    def vectors_by_content(self, model_id: str, content_hashes: Sequence[str]
                           ) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        hashes = list(dict.fromkeys(content_hashes))
        for start in range(0, len(hashes), 500):
            part = hashes[start:start + 500]
            with self._lock:
                found.update(self._conn.execute(
                    f"{SELECT_VECTORS_BY_CONTENT}{_in(len(part))}", [model_id, *part]
                ).fetchall())
        return found

    def append_vectors(self, model_id: str, rows: Sequence[tuple[int, bytes]]) -> None:
        with self._lock:
            self._conn.executemany(INSERT_VECTOR, [(model_id, pid, blob) for pid, blob in rows])
            self._conn.execute(BUMP_STATE, ("vectors",))

    def drop_vectors(self, model_id: str) -> int:
        with self._lock:
            count = self._conn.execute(DELETE_VECTORS, (model_id,)).rowcount
            self._conn.execute(BUMP_STATE, ("vectors",))
        return int(count)

    def _matrix(self, model_id: str) -> _Matrix:
        import numpy as np

        cache: dict[str, _Matrix] | None = getattr(self, "_retrieval_matrices", None)
        if cache is None:
            cache = {}
            self._retrieval_matrices = cache
        generation = self._state("vectors")
        matrix = cache.get(model_id)
        if matrix is not None and matrix.generation == generation:
            return matrix
        passages = self._conn.execute(SELECT_MATRIX_ROWS, (model_id,)).fetchall()
        vectors = self._conn.execute(SELECT_MATRIX_VECTORS, (model_id,)).fetchall()
        if passages:
            dims = len(vectors[0][1]) // 4
            position = {content_hash: i for i, (content_hash, _) in enumerate(vectors)}
            data = np.frombuffer(b"".join(v for _, v in vectors), dtype="<f4").reshape(-1, dims)
            passage_ids = np.fromiter((r[0] for r in passages), dtype=np.int64,
                                      count=len(passages))
            claim_ids = np.fromiter((r[1] for r in passages), dtype=np.int64,
                                    count=len(passages))
            text_rows = np.fromiter((position[r[2]] for r in passages), dtype=np.int64,
                                    count=len(passages))
        else:
            data = np.zeros((0, 0), dtype=np.float32)
            passage_ids = claim_ids = text_rows = np.zeros(0, dtype=np.int64)
        matrix = cache[model_id] = _Matrix(generation, passage_ids, claim_ids, text_rows,
                                           np.ascontiguousarray(data, dtype=np.float32))
        return matrix

    def _allowed_rows(self, matrix: _Matrix, query: CandidateQuery
                      ) -> npt.NDArray[np.int64] | None:
        """Row numbers of the matrix whose claim passes the filter (``None``: every row)."""
        import numpy as np

        if not query.filtered and query.scope is None:
            return None
        ids = list(self._admissible(query))
        allowed = np.zeros(int(matrix.claim_ids.max()) + 1, dtype=bool)
        claim_ids = np.asarray(ids, dtype=np.int64)
        allowed[claim_ids[claim_ids < len(allowed)]] = True
        rows: npt.NDArray[np.int64] = np.flatnonzero(allowed[matrix.claim_ids])
        return rows

    def search_vectors(self, model_id: str, vector: bytes, query: CandidateQuery
                       ) -> list[Candidate]:
        import numpy as np

        with self._lock:
            matrix = self._matrix(model_id)
            if not len(matrix.passage_ids):
                return []
            q = np.frombuffer(vector, dtype="<f4")
            if q.shape[0] != matrix.rows.shape[1]:
                raise StoreError(
                    f"a {q.shape[0]}-dimensional query cannot be compared with the "
                    f"{matrix.rows.shape[1]}-dimensional vectors of {model_id!r}"
                )
            # One dot product per distinct text (kept for the baseline ranking of the same
            # query), then the filter picks the admissible passages before the top-N is taken.
            key = (model_id, matrix.generation, vector)
            cached: tuple[Any, Any] | None = getattr(self, "_score_cache", None)
            if cached is not None and cached[0] == key:
                text_scores = cached[1]
            else:
                # einsum, not BLAS: the scan is bound by memory, and BLAS's thread pool fights
                # the embedding model's threads (measured: 52 ms vs 23 ms for embed + scan).
                text_scores = np.einsum("ij,j->i", matrix.rows, q)
                self._score_cache = (key, text_scores)
            rows = self._allowed_rows(matrix, query)
            if rows is None:
                rows = np.arange(len(matrix.passage_ids))
            scores = text_scores[matrix.text_rows[rows]]
            if not len(scores):
                return []
            limit = min(query.limit, len(scores))
            top = np.argpartition(-scores, limit - 1)[:limit]
            top = top[np.lexsort((matrix.passage_ids[rows[top]], -scores[top]))]
            return self._candidates_by_id(
                [(int(matrix.passage_ids[rows[i]]), float(scores[i])) for i in top])
