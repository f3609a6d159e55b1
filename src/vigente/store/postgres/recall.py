"""PostgreSQL tables of the recall index over the runtime graph (vigente.runtime.recall).

Mixed into :class:`~vigente.store.postgres.PostgresStore`; the same shape as SQLite's
(store/sqlite/recall.py): rows of searchable records with running counts, the terms of each
record with the term's running record count, and vectors per embedding model (``bytea``,
compared by the caller, so both backends rank alike). Purged with the account.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from vigente.records.runtime import RecallDoc, term_weight
from vigente.store.contracts import RecallIndex
from vigente.store.postgres import runtime as postgres_runtime

__all__ = ["PostgresRecall", "RECALL_MIGRATIONS", "RECALL_NAME_MIGRATIONS"]

RECALL_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE runtime_recall (
            conversation_id text COLLATE "C" NOT NULL
                            REFERENCES runtime_conversations (conversation_id),
            seq             bigint NOT NULL,
            record_id       text COLLATE "C" NOT NULL,
            kind            text COLLATE "C" NOT NULL,
            speaker         text COLLATE "C" NOT NULL,
            participant_id  text COLLATE "C",
            known_from      bigint NOT NULL,
            length          bigint NOT NULL,
            text            text NOT NULL,
            cum_docs        bigint NOT NULL,
            cum_length      bigint NOT NULL,
            PRIMARY KEY (conversation_id, seq)
        )""",
        "CREATE INDEX runtime_recall_known ON runtime_recall (conversation_id, known_from, seq)",
        """CREATE TABLE runtime_recall_terms (
            conversation_id text COLLATE "C" NOT NULL,
            term            text COLLATE "C" NOT NULL,
            seq             bigint NOT NULL,
            known_from      bigint NOT NULL,
            tf              integer NOT NULL,
            ordinal         bigint NOT NULL,
            length          bigint NOT NULL,
            weight          bigint NOT NULL,
            PRIMARY KEY (conversation_id, term, seq)
        )""",
        """CREATE INDEX runtime_recall_terms_known
            ON runtime_recall_terms (conversation_id, term, known_from, ordinal)""",
        """CREATE INDEX runtime_recall_terms_weight
            ON runtime_recall_terms (conversation_id, term, weight DESC, seq)""",
        """CREATE TABLE runtime_recall_vectors (
            conversation_id text COLLATE "C" NOT NULL,
            model_id        text COLLATE "C" NOT NULL,
            seq             bigint NOT NULL,
            known_from      bigint NOT NULL,
            vector          bytea NOT NULL,
            PRIMARY KEY (conversation_id, model_id, seq)
        )""",
    ],
    [  # a conversation's vector count and last seq per model, kept as vectors come and go
        """CREATE TABLE runtime_recall_vector_marks (
            conversation_id text COLLATE "C" NOT NULL,
            model_id        text COLLATE "C" NOT NULL,
            vectors         bigint NOT NULL,
            last_seq        bigint NOT NULL,
            PRIMARY KEY (conversation_id, model_id)
        )""",
        """INSERT INTO runtime_recall_vector_marks
            SELECT conversation_id, model_id, count(*), max(seq) FROM runtime_recall_vectors
            GROUP BY conversation_id, model_id""",
    ],
]


#: Who spoke as a field of its own (issue 42), and terms stemmed (issue 36): the index is a cache
#: of the records, so it is emptied and built again from them on the next recall (the vectors,
#: keyed by record and made from the same text, are kept).
RECALL_NAME_MIGRATIONS: list[list[str]] = [
    [
        'ALTER TABLE runtime_recall ADD COLUMN name text COLLATE "C"',
        """CREATE INDEX runtime_recall_names
            ON runtime_recall (conversation_id, name, known_from) WHERE name IS NOT NULL""",
        "DELETE FROM runtime_recall_terms",
        "DELETE FROM runtime_recall",
        "DELETE FROM runtime_cache_marks WHERE cache = 'recall'",
    ],
]


SELECT_LAST_DOC = """SELECT cum_docs, cum_length FROM runtime_recall
    WHERE conversation_id = %s ORDER BY seq DESC LIMIT 1"""
INSERT_DOC = """INSERT INTO runtime_recall (conversation_id, seq, record_id, kind, speaker,
    participant_id, known_from, length, text, cum_docs, cum_length, name)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING 1"""
# the last ordinal of each term of a batch (one statement)
SELECT_LAST_ORDINALS = """SELECT t.term, (SELECT r.ordinal FROM runtime_recall_terms r
        WHERE r.conversation_id = %s AND r.term = t.term ORDER BY r.seq DESC LIMIT 1)
    FROM unnest(%s::text[]) AS t (term)"""
INSERT_TERM = """INSERT INTO runtime_recall_terms (conversation_id, term, seq, known_from, tf,
    ordinal, length, weight) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"""
SELECT_STATS = """SELECT cum_docs, cum_length FROM runtime_recall
    WHERE conversation_id = %s AND known_from <= %s ORDER BY known_from DESC, seq DESC LIMIT 1"""
SELECT_DF = """SELECT t.term, (SELECT r.ordinal FROM runtime_recall_terms r
        WHERE r.conversation_id = %s AND r.term = t.term AND r.known_from <= %s
        ORDER BY r.known_from DESC, r.ordinal DESC LIMIT 1)
    FROM unnest(%s::text[]) AS t (term)"""
# SELECT_STATS and SELECT_DF of one conversation in one statement (one row)
SELECT_STATISTICS = """SELECT s.cum_docs, s.cum_length, ARRAY(
        SELECT coalesce((SELECT r.ordinal FROM runtime_recall_terms r
            WHERE r.conversation_id = %(c)s AND r.term = t.term AND r.known_from <= %(k)s
            ORDER BY r.known_from DESC, r.ordinal DESC LIMIT 1), 0)
        FROM unnest(%(t)s::text[]) WITH ORDINALITY AS t (term, n) ORDER BY t.n)
    FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT cum_docs, cum_length FROM runtime_recall
        WHERE conversation_id = %(c)s AND known_from <= %(k)s
        ORDER BY known_from DESC, seq DESC LIMIT 1) s ON true"""
SELECT_POSTINGS = """SELECT seq, tf, length FROM runtime_recall_terms
    WHERE conversation_id = %s AND term = %s AND known_from <= %s
    ORDER BY weight DESC, seq LIMIT %s"""
_DOC_COLUMNS = """conversation_id, seq, record_id, kind, speaker, participant_id, known_from,
    text, length, name"""
SELECT_DOCS = f"""SELECT {_DOC_COLUMNS} FROM runtime_recall
    WHERE conversation_id = %s AND seq = ANY(%s)"""
SELECT_BETWEEN = f"""SELECT {_DOC_COLUMNS} FROM runtime_recall
    WHERE conversation_id = %s AND known_from >= %s AND known_from <= %s
    ORDER BY known_from DESC, seq DESC LIMIT %s"""
SELECT_UNEMBEDDED = """SELECT d.seq, d.known_from, d.text FROM runtime_recall d
    WHERE d.conversation_id = %s AND d.seq > %s AND NOT EXISTS (
        SELECT 1 FROM runtime_recall_vectors v WHERE v.conversation_id = d.conversation_id
        AND v.model_id = %s AND v.seq = d.seq) ORDER BY d.seq LIMIT %s"""
# the vectors, and the mark moved by those that were new (one statement)
INSERT_VECTORS = """WITH added AS (
        INSERT INTO runtime_recall_vectors (conversation_id, model_id, seq, known_from, vector)
        SELECT %s, %s, v.seq, v.known, v.vector
        FROM unnest(%s::bigint[], %s::bigint[], %s::bytea[]) AS v (seq, known, vector)
        ON CONFLICT DO NOTHING RETURNING conversation_id, model_id, seq)
    INSERT INTO runtime_recall_vector_marks
    SELECT conversation_id, model_id, count(*), max(seq) FROM added
    GROUP BY conversation_id, model_id
    ON CONFLICT (conversation_id, model_id) DO UPDATE
    SET vectors = runtime_recall_vector_marks.vectors + excluded.vectors,
        last_seq = greatest(runtime_recall_vector_marks.last_seq, excluded.last_seq)"""
SELECT_VECTOR_MARK = """SELECT vectors, last_seq FROM runtime_recall_vector_marks
    WHERE conversation_id = %s AND model_id = %s"""
DELETE_MARKS = "DELETE FROM runtime_recall_vector_marks WHERE conversation_id = %s"
COUNT_MARKS = """INSERT INTO runtime_recall_vector_marks
    SELECT conversation_id, model_id, count(*), max(seq) FROM runtime_recall_vectors
    WHERE conversation_id = %s GROUP BY conversation_id, model_id"""
SELECT_VECTORS = """SELECT seq, known_from, vector FROM runtime_recall_vectors
    WHERE conversation_id = %s AND model_id = %s ORDER BY seq"""

# the speakers' names of a conversation with the first time each was known: a skip scan of
# runtime_recall_names, one seek per name
SELECT_NAMES = """WITH RECURSIVE n (name) AS (
        SELECT min(name) FROM runtime_recall WHERE conversation_id = %s AND name IS NOT NULL
        UNION ALL
        SELECT (SELECT min(r.name) FROM runtime_recall r
                WHERE r.conversation_id = %s AND r.name > n.name)
        FROM n WHERE n.name IS NOT NULL)
    SELECT n.name, (SELECT min(r.known_from) FROM runtime_recall r
                    WHERE r.conversation_id = %s AND r.name = n.name)
    FROM n WHERE n.name IS NOT NULL"""

def _doc(row: Sequence[Any]) -> RecallDoc:
    conversation, seq, record_id, kind, speaker, participant, known, text, length, name = row
    return RecallDoc(conversation, int(seq), record_id, kind, speaker, participant, int(known),
                     text, {}, int(length), name)


class PostgresRecall(RecallIndex):
    _fetch: Callable[[str, Sequence[Any] | dict[str, Any]], list[tuple[Any, ...]]]
    _read: Callable[[str, Sequence[Any] | dict[str, Any]], list[tuple[Any, ...]]]
    _read_many: Callable[[str, Sequence[Sequence[Any] | dict[str, Any]]],
                         list[list[tuple[Any, ...]]]]
    _execute: Callable[[str, Sequence[Any]], None]
    _execute_many: Callable[[str, Sequence[Sequence[Any]]], None]

    def append_runtime_recall(self, conversation_id: str, docs: Sequence[RecallDoc],
                              through: int) -> None:
        found = self._fetch(SELECT_LAST_DOC, (conversation_id,))
        count, total = (int(found[0][0]), int(found[0][1])) if found else (0, 0)
        terms = sorted({t for d in docs for t in d.terms})
        ordinals = {term: int(o or 0) for term, o in
                    self._fetch(SELECT_LAST_ORDINALS, (conversation_id, terms))} if terms else {}
        rows: list[tuple[Any, ...]] = []
        for d in docs:
            inserted = self._fetch(INSERT_DOC, (
                conversation_id, d.seq, d.record_id, d.kind, d.speaker, d.participant_id,
                d.known_micros, d.length, d.text, count + 1, total + d.length, d.name))
            if not inserted:  # indexed already
                continue
            count, total = count + 1, total + d.length
            for term, tf in d.terms.items():
                ordinals[term] = ordinals.get(term, 0) + 1
                rows.append((conversation_id, term, d.seq, d.known_micros, tf, ordinals[term],
                             d.length, term_weight(tf, d.length)))
        if rows:
            self._execute_many(INSERT_TERM, rows)
        self._execute(postgres_runtime.UPSERT_MARK, (conversation_id, "recall", through))

    def runtime_recall_stats(self, conversation_ids: Sequence[str], known_micros: int
                             ) -> tuple[int, int]:
        docs = length = 0
        for cid in conversation_ids:
            rows = self._read(SELECT_STATS, (cid, known_micros))
            if rows:
                docs, length = docs + int(rows[0][0]), length + int(rows[0][1])
        return docs, length

    def runtime_recall_term_counts(self, conversation_ids: Sequence[str], terms: Sequence[str],
                                   known_micros: int) -> dict[str, int]:
        out = dict.fromkeys(terms, 0)
        if not terms:
            return out
        for cid in conversation_ids:
            for term, ordinal in self._read(SELECT_DF, (cid, known_micros, list(terms))):
                out[term] += int(ordinal or 0)
        return out

    def runtime_recall_statistics(self, conversation_ids: Sequence[str], terms: Sequence[str],
                                  known_micros: int) -> tuple[int, int, dict[str, int]]:
        docs = length = 0
        counts = dict.fromkeys(terms, 0)
        found = self._read_many(SELECT_STATISTICS, [
            {"c": cid, "k": known_micros, "t": list(terms)} for cid in conversation_ids])
        for ((d, n, ordinals),) in found:  # one row per conversation
            if d is not None:
                docs, length = docs + int(d), length + int(n)
            for term, ordinal in zip(terms, ordinals, strict=True):
                counts[term] += int(ordinal)
        return docs, length, counts

    def runtime_recall_postings(self, conversation_ids: Sequence[str], terms: Sequence[str],
                                known_micros: int, limit: int
                                ) -> list[tuple[str, int, str, int, int]]:
        # one statement per conversation and term (each its own seek of the weight index),
        # pipelined: one round trip
        pairs = [(cid, term) for cid in conversation_ids for term in terms]
        found = self._read_many(SELECT_POSTINGS, [(cid, term, known_micros, limit)
                                                  for cid, term in pairs])
        return [(cid, int(seq), term, int(tf), int(length))
                for (cid, term), rows in zip(pairs, found, strict=True)
                for seq, tf, length in rows]

    def runtime_recall_names(self, conversation_ids: Sequence[str], known_micros: int
                             ) -> list[str]:
        names: set[str] = set()
        for cid in conversation_ids:
            found = self._read(SELECT_NAMES, (cid, cid, cid))
            names |= {str(name) for name, first in found if int(first) <= known_micros}
        return sorted(names)

    def runtime_recall_docs(self, keys: Sequence[tuple[str, int]]) -> list[RecallDoc]:
        by_conversation: dict[str, list[int]] = {}
        for cid, seq in keys:
            by_conversation.setdefault(cid, []).append(seq)
        out: list[RecallDoc] = []
        for cid, seqs in by_conversation.items():
            out += [_doc(r) for r in self._read(SELECT_DOCS, (cid, seqs))]
        return out

    def runtime_recall_between(self, conversation_ids: Sequence[str], start_micros: int,
                               end_micros: int, limit: int) -> list[RecallDoc]:
        out: list[RecallDoc] = []
        for cid in conversation_ids:
            out += [_doc(r) for r in self._read(SELECT_BETWEEN,
                                                (cid, start_micros, end_micros, limit))]
        out.sort(key=lambda d: (-d.known_micros, d.conversation_id, -d.seq))
        return out[:limit]

    def runtime_recall_unembedded(self, conversation_id: str, model_id: str, after: int,
                                  limit: int) -> list[tuple[int, int, str]]:
        return [(int(s), int(k), t) for s, k, t in self._fetch(
            SELECT_UNEMBEDDED, (conversation_id, after, model_id, limit))]

    def append_runtime_recall_vectors(self, conversation_id: str, model_id: str,
                                      rows: Sequence[tuple[int, int, bytes]]) -> None:
        if rows:
            self._execute(INSERT_VECTORS, (
                conversation_id, model_id, [r[0] for r in rows], [r[1] for r in rows],
                [r[2] for r in rows]))

    def runtime_recall_vector_mark(self, conversation_id: str, model_id: str
                                   ) -> tuple[int, int]:
        found = self._read(SELECT_VECTOR_MARK, (conversation_id, model_id))
        return (int(found[0][0]), int(found[0][1])) if found else (0, 0)

    def runtime_recall_vectors(self, conversation_id: str, model_id: str
                               ) -> list[tuple[int, int, bytes]]:
        return [(int(s), int(k), bytes(v)) for s, k, v in self._read(
            SELECT_VECTORS, (conversation_id, model_id))]

    def delete_runtime_recall(self, conversation_id: str, seqs: Sequence[int]) -> int:
        count = 0
        for table in ("runtime_recall", "runtime_recall_terms", "runtime_recall_vectors"):
            count += int(self._fetch(  # names from a fixed list
                f"WITH d AS (DELETE FROM {table} WHERE conversation_id = %s AND seq = ANY(%s) "
                "RETURNING 1) SELECT count(*) FROM d", (conversation_id, list(seqs)))[0][0])
        if seqs:  # the marks are counted again from the vectors left
            self._execute(DELETE_MARKS, (conversation_id,))
            self._execute(COUNT_MARKS, (conversation_id,))
        return count
