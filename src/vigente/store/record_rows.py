"""Row layout shared by both backends' record tables: which instants were given as dates
(``date_flags``) and how a document-version row becomes a :class:`DocumentVersion`.

Each backend only says how it stores an instant (integer microseconds in SQLite, timestamptz in
PostgreSQL) and how it marks an open end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vigente.evidence.records import DerivationRecord, DocumentVersion, parse_relation
from vigente.kernel.values import Scope
from vigente.time import Instant

__all__ = ["KNOWN_AT", "VALID_AT", "derivation_flags", "document_flags", "document_from_row"]

_PUBLISHED, _VALID_FROM, _VALID_TO = 1, 2, 4
VALID_AT, KNOWN_AT = 1, 2


def document_flags(version: DocumentVersion) -> int:
    return (
        (_PUBLISHED if version.published.is_date else 0)
        | (_VALID_FROM if version.valid_from.is_date else 0)
        | (_VALID_TO if version.valid_to is not None and version.valid_to.is_date else 0)
    )


def derivation_flags(record: DerivationRecord) -> int:
    return (VALID_AT if record.valid_at.is_date else 0) | (
        KNOWN_AT if record.known_at.is_date else 0
    )


def document_from_row(
    row: tuple[Any, ...],
    instant: Callable[[Any, bool], Instant],
    is_open: Callable[[Any], bool],
) -> DocumentVersion:
    """A document-version row (columns in the backends' ``_DOC_COLUMNS`` order)."""
    (vid, lineage, scope_key, external_id, reference, title, text, url, published, vf, vt,
     relation, predecessor, flags) = row
    return DocumentVersion(
        version_id=vid,
        lineage_id=lineage,
        scope=Scope.from_key(scope_key),
        external_id=external_id,
        reference=reference,
        title=title,
        text=text,
        source_url=url,
        published=instant(published, bool(flags & _PUBLISHED)),
        valid_from=instant(vf, bool(flags & _VALID_FROM)),
        valid_to=None if is_open(vt) else instant(vt, bool(flags & _VALID_TO)),
        relation=None if relation is None else parse_relation(relation),
        predecessor_id=predecessor,
    )
