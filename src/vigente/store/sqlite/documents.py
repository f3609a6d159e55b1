"""SQLite tables of the domains above the kernel: recorded decisions, document versions,
derivations and the review queue. Mixed into :class:`~vigente.store.sqlite.SQLiteStore`.

Every table is append-only; a proposal's state is the last of its review events.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

from vigente.records.decisions import Decision
from vigente.records.documents import (
    DerivationRecord,
    DocumentVersion,
    ProposalRecord,
    ReviewEvent,
    SourceRef,
)
from vigente.records.values import Scope
from vigente.store.contracts import DecisionLog, DocumentLog, ReviewLog
from vigente.store.record_rows import (
    KNOWN_AT,
    VALID_AT,
    derivation_flags,
    document_flags,
    document_from_row,
)
from vigente.time import Instant

__all__ = ["RECORD_MIGRATIONS", "SQLiteDocuments"]

OPEN_END = 1 << 62
_DATE = 1  # flag bit: the instant was given as a date

RECORD_MIGRATIONS: list[list[str]] = [
    # 2: decisions, document versions, derivations, review queue
    [
        """CREATE TABLE decisions (
            decision_id TEXT PRIMARY KEY,
            kind        TEXT NOT NULL,
            subject     TEXT NOT NULL,
            recorded_at INTEGER NOT NULL,
            payload     TEXT NOT NULL
        )""",
        "CREATE INDEX decisions_recent ON decisions (recorded_at)",
        """CREATE TABLE document_versions (
            version_id     TEXT PRIMARY KEY,
            lineage_id     TEXT NOT NULL,
            scope_key      TEXT NOT NULL,
            external_id    TEXT,
            reference      TEXT,
            title          TEXT,
            text           TEXT NOT NULL,
            source_url     TEXT,
            published      INTEGER NOT NULL,
            valid_from     INTEGER NOT NULL,
            valid_to       INTEGER NOT NULL,
            relation       TEXT CHECK (relation IN
                ('supersedes', 'amends', 'supplements', 'revokes', 'corrects')),
            predecessor_id TEXT REFERENCES document_versions (version_id),
            date_flags     INTEGER NOT NULL
        )""",
        "CREATE INDEX document_versions_lineage ON document_versions (lineage_id, scope_key)",
        "CREATE INDEX document_versions_predecessor ON document_versions (predecessor_id)",
        """CREATE TABLE derivations (
            derived_id TEXT PRIMARY KEY,
            kind       TEXT NOT NULL,
            label      TEXT NOT NULL,
            valid_at   INTEGER NOT NULL,
            known_at   INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            content    TEXT,
            date_flags INTEGER NOT NULL
        )""",
        """CREATE TABLE derivation_sources (
            derived_id  TEXT NOT NULL REFERENCES derivations (derived_id),
            position    INTEGER NOT NULL,
            source_kind TEXT NOT NULL,
            source_id   TEXT NOT NULL,
            PRIMARY KEY (derived_id, position)
        )""",
        "CREATE INDEX derivation_sources_source ON derivation_sources (source_kind, source_id)",
        """CREATE TABLE proposals (
            proposal_id TEXT PRIMARY KEY,
            filename    TEXT,
            text        TEXT NOT NULL,
            proposed    TEXT NOT NULL,
            created_at  INTEGER NOT NULL
        )""",
        """CREATE TABLE review_events (
            event_id    INTEGER PRIMARY KEY AUTOINCREMENT,
            proposal_id TEXT NOT NULL REFERENCES proposals (proposal_id),
            action      TEXT NOT NULL,
            fields      TEXT NOT NULL,
            note        TEXT,
            at          INTEGER NOT NULL,
            version_id  TEXT
        )""",
        "CREATE INDEX review_events_proposal ON review_events (proposal_id, event_id)",
    ],
]

INSERT_DECISION = """INSERT INTO decisions (decision_id, kind, subject, recorded_at, payload)
    VALUES (?, ?, ?, ?, ?)"""
SELECT_DECISION = """SELECT decision_id, kind, subject, recorded_at, payload FROM decisions
    WHERE decision_id = ?"""
SELECT_DECISIONS = """SELECT decision_id, kind, subject, recorded_at, payload FROM decisions
    ORDER BY recorded_at DESC, rowid DESC LIMIT ?"""
_DOC_COLUMNS = """version_id, lineage_id, scope_key, external_id, reference, title, text,
    source_url, published, valid_from, valid_to, relation, predecessor_id, date_flags, learned"""
INSERT_DOCUMENT = f"INSERT INTO document_versions ({_DOC_COLUMNS}) VALUES ({', '.join('?' * 15)})"
SELECT_DOCUMENTS = f"SELECT {_DOC_COLUMNS} FROM document_versions"
INSERT_DERIVATION = """INSERT INTO derivations (derived_id, kind, label, valid_at, known_at,
    created_at, content, date_flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_DERIVATION_SOURCE = """INSERT INTO derivation_sources (derived_id, position, source_kind,
    source_id) VALUES (?, ?, ?, ?)"""
SELECT_DERIVATIONS = """SELECT derived_id, kind, label, valid_at, known_at, created_at, content,
    date_flags FROM derivations"""
SELECT_DERIVATION_SOURCES = """SELECT derived_id, source_kind, source_id FROM derivation_sources
    ORDER BY derived_id, position"""
INSERT_PROPOSAL = """INSERT INTO proposals (proposal_id, filename, text, proposed, created_at)
    VALUES (?, ?, ?, ?, ?)"""
SELECT_PROPOSALS = """SELECT proposal_id, filename, text, proposed, created_at FROM proposals
    ORDER BY rowid"""
INSERT_REVIEW_EVENT = """INSERT INTO review_events (proposal_id, action, fields, note, at,
    version_id) VALUES (?, ?, ?, ?, ?, ?)"""
SELECT_REVIEW_EVENTS = """SELECT proposal_id, action, fields, note, at, version_id
    FROM review_events"""


def _in(n: int) -> str:
    """``(?, ?, …)`` for an IN list of ``n`` bound values."""
    return "(" + ", ".join("?" * n) + ")"


def _document(row: tuple[Any, ...]) -> DocumentVersion:
    return document_from_row(row, Instant, lambda vt: vt >= OPEN_END)


class SQLiteDocuments(DecisionLog, DocumentLog, ReviewLog):
    """The decision, document, derivation and review tables of the SQLite backend."""

    _conn: sqlite3.Connection
    _lock: threading.RLock

    def _select(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _select_in(self, sql: str, column: str, ids: Sequence[str], order: str = "rowid"
                   ) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        ids = list(dict.fromkeys(ids))
        for start in range(0, len(ids), 500):  # stay below SQLite's bound-variable limit
            chunk = ids[start:start + 500]
            rows += self._select(f"{sql} WHERE {column} IN {_in(len(chunk))} ORDER BY {order}",
                                 chunk)
        return rows

    # -- decisions -------------------------------------------------------------------------
    def append_decision(self, decision: Decision) -> None:
        with self._lock:
            self._conn.execute(INSERT_DECISION, (decision.decision_id, decision.kind,
                                                 decision.subject, decision.recorded_at.micros,
                                                 decision.payload_json))

    def decision(self, decision_id: str) -> Decision | None:
        rows = self._select(SELECT_DECISION, (decision_id,))
        return _decision(rows[0]) if rows else None

    def decisions(self, limit: int) -> list[Decision]:
        return [_decision(row) for row in self._select(SELECT_DECISIONS, (limit,))]

    # -- document versions -----------------------------------------------------------------
    def append_document_version(self, version: DocumentVersion) -> None:
        flags = document_flags(version)
        with self._lock:
            self._conn.execute(INSERT_DOCUMENT, (
                version.version_id, version.lineage_id, version.scope.key, version.external_id,
                version.reference, version.title, version.text, version.source_url,
                version.published.micros, version.valid_from.micros,
                OPEN_END if version.valid_to is None else version.valid_to.micros,
                None if version.relation is None else version.relation.value,
                version.predecessor_id, flags,
                None if version.learned is None else version.learned.micros,
            ))

    def document_versions_by_id(self, version_ids: Sequence[str]) -> list[DocumentVersion]:
        return [_document(r) for r in self._select_in(SELECT_DOCUMENTS, "version_id",
                                                      version_ids)]

    def document_versions(self, lineage_id: str, scope: Scope | None) -> list[DocumentVersion]:
        if scope is None:
            rows = self._select(f"{SELECT_DOCUMENTS} WHERE lineage_id = ? ORDER BY rowid",
                                (lineage_id,))
        else:
            rows = self._select(
                f"{SELECT_DOCUMENTS} WHERE lineage_id = ? AND scope_key = ? ORDER BY rowid",
                (lineage_id, scope.key),
            )
        return [_document(r) for r in rows]

    def document_successors(self, version_ids: Sequence[str]) -> list[DocumentVersion]:
        return [_document(r) for r in self._select_in(SELECT_DOCUMENTS, "predecessor_id",
                                                      version_ids)]

    # -- derivations -----------------------------------------------------------------------
    def append_derivation(self, record: DerivationRecord) -> None:
        flags = derivation_flags(record)
        with self._lock:
            self._conn.execute(INSERT_DERIVATION, (
                record.derived_id, record.kind, record.label, record.valid_at.micros,
                record.known_at.micros, record.created_at.micros, record.content, flags,
            ))
            self._conn.executemany(INSERT_DERIVATION_SOURCE, [
                (record.derived_id, i, s.kind, s.id) for i, s in enumerate(record.sources)
            ])

    def derivations(self) -> list[DerivationRecord]:
        return self._derivations(self._select(f"{SELECT_DERIVATIONS} ORDER BY rowid"))

    def derivations_by_id(self, derived_ids: Sequence[str]) -> list[DerivationRecord]:
        return self._derivations(self._select_in(SELECT_DERIVATIONS, "derived_id", derived_ids))

    def _derivations(self, rows: list[tuple[Any, ...]]) -> list[DerivationRecord]:
        if not rows:
            return []
        sources: dict[str, list[SourceRef]] = {}
        for derived_id, kind, source_id in self._select_in(
            "SELECT derived_id, source_kind, source_id FROM derivation_sources", "derived_id",
            [r[0] for r in rows], order="derived_id, position",
        ):
            sources.setdefault(derived_id, []).append(SourceRef(kind, source_id))
        return [
            DerivationRecord(
                derived_id=did, kind=kind, label=label,
                sources=tuple(sources.get(did, [])),
                valid_at=Instant(valid_at, bool(flags & VALID_AT)),
                known_at=Instant(known_at, bool(flags & KNOWN_AT)),
                created_at=Instant(created_at), content=content,
            )
            for did, kind, label, valid_at, known_at, created_at, content, flags in rows
        ]

    # -- review queue ----------------------------------------------------------------------
    def append_proposal(self, proposal: ProposalRecord) -> None:
        with self._lock:
            self._conn.execute(INSERT_PROPOSAL, (
                proposal.proposal_id, proposal.filename, proposal.text,
                json.dumps(proposal.proposed, ensure_ascii=False, sort_keys=True),
                proposal.created_at.micros,
            ))

    def proposals(self) -> list[ProposalRecord]:
        return [
            ProposalRecord(pid, filename, text, json.loads(proposed), Instant(created))
            for pid, filename, text, proposed, created in self._select(SELECT_PROPOSALS)
        ]

    def append_review_event(self, event: ReviewEvent) -> None:
        with self._lock:
            self._conn.execute(INSERT_REVIEW_EVENT, (
                event.proposal_id, event.action,
                json.dumps(event.fields, ensure_ascii=False, sort_keys=True), event.note,
                event.at.micros, event.version_id,
            ))

    def review_events(self, proposal_id: str | None) -> list[ReviewEvent]:
        if proposal_id is None:
            rows = self._select(f"{SELECT_REVIEW_EVENTS} ORDER BY event_id")
        else:
            rows = self._select(f"{SELECT_REVIEW_EVENTS} WHERE proposal_id = ? ORDER BY event_id",
                                (proposal_id,))
        return [
            ReviewEvent(pid, action, json.loads(fields), note, Instant(at), version_id)
            for pid, action, fields, note, at, version_id in rows
        ]


def _decision(row: tuple[Any, ...]) -> Decision:
    decision_id, kind, subject, recorded_at, payload = row
    return Decision(decision_id, kind, subject, Instant(recorded_at), json.loads(payload))
