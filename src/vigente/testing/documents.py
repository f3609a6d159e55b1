"""Conformance of the document domain's contracts (:mod:`vigente.store.contracts.documents`):
document versions with their successors, derived copies, and the review queue's proposals and
steps. Every record reads back as it was appended, in insertion order."""

from __future__ import annotations

from typing import ClassVar

from vigente.records.documents import (
    DerivationRecord,
    DocumentVersion,
    ProposalRecord,
    Relation,
    ReviewEvent,
    SourceRef,
)
from vigente.records.values import Scope
from vigente.store.contracts import DocumentLog, ReviewLog
from vigente.testing.base import Conformance, Contracts, at

__all__ = ["DocumentLogConformance", "ReviewLogConformance"]

L = "circulars/onboarding"
EU = Scope.of({"region": "eu"})
GLOBAL = Scope()


def _version(version_id: str, valid_from: str, *, predecessor: str | None = None,
             relation: Relation | None = None, scope: Scope = GLOBAL,
             lineage: str = L) -> DocumentVersion:
    return DocumentVersion(
        version_id=version_id, lineage_id=lineage, scope=scope, external_id=f"ext-{version_id}",
        reference=f"Circular {version_id}", title="Remote onboarding",
        text=f"The text of {version_id}: Zoë, 東京.", source_url=f"https://example.org/{version_id}",
        published=at("2024-01-10"), valid_from=at(valid_from), valid_to=None, relation=relation,
        predecessor_id=predecessor,
    )


class DocumentLogConformance(Conformance):
    """Document versions, their successors and the copies derived from them."""

    contracts: ClassVar[Contracts] = (DocumentLog,)

    def test_a_version_reads_back_as_appended(self, store: DocumentLog) -> None:
        first = _version("v1", "2024-02-01")
        learned = DocumentVersion(
            "v2", L, EU, None, None, None, "Amended.", None, at("2024-05-01T09:30:00.000001Z"),
            at("2024-06-01"), at("2025-01-01"), Relation.AMENDS, "v1",
            learned=at("2024-05-02T10:00:00Z"))
        with store.transaction():
            store.append_document_version(first)
            store.append_document_version(learned)
        assert store.document_versions_by_id(["v2", "unknown", "v1"]) == [first, learned]

    def test_the_versions_of_a_lineage_in_one_scope_or_all(self, store: DocumentLog) -> None:
        versions = [_version("v1", "2024-02-01"), _version("v2", "2024-03-01", scope=EU),
                    _version("o1", "2024-02-01", lineage="other"), _version("v3", "2024-04-01")]
        with store.transaction():
            for version in versions:
                store.append_document_version(version)
        v1, v2, _, v3 = versions
        assert store.document_versions(L, None) == [v1, v2, v3]
        assert store.document_versions(L, Scope()) == [v1, v3]
        assert store.document_versions(L, EU) == [v2]
        assert store.document_versions("none", None) == []

    def test_successors_are_the_versions_naming_a_predecessor(self, store: DocumentLog) -> None:
        base = _version("v1", "2024-02-01")
        amended = _version("v2", "2024-03-01", predecessor="v1", relation=Relation.AMENDS)
        annex = _version("v3", "2024-03-15", predecessor="v1", relation=Relation.SUPPLEMENTS)
        repeal = _version("v4", "2024-09-01", predecessor="v2", relation=Relation.REVOKES)
        with store.transaction():
            for version in (base, amended, annex, repeal):
                store.append_document_version(version)
        assert store.document_successors(["v1"]) == [amended, annex]
        assert store.document_successors(["v2", "v3"]) == [repeal]
        assert store.document_successors(["v4", "unknown"]) == []

    def test_derivations_read_back_in_insertion_order(self, store: DocumentLog) -> None:
        with store.transaction():
            store.append_document_version(_version("v1", "2024-02-01"))
        records = [
            DerivationRecord(f"d{n}", kind, f"label {n}",
                             (SourceRef("document", "v1"), SourceRef("snapshot", f"1.{n}")),
                             at("2024-03-01"), at("2024-03-02T08:00:00Z"), at("2024-03-03"),
                             content=None if n == 1 else "a summary: Zoë")
            for n, kind in ((1, "chunk"), (2, "summary"))]
        derived = DerivationRecord("d3", "answer", "from a summary", (SourceRef("derived", "d2"),),
                                   at("2024-03-01"), at("2024-03-02"), at("2024-03-04"))
        with store.transaction():
            for record in (*records, derived):
                store.append_derivation(record)
        assert store.derivations() == [*records, derived]
        by_id = store.derivations_by_id(["d3", "unknown", "d1"])  # in any order
        assert sorted(by_id, key=lambda record: record.derived_id) == [records[0], derived]


class ReviewLogConformance(Conformance):
    """The review queue: proposals, and the steps taken on them in order."""

    contracts: ClassVar[Contracts] = (ReviewLog,)

    def test_proposals_read_back_in_insertion_order(self, store: ReviewLog) -> None:
        proposals = [
            ProposalRecord(f"rev-{n}", None if n == 2 else f"doc-{n}.txt", f"Circular {n}/2025",
                           {"fields": {"reference": {"value": f"Circular {n}/2025",
                                                     "confidence": 0.9}}},
                           at(f"2025-01-0{n}T10:00:00Z"))
            for n in (2, 1, 3)]
        with store.transaction():
            for proposal in proposals:
                store.append_proposal(proposal)
        assert store.proposals() == proposals

    def test_review_steps_are_kept_in_order(self, store: ReviewLog) -> None:
        with store.transaction():
            for n in (1, 2):
                store.append_proposal(ProposalRecord(f"rev-{n}", None, "text", {},
                                                     at("2025-01-01")))
        steps = [
            ReviewEvent("rev-1", "edited", {"title": "Onboarding"}, "a typo", at("2025-01-02")),
            ReviewEvent("rev-2", "rejected", {}, None, at("2025-01-02")),
            ReviewEvent("rev-1", "approved", {}, None, at("2025-01-03"), version_id="v1"),
        ]
        for step in steps:
            with store.transaction():
                store.append_review_event(step)
        assert store.review_events(None) == steps
        assert store.review_events("rev-1") == [steps[0], steps[2]]
        assert store.review_events("unknown") == []
