"""The document domain's contracts: lineages with their derived copies, and the review queue."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from vigente.records.documents import DerivationRecord, DocumentVersion, ProposalRecord, ReviewEvent
from vigente.records.values import Scope
from vigente.store.contracts.transaction import Transactional

__all__ = ["DocumentLog", "ReviewLog"]


class DocumentLog(Transactional):
    """Document lineages (:mod:`vigente.evidence.documents`) and the copies derived from them."""

    @abstractmethod
    def append_document_version(self, version: DocumentVersion) -> None:
        """Store a new, immutable document version."""

    @abstractmethod
    def document_versions_by_id(self, version_ids: Sequence[str]) -> list[DocumentVersion]:
        """Document versions by id (unknown ids are skipped), in insertion order."""

    @abstractmethod
    def document_versions(self, lineage_id: str, scope: Scope | None) -> list[DocumentVersion]:
        """Every version of a document lineage (one scope, or all), in insertion order."""

    @abstractmethod
    def document_successors(self, version_ids: Sequence[str]) -> list[DocumentVersion]:
        """Versions whose predecessor is one of ``version_ids``, in insertion order."""

    @abstractmethod
    def append_derivation(self, record: DerivationRecord) -> None:
        """Store a derived item and its sources."""

    @abstractmethod
    def derivations(self) -> list[DerivationRecord]:
        """Every derived item, in insertion order."""

    @abstractmethod
    def derivations_by_id(self, derived_ids: Sequence[str]) -> list[DerivationRecord]:
        """Derived items by id (unknown ids are skipped)."""


class ReviewLog(Transactional):
    """The review queue: proposed versions and the review steps taken on them."""

    @abstractmethod
    def append_proposal(self, proposal: ProposalRecord) -> None:
        """Store a proposal extracted from a bare document."""

    @abstractmethod
    def proposals(self) -> list[ProposalRecord]:
        """Every proposal, in insertion order."""

    @abstractmethod
    def append_review_event(self, event: ReviewEvent) -> None:
        """Append one review step (edit, approve, reject) of a proposal."""

    @abstractmethod
    def review_events(self, proposal_id: str | None) -> list[ReviewEvent]:
        """The review steps of one proposal (or all), in order."""
