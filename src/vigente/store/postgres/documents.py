"""PostgreSQL tables of the domains above the kernel: recorded decisions, document versions,
derivations and the review queue. Mixed into :class:`~vigente.store.postgres.PostgresStore`;
the same rows and orders as ``sqlite_records.py``.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from typing import Any

from psycopg.types.json import Jsonb

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

__all__ = ["RECORD_MIGRATIONS", "PostgresDocuments"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_MICROSECOND = _dt.timedelta(microseconds=1)

RECORD_MIGRATIONS: list[list[str]] = [
    # 2: decisions, document versions, derivations, review queue
    [
        """CREATE TABLE decisions (
            seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            decision_id text COLLATE "C" NOT NULL UNIQUE,
            kind        text NOT NULL,
            subject     text NOT NULL,
            recorded_at timestamptz NOT NULL,
            payload     jsonb NOT NULL
        )""",
        "CREATE INDEX decisions_recent ON decisions (recorded_at, seq)",
        """CREATE TABLE document_versions (
            seq            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            version_id     text COLLATE "C" NOT NULL UNIQUE,
            lineage_id     text COLLATE "C" NOT NULL,
            scope_key      text COLLATE "C" NOT NULL,
            external_id    text,
            reference      text,
            title          text,
            text           text NOT NULL,
            source_url     text,
            published      timestamptz NOT NULL,
            valid          tstzrange NOT NULL CHECK (NOT isempty(valid)),
            relation       text CHECK (relation IN
                ('supersedes', 'amends', 'supplements', 'revokes', 'corrects')),
            predecessor_id text COLLATE "C" REFERENCES document_versions (version_id),
            date_flags     smallint NOT NULL
        )""",
        "CREATE INDEX document_versions_lineage ON document_versions (lineage_id, scope_key, seq)",
        "CREATE INDEX document_versions_predecessor ON document_versions (predecessor_id)",
        """CREATE TABLE derivations (
            seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            derived_id text COLLATE "C" NOT NULL UNIQUE,
            kind       text NOT NULL,
            label      text NOT NULL,
            valid_at   timestamptz NOT NULL,
            known_at   timestamptz NOT NULL,
            created_at timestamptz NOT NULL,
            content    text,
            date_flags smallint NOT NULL
        )""",
        """CREATE TABLE derivation_sources (
            derived_id  text COLLATE "C" NOT NULL REFERENCES derivations (derived_id),
            position    integer NOT NULL,
            source_kind text NOT NULL,
            source_id   text COLLATE "C" NOT NULL,
            PRIMARY KEY (derived_id, position)
        )""",
        "CREATE INDEX derivation_sources_source ON derivation_sources (source_kind, source_id)",
        """CREATE TABLE proposals (
            seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            proposal_id text COLLATE "C" NOT NULL UNIQUE,
            filename    text,
            text        text NOT NULL,
            proposed    jsonb NOT NULL,
            created_at  timestamptz NOT NULL
        )""",
        """CREATE TABLE review_events (
            event_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            proposal_id text COLLATE "C" NOT NULL REFERENCES proposals (proposal_id),
            action      text NOT NULL,
            fields      jsonb NOT NULL,
            note        text,
            at          timestamptz NOT NULL,
            version_id  text
        )""",
        "CREATE INDEX review_events_proposal ON review_events (proposal_id, event_id)",
    ],
]

INSERT_DECISION = """INSERT INTO decisions (decision_id, kind, subject, recorded_at, payload)
    VALUES (%s, %s, %s, %s, %s)"""
SELECT_DECISION = """SELECT decision_id, kind, subject, recorded_at, payload FROM decisions
    WHERE decision_id = %s"""
SELECT_DECISIONS = """SELECT decision_id, kind, subject, recorded_at, payload FROM decisions
    ORDER BY recorded_at DESC, seq DESC LIMIT %s"""
_DOC_COLUMNS = """version_id, lineage_id, scope_key, external_id, reference, title, text,
    source_url, published, lower(valid), upper(valid), relation, predecessor_id, date_flags,
    learned"""
INSERT_DOCUMENT = """INSERT INTO document_versions (version_id, lineage_id, scope_key,
    external_id, reference, title, text, source_url, published, valid, relation,
    predecessor_id, date_flags, learned) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s,
    tstzrange(%s::timestamptz, %s::timestamptz, '[)'), %s, %s, %s, %s)"""
SELECT_DOCUMENTS_BY_ID = f"""SELECT {_DOC_COLUMNS} FROM document_versions
    WHERE version_id = ANY(%s) ORDER BY seq"""
SELECT_DOCUMENTS = f"""SELECT {_DOC_COLUMNS} FROM document_versions
    WHERE lineage_id = %s ORDER BY seq"""
SELECT_DOCUMENTS_SCOPED = f"""SELECT {_DOC_COLUMNS} FROM document_versions
    WHERE lineage_id = %s AND scope_key = %s ORDER BY seq"""
SELECT_SUCCESSORS = f"""SELECT {_DOC_COLUMNS} FROM document_versions
    WHERE predecessor_id = ANY(%s) ORDER BY seq"""
INSERT_DERIVATION = """INSERT INTO derivations (derived_id, kind, label, valid_at, known_at,
    created_at, content, date_flags) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"""
INSERT_DERIVATION_SOURCE = """INSERT INTO derivation_sources (derived_id, position, source_kind,
    source_id) VALUES (%s, %s, %s, %s)"""
_DERIVATION_COLUMNS = """derived_id, kind, label, valid_at, known_at, created_at, content,
    date_flags"""
SELECT_DERIVATIONS = f"SELECT {_DERIVATION_COLUMNS} FROM derivations ORDER BY seq"
SELECT_DERIVATIONS_BY_ID = f"""SELECT {_DERIVATION_COLUMNS} FROM derivations
    WHERE derived_id = ANY(%s) ORDER BY seq"""
SELECT_DERIVATION_SOURCES = """SELECT derived_id, source_kind, source_id FROM derivation_sources
    WHERE derived_id = ANY(%s) ORDER BY derived_id, position"""
INSERT_PROPOSAL = """INSERT INTO proposals (proposal_id, filename, text, proposed, created_at)
    VALUES (%s, %s, %s, %s, %s)"""
SELECT_PROPOSALS = """SELECT proposal_id, filename, text, proposed, created_at FROM proposals
    ORDER BY seq"""
INSERT_REVIEW_EVENT = """INSERT INTO review_events (proposal_id, action, fields, note, at,
    version_id) VALUES (%s, %s, %s, %s, %s, %s)"""
SELECT_REVIEW_EVENTS = """SELECT proposal_id, action, fields, note, at, version_id
    FROM review_events ORDER BY event_id"""
SELECT_REVIEW_EVENTS_OF = """SELECT proposal_id, action, fields, note, at, version_id
    FROM review_events WHERE proposal_id = %s ORDER BY event_id"""


def _ts(instant: Instant | None) -> _dt.datetime | None:
    return None if instant is None else _EPOCH + _dt.timedelta(microseconds=instant.micros)


def _instant(value: _dt.datetime, is_date: bool = False) -> Instant:
    return Instant((value - _EPOCH) // _MICROSECOND, is_date)


def _document(row: tuple[Any, ...]) -> DocumentVersion:
    return document_from_row(row, _instant, lambda vt: vt is None)


def _decision(row: tuple[Any, ...]) -> Decision:
    decision_id, kind, subject, recorded_at, payload = row
    return Decision(decision_id, kind, subject, _instant(recorded_at), payload)


class PostgresDocuments(DecisionLog, DocumentLog, ReviewLog):
    """The decision, document, derivation and review tables of the PostgreSQL backend."""

    # Statement helpers of PostgresStore (one connection per transaction, pooled).
    _fetch: Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
    _execute: Callable[[str, Sequence[Any]], None]
    _execute_many: Callable[[str, Sequence[Sequence[Any]]], None]

    # -- decisions -------------------------------------------------------------------------
    def append_decision(self, decision: Decision) -> None:
        self._execute(INSERT_DECISION, (decision.decision_id, decision.kind, decision.subject,
                                        _ts(decision.recorded_at), Jsonb(decision.payload)))

    def decision(self, decision_id: str) -> Decision | None:
        rows = self._fetch(SELECT_DECISION, (decision_id,))
        return _decision(rows[0]) if rows else None

    def decisions(self, limit: int) -> list[Decision]:
        return [_decision(row) for row in self._fetch(SELECT_DECISIONS, (limit,))]

    # -- document versions -----------------------------------------------------------------
    def append_document_version(self, version: DocumentVersion) -> None:
        flags = document_flags(version)
        self._execute(INSERT_DOCUMENT, (
            version.version_id, version.lineage_id, version.scope.key, version.external_id,
            version.reference, version.title, version.text, version.source_url,
            _ts(version.published), _ts(version.valid_from), _ts(version.valid_to),
            None if version.relation is None else version.relation.value,
            version.predecessor_id, flags,
            None if version.learned is None else version.learned.micros,
        ))

    def document_versions_by_id(self, version_ids: Sequence[str]) -> list[DocumentVersion]:
        if not version_ids:
            return []
        return [_document(r) for r in self._fetch(SELECT_DOCUMENTS_BY_ID, (list(version_ids),))]

    def document_versions(self, lineage_id: str, scope: Scope | None) -> list[DocumentVersion]:
        if scope is None:
            rows = self._fetch(SELECT_DOCUMENTS, (lineage_id,))
        else:
            rows = self._fetch(SELECT_DOCUMENTS_SCOPED, (lineage_id, scope.key))
        return [_document(r) for r in rows]

    def document_successors(self, version_ids: Sequence[str]) -> list[DocumentVersion]:
        if not version_ids:
            return []
        return [_document(r) for r in self._fetch(SELECT_SUCCESSORS, (list(version_ids),))]

    # -- derivations -----------------------------------------------------------------------
    def append_derivation(self, record: DerivationRecord) -> None:
        flags = derivation_flags(record)
        self._execute(INSERT_DERIVATION, (
            record.derived_id, record.kind, record.label, _ts(record.valid_at),
            _ts(record.known_at), _ts(record.created_at), record.content, flags,
        ))
        self._execute_many(INSERT_DERIVATION_SOURCE, [
            (record.derived_id, i, s.kind, s.id) for i, s in enumerate(record.sources)
        ])

    def derivations(self) -> list[DerivationRecord]:
        return self._derivations(self._fetch(SELECT_DERIVATIONS, ()))

    def derivations_by_id(self, derived_ids: Sequence[str]) -> list[DerivationRecord]:
        if not derived_ids:
            return []
        return self._derivations(self._fetch(SELECT_DERIVATIONS_BY_ID, (list(derived_ids),)))

    def _derivations(self, rows: list[tuple[Any, ...]]) -> list[DerivationRecord]:
        if not rows:
            return []
        sources: dict[str, list[SourceRef]] = {}
        for derived_id, kind, source_id in self._fetch(SELECT_DERIVATION_SOURCES,
                                                       ([r[0] for r in rows],)):
            sources.setdefault(derived_id, []).append(SourceRef(kind, source_id))
        return [
            DerivationRecord(
                derived_id=did, kind=kind, label=label,
                sources=tuple(sources.get(did, [])),
                valid_at=_instant(valid_at, bool(flags & VALID_AT)),
                known_at=_instant(known_at, bool(flags & KNOWN_AT)),
                created_at=_instant(created_at), content=content,
            )
            for did, kind, label, valid_at, known_at, created_at, content, flags in rows
        ]

    # -- review queue ----------------------------------------------------------------------
    def append_proposal(self, proposal: ProposalRecord) -> None:
        self._execute(INSERT_PROPOSAL, (proposal.proposal_id, proposal.filename, proposal.text,
                                        Jsonb(proposal.proposed), _ts(proposal.created_at)))

    def proposals(self) -> list[ProposalRecord]:
        return [
            ProposalRecord(pid, filename, text, proposed, _instant(created))
            for pid, filename, text, proposed, created in self._fetch(SELECT_PROPOSALS, ())
        ]

    def append_review_event(self, event: ReviewEvent) -> None:
        self._execute(INSERT_REVIEW_EVENT, (event.proposal_id, event.action,
                                            Jsonb(event.fields), event.note, _ts(event.at),
                                            event.version_id))

    def review_events(self, proposal_id: str | None) -> list[ReviewEvent]:
        if proposal_id is None:
            rows = self._fetch(SELECT_REVIEW_EVENTS, ())
        else:
            rows = self._fetch(SELECT_REVIEW_EVENTS_OF, (proposal_id,))
        return [
            ReviewEvent(pid, action, fields, note, _instant(at), version_id)
            for pid, action, fields, note, at, version_id in rows
        ]

