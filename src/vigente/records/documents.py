"""Value types of the document-lineage domain: versions, derivations, review proposals.

These are what the :class:`~vigente.store.Store` persists for the domain; the behaviour lives in
``documents.py`` (writes), ``in_force.py`` (evidence), ``derivations.py`` and ``review.py``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from vigente.errors import InvalidInput
from vigente.records.relations import Relation, parse_relation
from vigente.records.values import Scope
from vigente.time import Instant

__all__ = [
    "DerivationRecord",
    "DocumentVersion",
    "ProposalRecord",
    "Relation",
    "ReviewEvent",
    "SourceRef",
    "parse_relation",
]


@dataclass(frozen=True, slots=True)
class DocumentVersion:
    """One immutable version of a document lineage.

    ``version_id`` is carried by every chunk derived from it. ``published`` is when it could be
    known (the knowledge axis); ``valid_from`` is its entry into force; ``valid_to`` is the end
    stated at publication (usually open — a successor closes it later).
    """

    version_id: str
    lineage_id: str
    scope: Scope
    external_id: str | None
    reference: str | None
    title: str | None
    text: str
    source_url: str | None
    published: Instant
    valid_from: Instant
    valid_to: Instant | None
    relation: Relation | None
    predecessor_id: str | None
    #: When the store learned the version, when that is after ``published``: a version recorded
    #: behind the answered horizon (vigente.kernel.horizon) is known from its recording, so that
    #: no answer already given changes. ``None``: known from its publication.
    learned: Instant | None = None

    @property
    def known_from(self) -> Instant:
        """Where the version starts on the knowledge axis: its publication, or its recording
        when that came after an answer as known later than the publication."""
        return self.published if self.learned is None else self.learned

    @property
    def role(self) -> str:
        """How the version takes part in "what is in force": text, supplement or revocation."""
        if self.relation is Relation.REVOKES:
            return "revocation"
        if self.relation is Relation.SUPPLEMENTS:
            return "supplement"
        return "text"

    @property
    def label(self) -> str:
        return self.reference or self.title or self.external_id or self.version_id

    def claim_json(self) -> str:
        """The kernel value of this version's claim to be in force."""
        return json.dumps(
            {"document_version": self.version_id, "role": self.role},
            sort_keys=True,
            separators=(",", ":"),
        )

    def as_dict(self, *, with_text: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = {
            "version_id": self.version_id,
            "lineage_id": self.lineage_id,
            "scope": self.scope.as_dict(),
            "external_id": self.external_id,
            "reference": self.reference,
            "title": self.title,
            "source_url": self.source_url,
            "published": self.published.isoformat(),
            "valid_from": self.valid_from.isoformat(),
            "valid_to": None if self.valid_to is None else self.valid_to.isoformat(),
            "relation": None if self.relation is None else self.relation.value,
            "predecessor_id": self.predecessor_id,
        }
        if self.learned is not None:
            result["learned"] = self.learned.isoformat()
        if with_text:
            result["text"] = self.text
        return result


def document_version_id(
    lineage_id: str, scope: Scope, identity: str, valid_from: Instant, published: Instant
) -> str:
    """A deterministic id, so that re-importing the same source gives the same ids."""
    key = "\x1f".join(
        [lineage_id, scope.key, identity, str(valid_from.micros), str(published.micros)]
    )
    return "dv-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class SourceRef:
    """What a derived item came from: a document version, a kernel snapshot or another derived
    item (for transitive invalidation)."""

    kind: str  # "document" | "snapshot" | "derived"
    id: str

    KINDS = ("document", "snapshot", "derived")

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise InvalidInput(
                f"unknown source kind {self.kind!r}: use one of {', '.join(self.KINDS)}"
            )


@dataclass(frozen=True, slots=True)
class DerivationRecord:
    """A chunk, summary, cached answer or memory and the versions it was derived from, computed
    at ``(valid_at, known_at)``."""

    derived_id: str
    kind: str
    label: str
    sources: tuple[SourceRef, ...]
    valid_at: Instant
    known_at: Instant
    created_at: Instant
    content: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "derived_id": self.derived_id,
            "kind": self.kind,
            "label": self.label,
            "sources": [{"kind": s.kind, "id": s.id} for s in self.sources],
            "valid_at": self.valid_at.isoformat(),
            "known_at": self.known_at.isoformat(),
            "created_at": self.created_at.isoformat(),
        }


@dataclass(frozen=True, slots=True)
class ProposalRecord:
    """A bare document waiting for review, with the fields the extractor proposed."""

    proposal_id: str
    filename: str | None
    text: str
    proposed: dict[str, Any]
    created_at: Instant


@dataclass(frozen=True, slots=True)
class ReviewEvent:
    """One step of a proposal's review (append-only): edit, approve or reject."""

    proposal_id: str
    action: str  # "proposed" | "edited" | "approved" | "rejected"
    fields: dict[str, Any]
    note: str | None
    at: Instant
    version_id: str | None = None  # the document version an approval created
