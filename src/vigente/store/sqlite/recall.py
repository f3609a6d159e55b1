"""SQLite tables of the recall index over the runtime graph (vigente.runtime.recall).

Mixed into :class:`~vigente.store.sqlite.SQLiteStore`. A read cache like the assembler's: one
row per searchable record (``runtime_recall``, with running counts of records and terms per
conversation, so the statistics as known at ``k`` are one seek), one row per (term, record)
(``runtime_recall_terms``, with the term's running record count: its document frequency as
known at ``k`` is one seek too) and the records' vectors per embedding model. Scoring is done
by the caller, the same on every backend. Purged with the account, pruned with retention.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from vigente.records.runtime import RecallDoc, term_weight
from vigente.store.contracts import RecallIndex

__all__ = ["RECALL_MIGRATIONS", "RECALL_NAME_MIGRATIONS", "SQLiteRecall"]

RECALL_MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE runtime_recall (
            conversation_id TEXT NOT NULL REFERENCES runtime_conversations (conversation_id),
            seq             INTEGER NOT NULL,
            record_id       TEXT NOT NULL,
            kind            TEXT NOT NULL,
            speaker         TEXT NOT NULL,
            participant_id  TEXT,
            known_from      INTEGER NOT NULL,
            length          INTEGER NOT NULL,
            text            TEXT NOT NULL,
            cum_docs        INTEGER NOT NULL,  -- records of the conversation up to this one
            cum_length      INTEGER NOT NULL,  -- their terms
            PRIMARY KEY (conversation_id, seq)
        ) WITHOUT ROWID""",
        "CREATE INDEX runtime_recall_known ON runtime_recall (conversation_id, known_from, seq)",
        """CREATE TABLE runtime_recall_terms (
            conversation_id TEXT NOT NULL,
            term            TEXT NOT NULL,
            seq             INTEGER NOT NULL,
            known_from      INTEGER NOT NULL,
            tf              INTEGER NOT NULL,
            ordinal         INTEGER NOT NULL,  -- records holding the term up to this one
            length          INTEGER NOT NULL,  -- the record's terms
            weight          INTEGER NOT NULL,  -- the term's weight in it, best first
            PRIMARY KEY (conversation_id, term, seq)
        ) WITHOUT ROWID""",
        """CREATE INDEX runtime_recall_terms_known
            ON runtime_recall_terms (conversation_id, term, known_from, ordinal)""",
        """CREATE INDEX runtime_recall_terms_weight
            ON runtime_recall_terms (conversation_id, term, weight DESC, seq)""",
        """CREATE TABLE runtime_recall_vectors (
            conversation_id TEXT NOT NULL,
            model_id        TEXT NOT NULL,
            seq             INTEGER NOT NULL,
            known_from      INTEGER NOT NULL,
            vector          BLOB NOT NULL,
            PRIMARY KEY (conversation_id, model_id, seq)
        ) WITHOUT ROWID""",
    ],
    [  # a conversation's vector count and last seq per model, kept as vectors come and go
        """CREATE TABLE runtime_recall_vector_marks (
            conversation_id TEXT NOT NULL,
            model_id        TEXT NOT NULL,
            vectors         INTEGER NOT NULL,
            last_seq        INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, model_id)
        ) WITHOUT ROWID""",
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
        "ALTER TABLE runtime_recall ADD COLUMN name TEXT",
        """CREATE INDEX runtime_recall_names
            ON runtime_recall (conversation_id, name, known_from) WHERE name IS NOT NULL""",
        "DELETE FROM runtime_recall_terms",
        "DELETE FROM runtime_recall",
        "DELETE FROM runtime_cache_marks WHERE cache = 'recall'",
    ],
]


SELECT_LAST_DOC = """SELECT cum_docs, cum_length FROM runtime_recall
    WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1"""
INSERT_DOC = """INSERT OR IGNORE INTO runtime_recall (conversation_id, seq, record_id, kind,
    speaker, participant_id, known_from, length, text, cum_docs, cum_length, name)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
SELECT_LAST_ORDINAL = """SELECT ordinal FROM runtime_recall_terms
    WHERE conversation_id = ? AND term = ? ORDER BY seq DESC LIMIT 1"""
INSERT_TERM = """INSERT OR IGNORE INTO runtime_recall_terms (conversation_id, term, seq,
    known_from, tf, ordinal, length, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
SELECT_STATS = """SELECT cum_docs, cum_length FROM runtime_recall
    WHERE conversation_id = ? AND known_from <= ? ORDER BY known_from DESC, seq DESC LIMIT 1"""
SELECT_DF = """SELECT ordinal FROM runtime_recall_terms
    WHERE conversation_id = ? AND term = ? AND known_from <= ?
    ORDER BY known_from DESC, ordinal DESC LIMIT 1"""
SELECT_POSTINGS = """SELECT seq, tf, length FROM runtime_recall_terms
    WHERE conversation_id = ? AND term = ? AND +known_from <= ?
    ORDER BY weight DESC, seq LIMIT ?"""
_DOC_COLUMNS = """conversation_id, seq, record_id, kind, speaker, participant_id, known_from,
    text, length, name"""
SELECT_BETWEEN = f"""SELECT {_DOC_COLUMNS} FROM runtime_recall
    WHERE conversation_id = ? AND known_from >= ? AND known_from <= ?
    ORDER BY known_from DESC, seq DESC LIMIT ?"""
SELECT_UNEMBEDDED = """SELECT d.seq, d.known_from, d.text FROM runtime_recall d
    WHERE d.conversation_id = ? AND d.seq > ? AND NOT EXISTS (
        SELECT 1 FROM runtime_recall_vectors v WHERE v.conversation_id = d.conversation_id
        AND v.model_id = ? AND v.seq = d.seq) ORDER BY d.seq LIMIT ?"""
INSERT_VECTOR = """INSERT OR IGNORE INTO runtime_recall_vectors (conversation_id, model_id, seq,
    known_from, vector) VALUES (?, ?, ?, ?, ?)"""
SELECT_VECTOR_MARK = """SELECT vectors, last_seq FROM runtime_recall_vector_marks
    WHERE conversation_id = ? AND model_id = ?"""
ADD_TO_MARK = """INSERT INTO runtime_recall_vector_marks VALUES (?, ?, ?, ?)
    ON CONFLICT (conversation_id, model_id) DO UPDATE SET vectors = vectors + excluded.vectors,
    last_seq = max(last_seq, excluded.last_seq)"""
DELETE_MARKS = "DELETE FROM runtime_recall_vector_marks WHERE conversation_id = ?"
COUNT_MARKS = """INSERT INTO runtime_recall_vector_marks
    SELECT conversation_id, model_id, count(*), max(seq) FROM runtime_recall_vectors
    WHERE conversation_id = ? GROUP BY conversation_id, model_id"""
SELECT_VECTORS = """SELECT seq, known_from, vector FROM runtime_recall_vectors
    WHERE conversation_id = ? AND model_id = ? ORDER BY seq"""

# the speakers' names of a conversation with the first time each was known: a skip scan of
# runtime_recall_names, one seek per name
SELECT_NAMES = """WITH RECURSIVE n (name) AS (
        SELECT min(name) FROM runtime_recall WHERE conversation_id = ? AND name IS NOT NULL
        UNION ALL
        SELECT (SELECT min(r.name) FROM runtime_recall r
                WHERE r.conversation_id = ? AND r.name > n.name)
        FROM n WHERE n.name IS NOT NULL)
    SELECT n.name, (SELECT min(r.known_from) FROM runtime_recall r
                    WHERE r.conversation_id = ? AND r.name = n.name)
    FROM n WHERE n.name IS NOT NULL"""

def _in(n: int) -> str:
    return "(" + ", ".join(["?"] * n) + ")"


def _doc(row: Sequence[Any]) -> RecallDoc:
    conversation, seq, record_id, kind, speaker, participant, known, text, length, name = row
    return RecallDoc(conversation, int(seq), record_id, kind, speaker, participant, int(known),
                     text, {}, int(length), name)


class SQLiteRecall(RecallIndex):
    _conn: sqlite3.Connection
    _lock: threading.RLock

    _set_mark: Callable[[str, str, int], None]  # (SQLiteRuntime)
    _secure: Callable[[], AbstractContextManager[None]]

    def _recall_select(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def append_runtime_recall(self, conversation_id: str, docs: Sequence[RecallDoc],
                              through: int) -> None:
        with self._lock:
            found = self._conn.execute(SELECT_LAST_DOC, (conversation_id,)).fetchone()
            count, total = (int(found[0]), int(found[1])) if found else (0, 0)
            ordinals: dict[str, int] = {}
            for d in docs:
                inserted = self._conn.execute(INSERT_DOC, (
                    conversation_id, d.seq, d.record_id, d.kind, d.speaker, d.participant_id,
                    d.known_micros, d.length, d.text, count + 1, total + d.length, d.name)).rowcount
                if not inserted:  # indexed already
                    continue
                count, total = count + 1, total + d.length
                rows = []
                for term, tf in d.terms.items():
                    if term not in ordinals:
                        last = self._conn.execute(SELECT_LAST_ORDINAL,
                                                  (conversation_id, term)).fetchone()
                        ordinals[term] = int(last[0]) if last else 0
                    ordinals[term] += 1
                    rows.append((conversation_id, term, d.seq, d.known_micros, tf,
                                 ordinals[term], d.length, term_weight(tf, d.length)))
                self._conn.executemany(INSERT_TERM, rows)
            self._set_mark(conversation_id, "recall", through)

    def runtime_recall_stats(self, conversation_ids: Sequence[str], known_micros: int
                             ) -> tuple[int, int]:
        docs = length = 0
        for cid in conversation_ids:
            rows = self._recall_select(SELECT_STATS, (cid, known_micros))
            if rows:
                docs, length = docs + int(rows[0][0]), length + int(rows[0][1])
        return docs, length

    def runtime_recall_term_counts(self, conversation_ids: Sequence[str], terms: Sequence[str],
                                   known_micros: int) -> dict[str, int]:
        out = dict.fromkeys(terms, 0)
        for cid in conversation_ids:
            for term in terms:
                rows = self._recall_select(SELECT_DF, (cid, term, known_micros))
                if rows:
                    out[term] += int(rows[0][0])
        return out

    def runtime_recall_postings(self, conversation_ids: Sequence[str], terms: Sequence[str],
                                known_micros: int, limit: int
                                ) -> list[tuple[str, int, str, int, int]]:
        out: list[tuple[str, int, str, int, int]] = []
        for cid in conversation_ids:
            for term in terms:
                out += [(cid, int(seq), term, int(tf), int(length)) for seq, tf, length in
                        self._recall_select(SELECT_POSTINGS, (cid, term, known_micros, limit))]
        return out

    def runtime_recall_names(self, conversation_ids: Sequence[str], known_micros: int
                             ) -> list[str]:
        names: set[str] = set()
        for cid in conversation_ids:
            found = self._recall_select(SELECT_NAMES, (cid, cid, cid))
            names |= {str(name) for name, first in found if int(first) <= known_micros}
        return sorted(names)

    def runtime_recall_docs(self, keys: Sequence[tuple[str, int]]) -> list[RecallDoc]:
        by_conversation: dict[str, list[int]] = {}
        for cid, seq in keys:
            by_conversation.setdefault(cid, []).append(seq)
        out: list[RecallDoc] = []
        for cid, seqs in by_conversation.items():
            for start in range(0, len(seqs), 400):
                chunk = seqs[start:start + 400]
                out += [_doc(r) for r in self._recall_select(
                    f"SELECT {_DOC_COLUMNS} FROM runtime_recall WHERE conversation_id = ? "
                    f"AND seq IN {_in(len(chunk))}", [cid, *chunk])]
        return out

    def runtime_recall_between(self, conversation_ids: Sequence[str], start_micros: int,
                               end_micros: int, limit: int) -> list[RecallDoc]:
        out: list[RecallDoc] = []
        for cid in conversation_ids:
            out += [_doc(r) for r in self._recall_select(
                SELECT_BETWEEN, (cid, start_micros, end_micros, limit))]
        out.sort(key=lambda d: (-d.known_micros, d.conversation_id, -d.seq))
        return out[:limit]

    def runtime_recall_unembedded(self, conversation_id: str, model_id: str, after: int,
                                  limit: int) -> list[tuple[int, int, str]]:
        return [(int(s), int(k), t) for s, k, t in self._recall_select(
            SELECT_UNEMBEDDED, (conversation_id, after, model_id, limit))]

    def append_runtime_recall_vectors(self, conversation_id: str, model_id: str,
                                      rows: Sequence[tuple[int, int, bytes]]) -> None:
        if not rows:
            return
        with self._lock:
            before = self._conn.total_changes
            self._conn.executemany(INSERT_VECTOR, [(conversation_id, model_id, seq, known, v)
                                                   for seq, known, v in rows])
            added = self._conn.total_changes - before
            if added:
                self._conn.execute(ADD_TO_MARK, (conversation_id, model_id, added,
                                                 max(seq for seq, _, _ in rows)))

    def runtime_recall_vector_mark(self, conversation_id: str, model_id: str
                                   ) -> tuple[int, int]:
        found = self._recall_select(SELECT_VECTOR_MARK, (conversation_id, model_id))
        return (int(found[0][0]), int(found[0][1])) if found else (0, 0)

    def runtime_recall_vectors(self, conversation_id: str, model_id: str
                               ) -> list[tuple[int, int, bytes]]:
        return [(int(s), int(k), bytes(v)) for s, k, v in self._recall_select(
            SELECT_VECTORS, (conversation_id, model_id))]

    def delete_runtime_recall(self, conversation_id: str, seqs: Sequence[int]) -> int:
        count = 0
        with self._lock, self._secure():
            for start in range(0, len(seqs), 400):
                chunk = list(seqs[start:start + 400])
                for table in ("runtime_recall", "runtime_recall_terms",
                              "runtime_recall_vectors"):  # names from a fixed list
                    count += self._conn.execute(
                        f"DELETE FROM {table} WHERE conversation_id = ? "
                        f"AND seq IN {_in(len(chunk))}", [conversation_id, *chunk]).rowcount
            if seqs:  # the marks are counted again from the vectors left
                self._conn.execute(DELETE_MARKS, (conversation_id,))
                self._conn.execute(COUNT_MARKS, (conversation_id,))
        return count
