"""Derived copies (chunks, summaries, cached answers, memories) and their invalidation.

A derivation records the versions it came from and the ``(t, k)`` it was computed at. It is
*stale* when something it depends on changed after it was computed: a document version it used
was superseded, amended, revoked or corrected by a version published after its ``k``; a kernel
snapshot it used was closed after its ``k``; or another derived item it used is stale
(transitively: a summary of chunks of a version). Staleness is computed, never stored, so it
cannot drift from the history it is computed from.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vigente.errors import InvalidInput
from vigente.records.documents import DerivationRecord, SourceRef
from vigente.records.values import check_name
from vigente.time import Instant, TimeLike

if TYPE_CHECKING:
    from vigente.kernel.knowledge import Knowledge

__all__ = ["Derivations", "StaleItem"]

_PAST = {"supersedes": "superseded", "amends": "amended", "revokes": "revoked",
         "corrects": "corrected", "supplements": "supplemented"}


@dataclass(frozen=True, slots=True)
class StaleItem:
    """A derived item that must be regenerated or dropped, and why."""

    derivation: DerivationRecord
    reasons: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {**self.derivation.as_dict(), "stale": True, "reasons": list(self.reasons)}


def _source(item: SourceRef | tuple[str, str] | str) -> SourceRef:
    if isinstance(item, SourceRef):
        return item
    if isinstance(item, tuple):
        return SourceRef(item[0], item[1])
    kind, sep, ident = item.partition(":")
    if sep and kind in SourceRef.KINDS:
        return SourceRef(kind, ident)
    # A bare id: document version ids start with "dv-", derived ids with "drv-".
    if item.startswith("drv-"):
        return SourceRef("derived", item)
    if item.startswith("dv-"):
        return SourceRef("document", item)
    return SourceRef("snapshot", item)


class Derivations:
    """Record derived items and find the stale ones."""

    def __init__(self, knowledge: Knowledge) -> None:
        self._knowledge = knowledge
        self._store = knowledge.store

    def record(
        self,
        kind: str,
        label: str,
        *,
        sources: Iterable[SourceRef | tuple[str, str] | str],
        valid_at: TimeLike,
        known_at: TimeLike,
        content: str | None = None,
    ) -> DerivationRecord:
        """Record a derived item; every source must exist (a dangling source is an error)."""
        refs = tuple(dict.fromkeys(_source(s) for s in sources))
        if not refs:
            raise InvalidInput("a derived item needs at least one source version")
        self._check_sources(refs)
        record = DerivationRecord(
            derived_id="drv-" + uuid.uuid4().hex[:20],
            kind=check_name("kind", kind, limit=64),
            label=check_name("label", label, limit=2048),
            sources=refs,
            valid_at=self._knowledge.instant(valid_at),
            known_at=self._knowledge.instant(known_at),
            created_at=Instant.from_datetime(dt.datetime.now(dt.UTC)),
            content=content,
        )
        with self._store.transaction():
            self._store.append_derivation(record)
        return record

    def _check_sources(self, refs: tuple[SourceRef, ...]) -> None:
        wanted = {kind: [r.id for r in refs if r.kind == kind] for kind in SourceRef.KINDS}
        found = {v.version_id for v in self._store.document_versions_by_id(wanted["document"])}
        found |= {v.version_id for v in self._store.versions_by_id(wanted["snapshot"])}
        found |= {d.derived_id for d in self._store.derivations_by_id(wanted["derived"])}
        missing = [r for r in refs if r.id not in found]
        if missing:
            raise InvalidInput(
                f"unknown source {missing[0].kind}:{missing[0].id}: record derived items from "
                "versions that exist (document version ids dv-…, snapshot ids, derived drv-…)"
            )

    def all(self) -> list[DerivationRecord]:
        return self._store.derivations()

    def stale(self) -> list[StaleItem]:
        """Every derived item made stale by a later change, with the reason chain."""
        records = self._store.derivations()
        doc_ids = sorted({s.id for r in records for s in r.sources if s.kind == "document"})
        snap_ids = sorted({s.id for r in records for s in r.sources if s.kind == "snapshot"})
        successors: dict[str, list[Any]] = {}
        for v in self._store.document_successors(doc_ids):
            if v.relation is not None and v.relation.closes_predecessor and v.predecessor_id:
                successors.setdefault(v.predecessor_id, []).append(v)
        snapshots = {v.version_id: v for v in self._store.versions_by_id(snap_ids)}
        by_id = {r.derived_id: r for r in records}
        memo: dict[str, tuple[str, ...]] = {}

        def reasons_for(record: DerivationRecord, seen: frozenset[str]) -> tuple[str, ...]:
            if record.derived_id in memo:
                return memo[record.derived_id]
            found: list[str] = []
            for source in record.sources:
                if source.kind == "document":
                    for s in successors.get(source.id, []):
                        if s.known_from > record.known_at:
                            found.append(
                                f"document {source.id} was {_PAST[s.relation.value]} by "
                                f"{s.label} ({s.version_id}), published {s.published}"
                            )
                elif source.kind == "snapshot":
                    snap = snapshots.get(source.id)
                    if snap is not None and snap.known_to is not None and (
                        snap.known_to > record.known_at
                    ):
                        found.append(f"snapshot {source.id} was replaced on {snap.known_to}")
                elif source.id in by_id and source.id not in seen:
                    upstream = reasons_for(by_id[source.id], seen | {record.derived_id})
                    if upstream:
                        found.append(f"derived from stale {source.id}")
            memo[record.derived_id] = tuple(found)
            return memo[record.derived_id]

        return [
            StaleItem(r, reasons)
            for r in records
            if (reasons := reasons_for(r, frozenset()))
        ]
