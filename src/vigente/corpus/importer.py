"""Import a real versioned corpus into document lineages, replaying its knowledge steps.

Each version becomes an immutable document version (the source's lineage id and external id
kept) and its claim to be in force is written as the source tells it: open-ended from its
publication, closed from the day its end became known (its successor's publication). Nothing is
smoothed over: a gap between versions stays a gap (the store answers ``missing`` there), an
overlap stays an overlap (``conflict``), and every anomaly the reader found is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from vigente.corpus.reader import CorpusReader, CorpusReport, LineageImport
from vigente.evidence.documents import Documents, claim_step, withdrawal_step
from vigente.kernel.horizon import record_backfill
from vigente.records.documents import DocumentVersion, Relation, document_version_id
from vigente.records.values import Scope
from vigente.store.base import Write
from vigente.time import Instant

if TYPE_CHECKING:
    from vigente.evidence.documents import Documents
    from vigente.store.base import Store

__all__ = ["BATCH_VERSIONS", "CorpusImport", "CorpusTarget", "import_corpus"]

#: Versions written together by default (each brings one or two knowledge steps; the kernel
#: writes up to 5,000 statements a round).
BATCH_VERSIONS = 5_000


@dataclass(frozen=True, slots=True)
class CorpusImport:
    """What an import did, and the reader's complete anomaly report."""

    report: CorpusReport
    lineages: int
    versions_added: int
    versions_unchanged: int
    knowledge_steps: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "lineages": self.lineages,
            "versions_added": self.versions_added,
            "versions_unchanged": self.versions_unchanged,
            "knowledge_steps": self.knowledge_steps,
            "report": self.report.as_dict(),
        }


def _versions(lineage: LineageImport) -> list[DocumentVersion]:
    """Document versions of one lineage, each amending the one before it."""
    scope = Scope()
    result: list[DocumentVersion] = []
    for record in lineage.versions:
        predecessor = result[-1] if result else None
        published_with_end = record.end_known_from is not None and (
            record.end_known_from == record.known_from
        )
        result.append(
            DocumentVersion(
                version_id=document_version_id(
                    record.lineage_id, scope, record.external_id, record.valid_from,
                    record.known_from,
                ),
                lineage_id=record.lineage_id,
                scope=scope,
                external_id=record.external_id,
                reference=record.reference,
                title=record.title,
                text=record.text or "",
                source_url=record.url,
                published=record.known_from,
                valid_from=record.valid_from,
                valid_to=record.valid_to if published_with_end else None,
                relation=None if predecessor is None else Relation.AMENDS,
                predecessor_id=None if predecessor is None else predecessor.version_id,
            )
        )
    return result


class CorpusTarget(Protocol):
    """What an import writes to: a store and its document service (a ``Vigente`` is one)."""

    @property
    def store(self) -> Store: ...

    @property
    def documents(self) -> Documents: ...


def import_corpus(
    vg: CorpusTarget,
    reader: CorpusReader,
    *,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    batch: int = BATCH_VERSIONS,
) -> CorpusImport:
    """Import every lineage the reader yields (the first ``limit`` ones), all or nothing.

    Lineages are written in batches of about ``batch`` versions: one read of the batch's stored
    versions, then every claim and withdrawal through the kernel's bulk rounds (on PostgreSQL,
    one statement a kind per round instead of several a step). The result is the one a
    step-by-step import gives, whatever the batch size."""
    counts = _Counts()
    held: list[LineageImport] = []
    lineages = held_versions = 0

    def flush() -> None:
        nonlocal held_versions
        if not held:
            return
        _write(vg.documents, held, counts, span)
        if progress is not None:
            for done in range(lineages - len(held) + 1, lineages + 1):
                progress(done)
        held.clear()
        held_versions = 0

    span: list[Instant] = []  # the earliest and latest knowledge times written
    with vg.store.transaction():
        for lineage in reader:
            if limit is not None and lineages >= limit:
                break
            lineages += 1
            held.append(lineage)
            held_versions += len(lineage.versions)
            if held_versions >= batch:
                flush()
        flush()
        if counts.steps:
            # The corpus is history learned long ago: a backfill, recorded for audits.
            record_backfill(vg.store, "corpus", f"corpus import of {lineages} lineages",
                            counts.steps, span[0], span[1])
    return CorpusImport(reader.report(), lineages, counts.added, counts.unchanged, counts.steps)


@dataclass(slots=True)
class _Counts:
    added: int = 0
    unchanged: int = 0
    steps: int = 0


def _write(documents: Documents, lineages: list[LineageImport], counts: _Counts,
           span: list[Instant]) -> None:
    """Store the lineages' new versions, then replay their knowledge steps in one bulk write."""
    versions = [_versions(lineage) for lineage in lineages]
    stored = iter(documents.store_versions([v for of_lineage in versions for v in of_lineage]))
    writes: list[Write] = []
    for lineage, of_lineage in zip(lineages, versions, strict=True):
        by_external = {}
        fresh = set()
        for version in of_lineage:
            by_external[version.external_id] = version
            if next(stored):
                fresh.add(version.version_id)
                counts.added += 1
            else:
                counts.unchanged += 1
        claimed: set[str] = set()
        for step in lineage.knowledge_steps():
            version = by_external[step.external_id]
            if version.version_id not in fresh:
                continue  # imported before: its knowledge steps are already recorded
            known_at = max(step.known_at, version.published)
            if version.version_id not in claimed:
                writes.append(claim_step(version, step.valid_from, step.valid_to, known_at))
                claimed.add(version.version_id)
            elif step.valid_to is not None:
                writes.append(withdrawal_step(version, step.valid_to, known_at))
            counts.steps += 1
    if writes:
        times = [w.known_at for w in writes] + span
        span[:] = [min(times), max(times)]
    documents.apply_steps(writes, backfill=True)
