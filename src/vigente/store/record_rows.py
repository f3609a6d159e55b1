"""Row layout shared by both backends' record tables: which instants were given as dates
(``date_flags``) and how a document-version row becomes a :class:`DocumentVersion`.

Each backend only says how it stores an instant (integer microseconds in SQLite, timestamptz in
PostgreSQL) and how it marks an open end.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vigente.records.documents import DerivationRecord, DocumentVersion, parse_relation
from vigente.records.values import Scope
from vigente.time import Instant

if TYPE_CHECKING:
    from vigente.records.runtime import RuntimeRecord

__all__ = [
    "DECODED",
    "KNOWN_AT",
    "VALID_AT",
    "DecodedRows",
    "derivation_flags",
    "document_flags",
    "document_from_row",
]

_PUBLISHED, _VALID_FROM, _VALID_TO, _LEARNED = 1, 2, 4, 8
VALID_AT, KNOWN_AT = 1, 2


def document_flags(version: DocumentVersion) -> int:
    return (
        (_PUBLISHED if version.published.is_date else 0)
        | (_VALID_FROM if version.valid_from.is_date else 0)
        | (_VALID_TO if version.valid_to is not None and version.valid_to.is_date else 0)
        | (_LEARNED if version.learned is not None and version.learned.is_date else 0)
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
     relation, predecessor, flags, learned) = row
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
        learned=None if learned is None else Instant(learned, bool(flags & _LEARNED)),
    )


class DecodedRows:
    """Runtime rows already turned into :class:`RuntimeRecord` values (parsing a row's JSON
    payload is most of the cost of reading it, and an assembly reads the same newest rows
    at every round of its read horizon and at every model call).

    A row is found by its ``seq`` and used only when the row the database just returned is
    equal to the one decoded, column for column, so a hit is the decoding of that very row:
    nothing is served that the database did not return. The oldest rows are forgotten past
    ``max_chars`` payload characters; a purge forgets them all. Records are shared between
    reads: callers never change a record's payload.

    A purge in another process (another server worker, a CLI on the same database) reaches
    this one through the store's purge epoch, a counter every deletion of records raises in
    the deleting transaction: a backend reads it before it decodes rows and hands it to
    :meth:`note_purges`, and a store seen at an older epoch makes this process forget every
    row, typed node and text kept by node, so no process keeps a purged account's text."""

    def __init__(self, max_chars: int = 4_000_000) -> None:
        self._rows: dict[Any, tuple[tuple[Any, ...], RuntimeRecord, int]] = {}
        self._chars = 0
        self._max_chars = max_chars
        self._lock = threading.Lock()
        self._epochs: dict[str, int] = {}  # the purge epoch last seen, by store

    def decode(
        self, row: tuple[Any, ...], make: Callable[[tuple[Any, ...]], RuntimeRecord]
    ) -> RuntimeRecord:
        """The record of ``row`` (a backend's row, ``seq`` first and the payload last)."""
        found = self._rows.get(row[0])
        if found is not None and found[0] == row:
            return found[1]
        record = make(row)
        size = len(row[-1]) if isinstance(row[-1], str | bytes) else 0
        with self._lock:
            old = self._rows.pop(row[0], None)
            if old is not None:
                self._chars -= old[2]
            self._rows[row[0]] = (row, record, size)
            self._chars += size
            while self._chars > self._max_chars and self._rows:
                oldest = next(iter(self._rows))
                self._chars -= self._rows.pop(oldest)[2]
        return record

    def note_purges(self, store: str, epoch: int) -> None:
        """The purge epoch of ``store`` (its URL) is ``epoch``: when it moved since this
        process last read it, a purge ran elsewhere, and everything is forgotten."""
        with self._lock:
            seen = self._epochs.get(store)
            self._epochs[store] = epoch
        if seen is not None and seen != epoch:
            self.forget()

    def forget(self) -> None:
        """Forget every row, and the typed nodes made of them (on a purge or a deletion of
        records)."""
        from vigente.records.runtime import forget_typed

        with self._lock:
            self._rows.clear()
            self._chars = 0
        forget_typed()


#: The rows decoded in this process, shared by the backends (a hit needs the very row).
DECODED = DecodedRows()
